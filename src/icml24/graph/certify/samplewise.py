"""Sample-wise certificate of node-aware bi-smoothing against node injection (Lai et al., S&P 2024).

An attacker injects ``rho`` nodes with at most ``tau`` edges each. With edge deletion ``p_e`` and node
deletion ``p_n``, all injected nodes end up disconnected in ``φ(G)`` with probability

    p̃ = ((1 - p_n) (1 - p̄_e p̄_n)^tau + p_n)^rho,      p̄ = 1 - p

(each injected node is deleted, or kept with every edge deleted or its other endpoint deleted).

Two decision rules are offered:

- ``"official"`` (the official code): certified iff ``p̃ (p̲_A - p̄_B + 1) > 1``. It treats the event
  "injected nodes disconnected" as independent of the clean perturbation, which does not hold when an
  existing endpoint's deletion disconnects an injected edge; ``bruteforce`` finds base classifiers for
  which it is not sound.
- ``"conservative"``: certified iff ``p̲_A - p̄_B > 2 (1 - p̃)``: on the disconnection event the attacked and
  clean samples coincide, so each class probability moves by at most ``1 - p̃`` (sound for any classifier).

Both rules coincide at ``p̲_A - p̄_B = 1`` (certified iff ``p̃ > 1/2``).
"""

from __future__ import annotations

import numpy as np

VARIANTS = ("official", "conservative")


def _margin(p_lower, p_upper) -> np.ndarray:
    """``p̲_A - p̄_B``, refusing mismatched lengths (no broadcasting) and probabilities outside [0, 1] or NaN."""
    lower, upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
    if lower.shape != upper.shape:
        raise ValueError(f"p_lower and p_upper must have the same shape, got {lower.shape} and {upper.shape}")
    for name, values in (("p_lower", lower), ("p_upper", upper)):
        if not np.all((values >= -1e-9) & (values <= 1.0 + 1e-9)):  # NaN fails this too; rounding is allowed
            raise ValueError(f"{name} must hold probabilities in [0, 1] (no NaN)")
    return np.clip(lower, 0.0, 1.0) - np.clip(upper, 0.0, 1.0)


def disconnection_probability(rho, tau: int, p_e: float, p_n: float) -> np.ndarray:
    """``p̃``: probability that none of ``rho`` injected nodes (``tau`` edges each) keeps an edge."""
    _check(tau, p_e, p_n)
    keep = (1.0 - p_e) * (1.0 - p_n)
    per_node = (1.0 - p_n) * (1.0 - keep) ** tau + p_n
    return per_node ** np.asarray(rho, dtype=float)


def samplewise_certified(p_lower, p_upper, rho: int, tau: int, p_e: float, p_n: float,
                         variant: str = "official") -> np.ndarray:
    """Boolean mask: node certified against every injection of ``rho`` nodes with ``tau`` edges each.

    Args:
        p_lower (array): ``p̲_A`` per node.
        p_upper (array): ``p̄_B`` per node.
        rho (int), tau (int): attack budget.
        p_e, p_n (float): smoothing parameters.
        variant (str): ``"official"`` or ``"conservative"`` (see the module docstring).
    """
    margin = _margin(p_lower, p_upper)
    p_tilde = disconnection_probability(rho, tau, p_e, p_n)
    if variant == "official":
        return p_tilde * (margin + 1.0) > 1.0
    if variant == "conservative":
        return margin > 2.0 * (1.0 - p_tilde)
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def samplewise_radius(p_lower, p_upper, tau: int, p_e: float, p_n: float, variant: str = "official") -> np.ndarray:
    """Largest ``rho`` for which each node is certified (0 if not even ``rho = 1``), in closed form.

    With ``q = p̃(rho=1)``: official ``rho < ln(1 + d) / -ln q``; conservative ``rho < ln(1 - d/2) / ln q``,
    ``d = p̲_A - p̄_B``; the strict inequality gives ``ceil(bound) - 1``.
    """
    margin = _margin(p_lower, p_upper)
    log_q = np.log(disconnection_probability(1, tau, p_e, p_n))
    if log_q == 0.0:  # nothing can ever connect: certified at every budget when the margin is positive
        return np.where(margin > 0, np.iinfo(np.int64).max, 0)
    if variant == "official":
        bound = np.log1p(np.clip(margin, 0.0, None)) / -log_q
    elif variant == "conservative":
        bound = np.log1p(-np.clip(margin, 0.0, 1.0) / 2.0) / log_q
    else:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    radius = np.ceil(bound - 1e-12) - 1
    return np.where(margin > 0, np.maximum(radius, 0), 0).astype(np.int64)


def _check(tau: int, p_e: float, p_n: float) -> None:
    if not (0.0 <= p_e <= 1.0 and 0.0 <= p_n <= 1.0):
        raise ValueError(f"p_e and p_n must lie in [0, 1], got p_e={p_e}, p_n={p_n}")
    if tau < 0:
        raise ValueError(f"tau (edges per injected node) must be >= 0, got {tau}")
