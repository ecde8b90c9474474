"""Condition-number bounds for K = Psi Lambda Psi^T and the condition-number bound on the variance.

Cheng et al. (ICML 2024), Sec. 3-4: two-sided, high-probability bounds on cond(K) that grow like n^{1+a} under
polynomial decay and like e^{a n} under exponential decay, and test-error (variance) bounds driven by the
condition number of the *tail* kernel matrix A_k = Psi_{>k} Lambda_{>k} Psi_{>k}^T. The paper states its bounds up
to absolute constants; here each bound is an explicit instance for i.i.d. N(0, 1) features, with every step named:
Chevet's inequality and Gaussian concentration (s_1 upper), Gordon's min-max comparison on A_k (s_n lower),
Sankar-Spielman-Teng on the first n features (s_n lower), and Laurent-Massart chi-square tails for one test vector
(s_1 lower, s_n upper). Each of the five events fails with probability at most delta / 5.
"""

from __future__ import annotations

import math

import numpy as np

from icml24._validation import check_finite, check_positive

SST_CONSTANT = 2.35  # Sankar, Spielman & Teng (2006), Thm 3.1: P(s_min(G_n) <= x) <= 2.35 x sqrt(n)


def _spectrum(lam: np.ndarray) -> np.ndarray:
    lam = np.asarray(check_finite("lam", lam), dtype=float).ravel()
    if lam.size == 0 or (lam < 0).any() or (np.diff(lam) > 0).any():
        raise ValueError("lam must be a non-empty, non-negative, non-increasing spectrum lambda_1 >= lambda_2 >= ...")
    return lam


def condition_number_rate(kind: str, a: float, n: np.ndarray | float) -> np.ndarray:
    """The paper's growth rate of cond(K): n^{1+a} (polynomial decay) or e^{a n} (exponential decay)."""
    n = np.asarray(n, dtype=float)
    if kind == "polynomial":
        return n ** (1.0 + a)
    if kind == "exponential":
        return np.exp(a * n)
    raise ValueError(f"kind must be polynomial or exponential, got {kind!r}")


def condition_number_bounds(lam: np.ndarray, n: int, delta: float = 0.05) -> tuple[float, float]:
    """(lower, upper) with P(lower <= cond(K) <= upper) >= 1 - delta for K = Psi Lambda Psi^T, Psi n x p Gaussian.

    Lower = max(s1_low / sn_up, 1), upper = s1_up / max(sn_low_tail, sn_low_square), where
    - s1_low: u = psi_1 / |psi_1| gives u^T K u = lambda_1 chi2_n + sum_{l>=2} lambda_l g_l^2 (Laurent-Massart);
    - sn_up: u orthogonal to psi_1..psi_{n-1} gives u^T K u = sum_{l>=n} lambda_l g_l^2 (Laurent-Massart);
    - s1_up: E|Psi Lambda^{1/2}| <= sqrt(n lambda_1) + sqrt(tr Lambda) (Chevet), plus Gaussian concentration;
    - sn_low_tail: max over k of (sqrt(T_k - lambda_{k+1}) - sqrt(lambda_{k+1}) (sqrt(n) + 2t))_+^2, T_k the tail
      trace, by Gordon's comparison on the tail matrix A_k (K >= A_k);
    - sn_low_square: lambda_n x^2 with P(s_min(Psi_{<=n}) <= x) <= 2.35 x sqrt(n) (Sankar-Spielman-Teng).
    """
    lam = _spectrum(lam)
    n = int(n)
    check_positive("delta", delta)
    if not 1 <= n < lam.size:
        raise ValueError(f"need 1 <= n < p (the bounds use lambda_n and the tail beyond it), got n={n}, p={lam.size}")
    share = delta / 5
    x = math.log(1 / share)  # Laurent-Massart: each tail fails w.p. e^{-x}
    rest = lam[1:]
    s1_low = n * lam[0] + rest.sum() - 2 * math.sqrt(x) * math.sqrt(n * lam[0] ** 2 + (rest**2).sum())
    tail = lam[n - 1:]
    sn_up = tail.sum() + 2 * math.sqrt(x) * np.linalg.norm(tail) + 2 * x * tail[0]
    t = math.sqrt(2 * math.log(1 / share))  # Gaussian concentration: e^{-t^2/2} = share
    s1_up = (math.sqrt(n * lam[0]) + math.sqrt(lam.sum()) + t * math.sqrt(lam[0])) ** 2
    t_gordon = math.sqrt(2 * math.log(4 / share))  # Gordon's factor 2 times two Gaussian tails: 4 e^{-t^2/2}
    tails = np.cumsum(lam[::-1])[::-1]  # tails[k] = sum_{l > k} lambda_l (0-based: lam[k:].sum())
    gordon = np.sqrt(np.maximum(tails - lam, 0.0)) - np.sqrt(lam) * (math.sqrt(n) + 2 * t_gordon)
    sn_low_tail = float(np.max(np.maximum(gordon, 0.0)) ** 2)
    sn_low_square = lam[n - 1] * (share / (SST_CONSTANT * math.sqrt(n))) ** 2
    sn_low = max(sn_low_tail, sn_low_square)
    lower = max(s1_low / sn_up, 1.0)  # cond(K) >= 1 always; the chi-square bound is vacuous for tiny n
    upper = s1_up / sn_low if sn_low > 0 else math.inf
    return float(lower), float(upper)


def variance_bound(psi: np.ndarray, lam: np.ndarray, k: int, tail_singular_values: np.ndarray | None = None,
                   resolve_tol: float = 1e-6) -> float:
    """V <= cond(A_k) tr((Psi_k^T Psi_k)^{-1}) + |Psi_{>k} Lambda_{>k}|_F^2 / s_n(A_k)^2, for any 0 <= k < n.

    A deterministic inequality (for the drawn features) in the spirit of the paper's condition-number-driven
    variance bound: split V = tr(Lambda Psi^T K^-2 Psi Lambda) into the top-k head and the tail; the head is
    bounded with the push-through identity and M/(1+M)^2 <= 1/M, the tail with K >= A_k. Returns ``inf`` when A_k
    is numerically singular in float64 (its smallest singular value is not resolved to ``resolve_tol``): the
    bound is then at least of order 1/eps and useless.
    """
    psi = np.asarray(check_finite("psi", psi), dtype=float)
    lam = _spectrum(lam)
    n, p = psi.shape
    if p != lam.size:
        raise ValueError(f"psi has {p} columns but lam has {lam.size} entries")
    if not 0 <= k < n:
        raise ValueError(f"k must satisfy 0 <= k < n = {n}, got {k}")
    if tail_singular_values is None:
        import scipy.linalg

        keep = lam[k:] > 0
        tail_singular_values = scipy.linalg.svdvals(psi[:, k:][:, keep] * np.sqrt(lam[k:][keep]))
    s = np.asarray(tail_singular_values, dtype=float)
    if s.size < n or s[n - 1] <= 0 or n * np.finfo(float).eps * s[0] / s[n - 1] > resolve_tol:
        return math.inf
    sn_tail = s[n - 1] ** 2
    head = 0.0
    if k > 0:
        gram = psi[:, :k].T @ psi[:, :k]
        head = float(np.sum(1.0 / np.linalg.eigvalsh(gram)))  # tr((Psi_k^T Psi_k)^{-1})
    frob = float((lam[k:] ** 2 * (psi[:, k:] ** 2).sum(axis=0)).sum())
    return (s[0] ** 2 / sn_tail) * head + frob / sn_tail**2
