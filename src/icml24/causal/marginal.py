"""Huang et al.'s marginal-likelihood generalized score, as causal-learn computes it, in cached vectorized form.

``MarginalLikelihoodScore`` returns what causal-learn 0.1.4.8's ``local_score_marginal_general`` returns for the
array its ``ges`` passes (an ndarray), negated (ours: lower is better), without calling causal-learn, and faster:

- The child's features (Huang et al. 2018, Sec. 4.2: the eigen-features of the child's centred kernel) depend on the
  child alone and are cached per child; the parents' RBF Gram matrix (2.5 x median-heuristic widths, signal
  variance 1) depends on the parent set alone and is cached per set, shared by every child.
- Each evaluation of the GP negative log marginal likelihood in the noise is one Cholesky factor and one solve, where
  causal-learn also forms four explicit inverses and rebuilds the Gram matrix.
- causal-learn fits the noise with Rasmussen's conjugate-gradient ``minimize`` (at most 300 evaluations). On this
  objective its run is short and fixed: only the noise derivative is computed (the widths are fixed, Huang et al.
  Sec. 4.2.2) and its slopes ``(a.T * b)[0, 0]`` on column arrays read the first coordinate, a width whose
  derivative is 0, so every slope is 0, no line search passes its Wolfe test and the run is two line searches along
  the negative noise derivative. ``_two_line_searches`` is that procedure, written for the one moving coordinate.

The quirks are causal-learn's, reproduced because the point is the same score (and so the same CPDAG) in less time:
its centring ``H * Kx * H`` is elementwise on ndarrays, and its gradient's ``inv(L.T) * (inv(L) * I)`` keeps only
the diagonal 1 / L_ii^2 of the Cholesky factor L. Every cached quantity is computed with the same floating-point
operations as causal-learn's, so the Gram matrices and Cholesky factors are bit-identical; values differ from
causal-learn's only by the rounding of the solve (tests: relative 1e-9 on random pairs, equal CPDAGs).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve

from .scores import KernelScore

WIDTH_FACTOR = 2.5  # kernel widths are 2.5 x the median heuristic (child and parents)
NOISE_INIT = np.log(np.sqrt(0.1))  # the noise starts at log sigma = log sqrt(0.1) (numpy's log, as causal-learn)
MAX_FEATURES = 400  # at most min(400, n / 4) eigen-features of the child
EIGEN_THRESHOLD = 1e-5  # features with eigenvalue <= 1e-5 x the largest are dropped
EVALUATIONS_PER_SEARCH = 20  # minimize's MAX: evaluations per line search
EXTRAPOLATE, INSIDE = 3.0, 0.1  # minimize's EXT (step growth) and INT (bracket margin)


def _median_heuristic(column: np.ndarray) -> np.float64:
    """sqrt(0.5 median of the positive pairwise squared distances), as causal-learn computes it (upper triangle)."""
    sq = column * column
    dists = sq + sq.T - 2 * column * column.T
    dists = dists - np.tril(dists)
    positive = dists[dists > 0]
    if positive.size == 0:
        raise ValueError("a variable is constant: the median heuristic needs two distinct values (causal-learn's "
                         "score is nan there)")
    return np.sqrt(0.5 * np.median(positive))


def child_features(column: np.ndarray) -> np.ndarray:
    """The child's GP outputs Y (n x m): 2 sqrt(n) E diag(sqrt(lambda)) / sqrt(lambda_1) from the leading eigenpairs
    (lambda, E) of its RBF kernel (width 2.5 x median heuristic) under causal-learn's elementwise centring."""
    x = column.reshape(-1, 1)
    n = len(x)
    theta = 1 / (_median_heuristic(x) * WIDTH_FACTOR) ** 2
    sq = (x * x).ravel()
    dists = sq[:, None] + sq[None, :] - 2 * (x * x.T)
    dists[dists < 0] = 0
    kernel = np.exp(-dists * (theta / 2))
    centring = np.eye(n) - np.ones((n, n)) / n
    kernel = centring * kernel * centring  # causal-learn's H * Kx * H: elementwise on ndarrays
    count = min(MAX_FEATURES, n // 4)
    if count < 1 or count / n <= 0.04:
        raise ValueError(f"need 4 <= n < 10000 samples (causal-learn's dense eigendecomposition), got n = {n}")
    values, vectors = np.linalg.eig((kernel + kernel.T) / 2)  # causal-learn's eigdec (eig, sorted, first count)
    order = np.argsort(-values)
    top = -np.sort(-values)[:count]
    vectors = vectors[:, :count] if np.all(top == values[:count]) else vectors[:, order[:count]]
    top, vectors = top.astype(float), vectors.astype(float)
    kept = top > np.max(top) * EIGEN_THRESHOLD
    top, vectors = top[kept], vectors[:, kept]
    return 2 * np.sqrt(n) * vectors @ np.diag(np.sqrt(top)) / np.sqrt(top[0])


def parent_gram(parents: np.ndarray) -> np.ndarray:
    """The parents' squared-exponential ARD Gram matrix (widths 2.5 x median heuristic, signal variance 1); a constant
    (all-zero) parent with width e^100 when there is none, so the Gram matrix is all ones."""
    n = len(parents)
    if parents.shape[1] == 0:
        scaled = np.zeros((1, n))
    else:
        widths = np.exp(np.log(np.array([_median_heuristic(parents[:, [m]]) for m in range(parents.shape[1])])
                               * WIDTH_FACTOR))
        scaled = np.diag(1 / widths) @ parents.T
    total = np.zeros((n, n))
    for row in scaled:  # summed per coordinate in causal-learn's order, so the matrix is bit-identical
        diff = row[None, :] - row[:, None]
        total = total + diff * diff
    return 1.0 * np.exp(-total / 2)


class _NoiseObjective:
    """GP negative log marginal likelihood of the features Y (n x m) given the parents, as a function of u = log sigma:
    nlml = 1/2 tr(Y^T K^-1 Y) + m sum log diag L + m n / 2 log 2 pi, K = K_PA + sigma^2 I = L L^T (Rasmussen &
    Williams, eq. 2.30, m output columns); its derivative as causal-learn computes it, sigma^2 (m sum 1 / L_ii^2 -
    ||K^-1 Y||_F^2)."""

    def __init__(self, gram: np.ndarray, features: np.ndarray):
        self.gram, self.features = gram, features
        n, m = features.shape
        self.diagonal = np.arange(n) * (n + 1)
        self.constant = 0.5 * m * n * np.log(2 * np.pi)

    def __call__(self, u: float) -> tuple[float, float]:
        noise = np.exp(2 * np.array([u]))[0]  # computed as causal-learn's cov_noise does
        gram = self.gram.copy()
        gram.flat[self.diagonal] += noise
        chol = np.linalg.cholesky(gram)  # raises LinAlgError when K is not positive definite, as in causal-learn
        solved = cho_solve((chol, True), self.features, check_finite=False)  # K^-1 Y
        m = self.features.shape[1]
        diag = np.diagonal(chol)
        value = 0.5 * np.sum(self.features * solved) + m * np.sum(np.log(diag)) + self.constant
        twice = 2 * noise  # causal-learn's dK / dlog sigma = 2 sigma^2 I: where it overflows, 0 * inf makes its sum nan
        derivative = np.nan if np.isinf(twice) else twice * (m * np.sum(1 / diag**2) - np.sum(solved * solved)) / 2
        return float(value), float(derivative)


def _two_line_searches(objective, u: float) -> float:
    """The least nlml causal-learn's ``minimize`` finds from u (see the module docstring): two line searches along the
    negative derivative, each with 20 evaluations at most; steps start at 1 and triple while the value is not above
    the search's start (a failed evaluation halves the step), then shrink tenfold while it is above; the point with
    the strictly least value seen is the next start and the result."""
    f0, g0 = objective(u)
    for _ in range(2):
        s, step, budget = -g0, 1.0, EVALUATIONS_PER_SEARCH
        best = (f0, u, g0)
        while True:  # extrapolation
            f3, ok = f0, False
            while not ok and budget > 0:
                budget -= 1
                try:
                    f3, g3 = objective(u + step * s)
                    ok = math.isfinite(f3) and math.isfinite(g3)
                except (np.linalg.LinAlgError, ValueError):  # causal-learn catches any error and bisects
                    ok = False
                if not ok:
                    step = step / 2  # bisect towards the start and retry
            if ok and f3 < best[0]:
                best = (f3, u + step * s, g3)
            if not ok or f3 > f0 or budget == 0:
                break
            b = 3 * (f3 - f0)  # minimize's cubic extrapolation with zero slopes: 0 / 0 unless b * b underflows
            step = step * EXTRAPOLATE if b + math.sqrt(b * b) == 0 else step + INSIDE * step
        while ok and f3 > f0 and budget > 0:  # interpolation: the bracket's lower end stays at the start
            step = INSIDE * step
            f3, g3 = objective(u + step * s)
            if f3 < best[0]:
                best = (f3, u + step * s, g3)
            budget -= 1
        f0, u, g0 = best
    return f0


class MarginalLikelihoodScore(KernelScore):
    """causal-learn's ``local_score_marginal_general`` (negated: lower is better), one column per variable, with the
    child's features cached per child and the parents' Gram matrix per parent set (see the module docstring)."""

    def fit(self, data, groups: list[list[int]] | None = None) -> MarginalLikelihoodScore:
        super().fit(data, groups)
        if any(len(g) != 1 for g in self.groups_):
            raise ValueError("MarginalLikelihoodScore takes one column per variable (causal-learn's *_general score)")
        self.features_: dict[int, np.ndarray] = {}
        self.grams_: dict[tuple[int, ...], np.ndarray] = {}
        return self

    def _compute(self, child: int, parents: list[int]) -> float:
        if child not in self.features_:
            self.features_[child] = child_features(self.data_[:, child])
        key = tuple(parents)
        if key not in self.grams_:
            self.grams_[key] = parent_gram(self.data_[:, list(parents)])
        objective = _NoiseObjective(self.grams_[key], self.features_[child])
        return _two_line_searches(objective, NOISE_INIT)
