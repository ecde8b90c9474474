"""The infectious-dynamics theory of Gu et al. ("Agent Smith", ICML 2024), Sec. 3.1 and App. B.

c_t is the ratio of virus carriers, p_t = alpha c_t the ratio of infected agents (Eq. 4). With N/2 random pairs
per round and one-way transmission (questioner -> answerer), the large-N recurrence is
c_{t+1} = (1 - gamma) c_t + beta c_t (1 - c_t) / 2 (Eq. 5), the ODE dc/dt = beta c (1 - c)/2 - gamma c (Eq. 6).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_finite, check_positive


def _rates(c0: float, beta: float, gamma: float) -> None:
    check_positive("beta", beta, allow_zero=True)
    check_positive("gamma", gamma, allow_zero=True)
    check_positive("c0", c0, allow_zero=True)
    if c0 > 1:
        raise ValueError(f"c0 is a ratio and must be <= 1, got {c0}")


def _rounds(name: str, value) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def recurrence(c0: float, beta: float, gamma: float, rounds: int) -> np.ndarray:
    """Iterate the large-N recurrence (Eq. 5); returns c_0..c_rounds."""
    _rates(c0, beta, gamma)
    rounds = _rounds("rounds", rounds)
    c = np.empty(int(rounds) + 1)
    c[0] = c0
    for t in range(int(rounds)):
        c[t + 1] = (1 - gamma) * c[t] + beta * c[t] * (1 - c[t]) / 2  # Eq. 5 (E[Delta_t]/N)
    return c


def infected_ratio(carriers: np.ndarray, alpha: float) -> np.ndarray:
    """p_t = alpha c_t (Eq. 4); ``alpha``, the share of carriers that are infected, lies in [0, 1]."""
    if not 0 <= alpha <= 1:  # NaN fails too
        raise ValueError(f"alpha is the share of carriers that are infected and must lie in [0, 1], got {alpha}")
    return alpha * np.asarray(carriers, dtype=float)


def closed_form(c0: float, beta: float, gamma: float, t) -> np.ndarray:
    """The solution of the ODE (Eq. 6) at times ``t``: Eq. 7 for beta != 2 gamma (it also gives the decay of
    Eq. 15 when beta < 2 gamma) and Eq. 14, c_t = 2 c0 / (c0 beta t + 2), at beta = 2 gamma."""
    _rates(c0, beta, gamma)
    t = np.asarray(check_finite("t", np.asarray(t, dtype=float)))
    k = beta - 2 * gamma
    if math.isclose(k, 0.0, abs_tol=1e-12):
        return 2 * c0 / (c0 * beta * t + 2)  # Eq. 14
    return c0 * k / ((k - beta * c0) * np.exp(-k * t / 2) + beta * c0)  # Eq. 7 / Eq. 15


def ode_solution(c0: float, beta: float, gamma: float, t_end: float, steps_per_unit: int = 1000) -> np.ndarray:
    """The ODE (Eq. 6) integrated by classical Runge-Kutta (RK4) on a fine grid; values at t = 0, 1, ..., t_end."""
    _rates(c0, beta, gamma)
    t_end = _rounds("t_end", t_end)
    if isinstance(steps_per_unit, bool) or not float(steps_per_unit).is_integer() or steps_per_unit < 1:
        raise ValueError(f"steps_per_unit must be an integer >= 1 (RK4 steps per time unit), got {steps_per_unit!r}")
    steps_per_unit = int(steps_per_unit)

    def f(c):
        return beta * c * (1 - c) / 2 - gamma * c  # Eq. 6

    h = 1.0 / steps_per_unit
    out = [c0]
    c = c0
    for _ in range(int(t_end)):
        for _ in range(steps_per_unit):
            k1 = f(c)
            k2 = f(c + h * k1 / 2)
            k3 = f(c + h * k2 / 2)
            k4 = f(c + h * k3)
            c = c + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        out.append(c)
    return np.asarray(out)


def limit_ratio(beta: float, gamma: float) -> float:
    """lim c_t = 1 - 2 gamma / beta when beta > 2 gamma (Eq. 7, 12), else 0 (Eq. 14, 15)."""
    check_positive("beta", beta, allow_zero=True)
    check_positive("gamma", gamma, allow_zero=True)
    return 1 - 2 * gamma / beta if beta > 2 * gamma else 0.0


def contained(beta: float, gamma: float) -> bool:
    """Remark II: a defence provably restrains the spread iff beta <= 2 gamma."""
    return bool(beta <= 2 * gamma)


def rounds_needed(c_target: float, beta: float, gamma: float, c0: float | None = None,
                  num_agents: int | None = None) -> float:
    """Rounds for the ODE to go from c0 to ``c_target`` (Eq. 13); with ``num_agents`` and no c0, c0 = 1/N (Eq. 8).

    Returns inf when the target lies at or above the limit 1 - 2 gamma / beta (never reached)."""
    check_finite("c_target", c_target)
    if not 0 < c_target < 1:
        raise ValueError(f"c_target is a carrier ratio and must lie in (0, 1), got {c_target}")
    if c0 is None:
        if num_agents is None:
            raise ValueError("give c0 or num_agents")
        if int(num_agents) < 1:
            raise ValueError(f"num_agents must be >= 1, got {num_agents}")
        c0 = 1.0 / int(num_agents)
    _rates(c0, beta, gamma)
    if c0 == 0:
        return math.inf  # no carrier, no spread
    k = beta - 2 * gamma
    if k <= 0 or c_target >= limit_ratio(beta, gamma):
        return math.inf
    return 2 / k * math.log(c_target * (k - beta * c0) / (c0 * (k - beta * c_target)))  # Eq. 13


def fit_rates(carriers, infected=None) -> dict[str, float]:
    """Recover (alpha, beta, gamma) from a carrier curve (and the infected curve, for alpha).

    beta and gamma: least squares of c_{t+1} - c_t = beta c_t (1 - c_t)/2 - gamma c_t (Eq. 5) over the rounds;
    alpha: sum p_t / sum c_t (Eq. 4), NaN without an infected curve.
    """
    c = np.asarray(check_finite("carriers", carriers), dtype=float)
    if c.ndim != 1 or c.size < 3:
        raise ValueError("carriers must be a 1-D curve of at least 3 rounds")
    design = np.column_stack([c[:-1] * (1 - c[:-1]) / 2, -c[:-1]])
    (beta, gamma), *_ = np.linalg.lstsq(design, np.diff(c), rcond=None)
    alpha = math.nan
    if infected is not None:
        p = np.asarray(check_finite("infected", infected), dtype=float)
        if p.shape != c.shape:
            raise ValueError("infected must have the shape of carriers")
        alpha = float(p.sum() / c.sum()) if c.sum() > 0 else math.nan
    return {"alpha": alpha, "beta": float(beta), "gamma": float(gamma)}
