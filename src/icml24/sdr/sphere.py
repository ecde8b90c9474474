r"""Optimization over the unit sphere in spherical coordinates, as the official code (R ``SphereOptimize``/``optim``).

A unit vector ``s`` in ``R^p`` is written with ``p - 1`` angles ``theta``:

.. code-block:: text

    s_1 = cos t_1,   s_i = sin t_1 ... sin t_{i-1} cos t_i  (1 < i < p),   s_p = sin t_1 ... sin t_{p-1}

and any function of ``s`` is minimized over unconstrained ``theta``:

- ``anneal``: simulated annealing with the schedule of R's ``optim(method = "SANN")`` (``temp = 10``,
  ``tmax = 10``): at iteration ``k`` the temperature is ``T_k = temp / log(floor((k-1)/tmax) tmax + e)``
  and the candidate is ``theta + N(0, (T_k / temp)^2 I)``, accepted if better or with probability
  ``exp(-dy / T_k)``; the best point visited is returned.
- ``nelder_mead``: Nelder–Mead (``scipy``) from R's initial simplex (step ``0.1 max|theta_i|``, or 0.1)
  and stopped like R's ``nmmin``: when the simplex values differ by at most ``reltol (|f_0| + reltol)``, or
  after ``maxfev`` evaluations.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

from icml24._random import check_random_state


def from_sphere(theta: np.ndarray) -> np.ndarray:
    """Cartesian unit vector ``[p]`` of the angles ``theta [p - 1]``."""
    theta = np.asarray(theta, dtype=np.float64)
    s = np.ones(theta.shape[0] + 1)
    np.cumprod(np.sin(theta), out=s[1:])
    s[:-1] *= np.cos(theta)
    return s


def to_sphere(s: np.ndarray) -> np.ndarray:
    """Angles ``theta [p - 1]`` of a vector ``s [p]`` (normalized first): ``t_i`` in ``[0, pi]`` for ``i < p - 1``
    and ``t_{p-1}`` in ``[0, 2 pi)``; ``from_sphere(to_sphere(s)) = s / |s|``."""
    s = np.asarray(s, dtype=np.float64)
    s = s / np.linalg.norm(s)
    tail = np.sqrt(np.cumsum((s * s)[::-1])[::-1])  # |s_i..s_p|
    theta = np.arccos(np.clip(np.divide(s[:-1], tail[:-1], out=np.zeros(s.shape[0] - 1), where=tail[:-1] > 0),
                              -1.0, 1.0))
    theta[-1] = math.atan2(s[-1], s[-2]) % (2 * math.pi)
    return theta


def anneal(fn: Callable[[np.ndarray], float], theta0: np.ndarray, random_state=None, maxiter: int = 20_000,
           temperature: float = 10.0, tmax: int = 10) -> tuple[np.ndarray, float, int]:
    """R's ``SANN`` on ``fn(theta)``: returns ``(best theta, best value, evaluations)``.

    ``maxiter`` counts evaluations as R does (the start plus ``maxiter - 1`` candidates). The Gaussian steps and
    the acceptance uniforms are drawn from ``random_state`` (None, an int or a numpy Generator) up front.
    """
    theta = np.asarray(theta0, dtype=np.float64).copy()
    value = float(fn(theta))
    best_theta, best_value = theta.copy(), value
    steps = max(int(maxiter) - 1, 0)
    if steps == 0 or theta.size == 0:
        return best_theta, best_value, 1
    iterations = np.arange(1, steps + 1)
    temps = temperature / np.log(((iterations - 1) // tmax) * tmax + math.e)  # constant over tmax iterations
    rng = check_random_state(random_state)
    moves = rng.standard_normal((steps, theta.size)) * (temps / temperature)[:, None]
    uniforms = rng.random(steps)
    for k in range(steps):
        candidate = theta + moves[k]
        trial = float(fn(candidate))
        if not math.isfinite(trial):
            trial = 1e35
        delta = trial - value
        if delta <= 0.0 or uniforms[k] < math.exp(-delta / temps[k]):
            theta, value = candidate, trial
            if value <= best_value:
                best_theta, best_value = theta.copy(), value
    return best_theta, best_value, steps + 1


def nelder_mead(fn: Callable[[np.ndarray], float], theta0: np.ndarray, maxfev: int = 10_000,
                reltol: float = 1e-8) -> tuple[np.ndarray, float, int]:
    """Nelder–Mead from R's initial simplex, stopped by R's rule; returns ``(theta, value, evaluations)``."""
    theta0 = np.asarray(theta0, dtype=np.float64)
    f0 = float(fn(theta0))
    step = 0.1 * float(np.max(np.abs(theta0))) if theta0.size else 0.0
    step = step if step > 0 else 0.1
    simplex = np.vstack([theta0, theta0 + step * np.eye(theta0.size)])
    result = minimize(fn, theta0, method="Nelder-Mead",
                      options={"initial_simplex": simplex, "maxfev": int(maxfev), "xatol": np.inf,
                               "fatol": reltol * (abs(f0) + reltol)})
    if result.fun <= f0:
        return np.asarray(result.x), float(result.fun), int(result.nfev) + 1
    return theta0, f0, int(result.nfev) + 1
