"""ridgeless oracles and instance draws: the theory's noiseless values in the measurement's slot, the derivation's
design in the random points' slot, and the independent whitened feature laws of the paper's assumption."""

from __future__ import annotations

import math

import numpy as np

from icml24.core import labelled
from icml24.kernels import condition_number_rate, design_points, eigendecay

FEATURES = ("gaussian", "rademacher", "uniform")  # independent, whitened (mean 0, variance 1), sub-Gaussian
MEASUREMENTS = ("sampled", "theory")


def draw_features(rng: np.random.Generator, law: str, shape: tuple[int, int]) -> np.ndarray:
    """i.i.d. entries of one whitened sub-Gaussian law (the paper's independent-feature assumption)."""
    if law == "gaussian":
        return rng.standard_normal(shape)
    if law == "rademacher":
        return 2.0 * rng.integers(0, 2, size=shape) - 1.0
    if law == "uniform":
        return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), size=shape)
    raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {law!r}")


def deterministic_variance(lam: np.ndarray, n: int) -> float:
    """The deterministic equivalent of V = tr(Lambda Psi^T K^-2 Psi Lambda) for n whitened independent features (the
    Gaussian-universality limit, no sampling noise): with kappa solving sum_k lam_k / (lam_k + kappa) = n and
    L_k = lam_k / (lam_k + kappa), V = sum L_k^2 / (n - sum L_k^2) (the omniscient-risk estimate of ridgeless
    regression, e.g. Simon et al. 2023). It gives V ~ 0.49-0.56 (a = 0.5) and ~1.0 (a = 1) over n = 25..400 for
    k^-(1+a), and V ~ a n for e^(-a k), as the sampled estimates do."""
    lam = np.asarray(lam, dtype=float)
    lam = lam[lam > 0.0]  # underflowed exponential eigenvalues carry no weight
    if not 0 < n < lam.size:
        raise ValueError(f"n must lie in (0, {lam.size}) (fewer samples than features), got {n}")
    low, high = math.log(lam[-1]) - 60.0, math.log(lam[0]) + 60.0  # log kappa: the count falls from p to ~0
    for _ in range(200):  # bisection on log kappa: sum lam / (lam + kappa) decreases in kappa
        mid = 0.5 * (low + high)
        low, high = (mid, high) if np.sum(lam / (lam + math.exp(mid))) > n else (low, mid)
    shares = lam / (lam + math.exp(0.5 * (low + high)))
    squares = float(np.sum(shares**2))
    return squares / (n - squares)


def theory_metrics(kind: str, exponents: list[float], ns: list[int], p: int, spectrum: str) -> dict[str, float]:
    """The oracle of the synthetic claims: per exponent and n, cond(K) at the paper's rate (n^(1+a) or e^(a n), no
    constant) and V at its deterministic equivalent, under the names the sampled run uses (``kind`` is the slot)."""
    metrics: dict[str, float] = {}
    for a in exponents:
        lam = eigendecay(spectrum, a, p)
        metrics[labelled("decay_exponential", a=a)] = float(spectrum == "exponential")
        for n in ns:
            metrics[labelled("estimate_reliable", a=a, n=n)] = 1.0
            metrics[labelled("log10_cond", a=a, n=n)] = float(np.log10(condition_number_rate(spectrum, a, n)))
            metrics[labelled("variance", a=a, n=n)] = deterministic_variance(lam, n)
    return metrics


def planted_design(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """The derivation's mechanism in the random points' slot: a quasi-uniform grid (``design_points``' "grid") with
    its second point moved to distance n^(-2/d) of its first along the first axis, the birthday spacing of the
    closest pair of n i.i.d. points, every other pair left at least ~a quarter spacing apart."""
    X = design_points(n, d, "grid", rng)
    X[1] = X[0]
    X[1, 0] += len(X) ** (-2.0 / d)
    return X
