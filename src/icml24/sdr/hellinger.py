r"""The nearest-neighbour Hellinger correlation of Hong, Kim & Song (ICML 2024), as in the official ``HCXY``.

For a sample ``(x_i, y_i)``, ``i = 1..n``:

.. code-block:: text

    u_i = rank(x_i) / (n + 1),   v_i = rank(y_i) / (n + 1)        # copula scale (average ranks on ties)
    R_i = min_{j != i} ||(u_i, v_i) - (u_j, v_j)||                # 1-NN distance
    B   = 2 sqrt(n - 1) mean_i R_i                                # estimates the Bhattacharyya coefficient
    eta = 2 sqrt(B^4 + sqrt(4 - 3 B^4) - 2) / B^2                 # Hellinger correlation, decreasing in B

``B`` is about 1 under independence and drops towards 0 as ``y`` becomes a function of ``x``; the paper
minimizes ``B`` over ``x = beta^T X``. Without the Beta(6,6) boundary correction and Legendre normalization of
the full HellCor estimator (the official SDR code does not use them either), ``B`` can exceed 1 by sampling
noise; ``eta`` is then reported as 0.

Two exact 1-NN searches, both vectorized: ``"kdtree"`` (``scipy.spatial.cKDTree``) and ``"sweep"``, which
sorts by ``u`` and scans a window of ``w`` neighbours on each side in one array operation, then finishes the
few points whose window does not certify the minimum with a full row. They agree to rounding.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import rankdata

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_finite, check_fitted

ALGORITHMS = ("kdtree", "sweep")


def copula_ranks(values) -> np.ndarray:
    """``rank(values) / (n + 1)`` with average ranks on ties (R's ``rank``)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    return rankdata(values) / (values.shape[0] + 1)


def default_window(n: int) -> int:
    """``ceil(1.2 sqrt(n))``: under independence a 1-NN is farther than ``r`` ranks with probability about
    ``exp(-pi r^2 / n)``, so about 1% of the points need the full-row fallback (24 at ``n = 400``)."""
    return max(8, math.ceil(1.2 * math.sqrt(n)))


def nn_distances(u, v, algorithm: str = "kdtree", window: int | None = None) -> np.ndarray:
    """Distance from each point ``(u_i, v_i)`` to its nearest other point (exact; ``n >= 2``).

    ``window`` is the sweep's half-width in points (default ``default_window``); it changes speed only.
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    window = default_window(u.shape[0]) if window is None else window
    window = max(1, min(int(window), u.shape[0] - 1))
    if u.shape[0] < 2:
        raise ValueError("the nearest-neighbour estimator needs at least 2 points")
    if algorithm == "kdtree":
        points = np.column_stack([u, v])
        return cKDTree(points).query(points, k=2)[0][:, 1]
    if algorithm == "sweep":
        order = np.argsort(u, kind="stable")
        out = np.empty_like(u)
        out[order] = _sweep_sorted(u[order], v[order], window)
        return out
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def _windows(padded: np.ndarray, rows: int, width: int) -> np.ndarray:
    """Read-only view ``[rows, width]`` of a contiguous array: row ``j`` is ``padded[j : j + width]``
    (``sliding_window_view`` without its per-call overhead, which dominated at ``n = 400``)."""
    size = padded.itemsize
    return np.ndarray(shape=(rows, width), dtype=padded.dtype, buffer=padded, strides=(size, size))


def _window_base(u: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """For points sorted by ``u``: squared ``u`` differences to the ``w`` neighbours on each side ``[n, 2w + 1]``
    (``inf`` at the point itself and beyond the ends), and ``gap [n]``, the ``u`` distance to the nearest point
    outside that window (``inf`` if none)."""
    n, w = u.shape[0], window
    pad_u = np.concatenate([np.full(w, -np.inf), u, np.full(w, np.inf)])
    du = _windows(pad_u, n, 2 * w + 1) - u[:, None]
    base = du * du
    base[:, w] = np.inf
    gap = np.full(n, np.inf)
    if n > w + 1:
        outside = u[w + 1:] - u[: n - w - 1]  # u distance between j and j + w + 1
        gap[w + 1:] = outside
        gap[: n - w - 1] = np.minimum(gap[: n - w - 1], outside)
    return base, gap


def _sweep_sorted(u: np.ndarray, v: np.ndarray, window: int) -> np.ndarray:
    """1-NN distances of points sorted by ``u``: a window of ``w`` on each side, then full rows where needed.

    A point outside the window is at least ``gap`` away in ``u`` alone, so the window's minimum is exact when
    it is ``<= gap``; the other points get a full row.
    """
    n = u.shape[0]
    w = max(1, min(int(window), n - 1))
    base_d2, gap = _window_base(u, w)
    pad_v = np.concatenate([np.zeros(w), v, np.zeros(w)])
    dv = _windows(pad_v, n, 2 * w + 1) - v[:, None]
    best = (dv * dv + base_d2).min(axis=1)
    open_rows = np.flatnonzero(best > gap * gap)
    if open_rows.size:  # exact fallback: full rows for the points the window cannot certify
        rows = (u[open_rows, None] - u[None, :]) ** 2 + (v[open_rows, None] - v[None, :]) ** 2
        rows[np.arange(open_rows.size), open_rows] = np.inf
        best[open_rows] = rows.min(axis=1)
    return np.sqrt(best)


def bhattacharyya_from_distances(distances: np.ndarray) -> float:
    """``B = 2 sqrt(n - 1) mean R_i`` (the official ``HCXY`` value, which the paper minimizes)."""
    n = distances.shape[0]
    return float(2.0 * math.sqrt(n - 1) * distances.mean())


def hellinger_from_bhattacharyya(b: float) -> float:
    """``eta = 2 sqrt(B^4 + sqrt(4 - 3 B^4) - 2) / B^2`` on ``0 < B < 1``; 1 at ``B <= 0`` and 0 at ``B >= 1``."""
    if b <= 0:
        return 1.0
    if b >= 1:
        return 0.0
    b4 = b ** 4
    return float(2.0 * math.sqrt(max(b4 + math.sqrt(4.0 - 3.0 * b4) - 2.0, 0.0)) / b ** 2)


def bhattacharyya(x, y, algorithm: str = "kdtree") -> float:
    """The nearest-neighbour estimate ``B`` of the Bhattacharyya coefficient of the copula of ``(x, y)``."""
    check_finite("x", x)
    check_finite("y", y)
    for name, value in (("x", x), ("y", y)):
        if np.ndim(value) > 1 and np.shape(value)[1] != 1:
            raise ValueError(f"{name} must be one scalar sample (1-d), got shape {np.shape(value)}")
    u, v = copula_ranks(x), copula_ranks(y)
    if u.shape != v.shape:
        raise ValueError(f"x and y must have the same length, got {u.shape[0]} and {v.shape[0]}")
    return bhattacharyya_from_distances(nn_distances(u, v, algorithm))


def hellinger_correlation(x, y, algorithm: str = "kdtree") -> float:
    """The nearest-neighbour Hellinger correlation ``eta(x, y)`` in ``[0, 1]`` (see the module docstring)."""
    return hellinger_from_bhattacharyya(bhattacharyya(x, y, algorithm))


class HellingerCorrelation(FittedAttributes, Estimator):
    """Nearest-neighbour Hellinger correlation between two scalar samples (estimator face).

    Args:
        algorithm (str): ``"kdtree"`` (default) or ``"sweep"``; both are exact.

    Attributes (after ``fit``):
        bhattacharyya_ (float): ``B``; correlation_ (float): ``eta``; distances_ (ndarray [n]): ``R_i``.
    """

    def __init__(self, algorithm: str = "kdtree"):
        self.algorithm = algorithm

    def fit(self, x, y):
        check_finite("x", x)
        check_finite("y", y)
        u, v = copula_ranks(x), copula_ranks(y)
        if u.shape != v.shape:
            raise ValueError(f"x and y must have the same length, got {u.shape[0]} and {v.shape[0]}")
        self.distances_ = nn_distances(u, v, self.algorithm)
        self.bhattacharyya_ = bhattacharyya_from_distances(self.distances_)
        self.correlation_ = hellinger_from_bhattacharyya(self.bhattacharyya_)
        return self

    def score(self) -> float:
        check_fitted(self, "correlation_")
        return self.correlation_


class ProjectionObjective:
    """``beta -> B(X beta, y)``, the function the paper minimizes over the unit sphere (the official ``HCXY``).

    The ranks of ``y`` are computed once; each call sorts ``X beta`` and runs the 1-NN search. When ``X beta``
    has no ties its ranks are ``1..n``, and the sweep runs in exact integer arithmetic on doubled ranks
    (``2 rank``, integers even for average ranks of tied ``y``): squared distances are integers, so the result
    equals the k-d tree's to rounding. ``evaluations`` counts calls.
    """

    KIND = "component"  # icml24._contract

    def __init__(self, X: np.ndarray, y: np.ndarray, algorithm: str = "sweep", window: int | None = None):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        self.X = check_finite("X", np.asarray(X, dtype=np.float64))
        self.v = copula_ranks(check_finite("y", np.asarray(y, dtype=np.float64)))
        self.algorithm = algorithm
        self.evaluations = 0
        n = self.X.shape[0]
        window = default_window(n) if window is None else window
        self.window = w = max(1, min(int(window), n - 1))
        dtype = np.int32 if 8 * n * n < 2 ** 28 else np.int64
        self._big = dtype(2 ** 29 if dtype == np.int32 else 2 ** 61)
        self._ranks2 = np.rint(2 * self.v * (n + 1)).astype(dtype)  # doubled ranks of y
        offsets = 2 * np.arange(-w, w + 1, dtype=dtype)
        base = np.broadcast_to(offsets * offsets, (n, 2 * w + 1)).copy()
        position = np.arange(n)[:, None] + np.arange(-w, w + 1)[None, :]
        base[(position < 0) | (position >= n) | (position == np.arange(n)[:, None])] = self._big
        self._base = base
        self._gap2 = (2 * (w + 1)) ** 2 if n > w + 1 else self._big
        self._scale = 2.0 * math.sqrt(n - 1) / (2.0 * (n + 1) * n)  # B = scale * sum sqrt(d2) on doubled ranks
        self._positions = np.arange(n, dtype=dtype)
        self._pad = np.zeros(n + 2 * w, dtype=dtype)
        self._buffer = np.empty((n, 2 * w + 1), dtype=dtype)

    def __call__(self, beta: np.ndarray) -> float:
        self.evaluations += 1
        beta = np.asarray(beta, dtype=np.float64)
        if not np.isfinite(beta).all():
            return 1e4  # the official code's value for an invalid direction
        projection = self.X @ beta
        if self.algorithm == "kdtree":
            return bhattacharyya_from_distances(nn_distances(copula_ranks(projection), self.v, "kdtree"))
        order = np.argsort(projection)
        ordered = projection[order]
        if not np.all(ordered[1:] > ordered[:-1]):  # ties: average ranks, general (float) sweep
            return bhattacharyya_from_distances(nn_distances(copula_ranks(projection), self.v, "sweep",
                                                             self.window))
        v = self._ranks2[order]
        w, n = self.window, v.shape[0]
        self._pad[w:w + n] = v
        d2 = self._buffer  # in place: this call allocates only its [n] results
        np.subtract(_windows(self._pad, n, 2 * w + 1), v[:, None], out=d2)
        np.multiply(d2, d2, out=d2)
        np.add(d2, self._base, out=d2)
        best = d2.min(axis=1)
        open_rows = np.flatnonzero(best > self._gap2)
        if open_rows.size:  # exact fallback: full rows for the points the window cannot certify
            du = 2 * (self._positions[open_rows, None] - self._positions[None, :])
            dv = v[open_rows, None] - v[None, :]
            rows = du * du + dv * dv
            rows[np.arange(open_rows.size), open_rows] = self._big
            best[open_rows] = rows.min(axis=1)
        return float(self._scale * np.sqrt(best).sum())
