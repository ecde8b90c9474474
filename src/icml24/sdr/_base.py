"""What every SDR estimator shares: input checks, whitening, slicing, and the scikit-learn transformer face."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import validate_data

from icml24._validation import FittedAttributes, check_finite, check_fitted


class DirectionEstimator(ClassNamePrefixFeaturesOutMixin, FittedAttributes, TransformerMixin, BaseEstimator):
    """A supervised linear reduction ``X -> X B``: ``fit(X, y)`` learns ``directions_`` ``B [p, d]``.

    Subclasses implement ``_fit_directions(X, y) -> B`` on validated float arrays; the base class checks the
    inputs (NaN/inf named by argument), normalizes each column of ``B`` to unit length with its largest entry
    positive (a direction has no sign), and projects in ``transform``. ``get_feature_names_out()`` names the
    ``d`` reduced columns after the class (``sir0``, ``sir1``, ...), so ``set_output(transform="pandas")`` works.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _check_xy(self, X, y) -> tuple[np.ndarray, np.ndarray]:
        check_finite("X", X)
        check_finite("y", y)
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_samples=3)
        y = np.asarray(y, dtype=np.float64).ravel()
        if np.ptp(y) == 0:
            raise ValueError("y is constant: a constant response carries no direction; pass a varying response")
        return X, y

    @property
    def _n_features_out(self) -> int:
        """How many columns ``transform`` returns (``d``), for ``get_feature_names_out``."""
        return self.directions_.shape[1]

    def fit(self, X, y):
        """Learn the directions from predictors ``X [n, p]`` and a scalar response ``y [n]``."""
        X, y = self._check_xy(X, y)
        self.directions_ = normalize_directions(self._fit_directions(X, y))
        return self

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def transform(self, X) -> np.ndarray:
        """The reduced predictors ``X B [n, d]``."""
        check_fitted(self, "directions_")
        check_finite("X", X)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.directions_


def check_integer(name: str, value, low: int) -> int:
    """An integer (not a bool, not 1.5) of at least ``low``, or a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_number(name: str, value, allow_zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with ``allow_zero``), or a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    check_finite(name, value)
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return float(value)


def normalize_directions(directions: np.ndarray) -> np.ndarray:
    """Unit-length columns, each with its largest-magnitude entry positive (``b`` and ``-b`` are one direction)."""
    directions = np.asarray(directions, dtype=np.float64)
    if directions.ndim == 1:
        directions = directions[:, None]
    norms = np.linalg.norm(directions, axis=0)
    directions = directions / np.where(norms > 0, norms, 1.0)
    signs = np.sign(directions[np.abs(directions).argmax(axis=0), np.arange(directions.shape[1])])
    return directions * np.where(signs == 0, 1.0, signs)


def whiten(X: np.ndarray, floor: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """``(Z, S)``: ``Z = (X - mean) S`` with ``S = Sigma^{-1/2}`` (sample covariance, ``n - 1``), so ``cov Z = I``.

    A direction ``v`` found on ``Z`` is ``S v`` on ``X``. Eigenvalues below ``floor`` times the largest are
    treated as zero (a pseudo-inverse square root), so collinear predictors do not blow up.
    """
    centered = X - X.mean(axis=0)
    cov = centered.T @ centered / (X.shape[0] - 1)
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    keep = values > floor * max(values.max(), 0.0)
    inv_sqrt = np.zeros_like(values)
    inv_sqrt[keep] = values[keep] ** -0.5
    root = (vectors * inv_sqrt) @ vectors.T
    return centered @ root, root


def top_eigenvectors(matrix: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` eigenvectors of a symmetric matrix with the largest eigenvalues, as columns."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return vectors[:, np.argsort(values)[::-1][:k]]


def slice_labels(y: np.ndarray, n_slices: int, sizes: str = "balanced") -> np.ndarray:
    """Slice index (0..h-1) of each response, by the order of ``y``; tied responses share a slice.

    ``sizes="balanced"``: ``h`` slices whose sizes differ by at most one (ours for SIR and SAVE; the ``dr``
    package instead cuts slices of ``floor(n / h)`` while more than two responses remain).
    ``sizes="floor"``: ``h - 1`` slices of ``floor(n / h)`` and the rest in the last (the ``discretize`` of the
    official directional-regression code). A response with at most ``h`` distinct
    values gets one slice per value.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    order = np.argsort(y)  # one sort; ties need no stable order (a tie group is placed by its first member)
    sorted_y = y[order]
    starts = np.r_[True, sorted_y[1:] != sorted_y[:-1]]  # a distinct value begins here (sorted order)
    value_of = np.cumsum(starts) - 1  # index of each sorted response's distinct value
    if value_of[-1] + 1 <= n_slices:
        return _unsort(value_of, order)
    if sizes == "balanced":
        counts = np.full(n_slices, n // n_slices)
        counts[: n % n_slices] += 1
    elif sizes == "floor":
        counts = np.full(n_slices, n // n_slices)
        counts[-1] = n - (n_slices - 1) * (n // n_slices)
    else:
        raise ValueError(f"sizes must be 'balanced' or 'floor', got {sizes!r}")
    by_position = np.repeat(np.arange(n_slices), counts)
    # a tie group takes the slice of its first member in sorted order
    sorted_labels = by_position[np.flatnonzero(starts)][value_of]
    # renumber 0, 1, ... if ties emptied a slice (sorted_labels never decreases)
    sorted_labels = np.cumsum(np.r_[False, sorted_labels[1:] != sorted_labels[:-1]])
    return _unsort(sorted_labels, order)


def _unsort(sorted_values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``values`` with ``values[order] = sorted_values``, as int64."""
    values = np.empty(order.shape[0], dtype=np.int64)
    values[order] = sorted_values
    return values


def slice_moments(Z: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per slice: proportion ``p_h [h]``, mean ``m_h [h, p]`` and covariance ``V_h [h, p, p]`` (``n_h - 1``;
    zero for a one-point slice; an empty slice, a label no row has, gets ``p_h = 0`` and zero moments).

    The rows are grouped by slice with one sort, then each slice's moments come from its contiguous block (a loop
    over the ``h`` slices, O(n p^2) in all).
    """
    n, p = Z.shape
    h = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=h)
    grouped = Z[np.argsort(labels)]  # slice 0's rows, then slice 1's, ...
    ends = np.cumsum(counts)
    means, covs = np.zeros((h, p)), np.zeros((h, p, p))
    for k in np.flatnonzero(counts):
        block = grouped[ends[k] - counts[k]: ends[k]]
        means[k] = block.mean(axis=0)  # m_h = (1 / n_h) sum_{i in h} z_i
        centered = block - means[k]
        covs[k] = centered.T @ centered / max(counts[k] - 1, 1)  # V_h = sum_i (z_i - m_h)(z_i - m_h)^T / (n_h - 1)
    return counts / n, means, covs
