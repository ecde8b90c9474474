r"""HC-SDR: refine a single-index direction by maximizing the Hellinger correlation (Hong, Kim & Song, ICML 2024).

.. code-block:: text

    beta_0 <- unit direction of an existing SDR method (DR, SIR, SAVE, MAVE, DCOV, ...)
    f(beta) = B(beta^T X, y)                 # nearest-neighbour Bhattacharyya estimate; min f = max eta
    theta   <- SANN over the angles of beta_0 (R's optim schedule, 20000 evaluations)
    theta   <- Nelder-Mead from theta (R's optim defaults, at most 10000 evaluations)
    beta    <- from_sphere(theta)

The objective depends on ranks only, so it is piecewise constant in ``beta``: no gradients, hence annealing and
Nelder-Mead, as in the official ``hcsdr``. Only ``d = 1`` (single-index models) is covered by the paper.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from ._base import DirectionEstimator, check_integer, check_number, normalize_directions
from .dcov import DCOVSDR
from .hellinger import ProjectionObjective, hellinger_from_bhattacharyya
from .inverse import SAVE, SIR, DirectionalRegression
from .mave import MAVE, OPG
from .sphere import anneal, from_sphere, nelder_mead, to_sphere

INITIALIZERS = {"sir": SIR, "save": SAVE, "dr": DirectionalRegression, "mave": MAVE, "opg": OPG, "dcov": DCOVSDR}


def make_initializer(name: str, random_state=None) -> DirectionEstimator:
    """A fresh initializer by name (``sir``, ``save``, ``dr``, ``mave``, ``opg``, ``dcov``); random ones are seeded."""
    key = str(name).lower()
    if key not in INITIALIZERS:
        raise ValueError(f"unknown initializer {name!r}; choose one of {', '.join(INITIALIZERS)}")
    return DCOVSDR(random_state=random_state) if key == "dcov" else INITIALIZERS[key]()


class HellingerSDR(DirectionEstimator):
    """Hellinger-correlation SDR for single-index models: an initial direction refined on the unit sphere.

    Args:
        init (str | estimator | array): the initializer: a name of ``INITIALIZERS`` (default ``"dr"``),
            an unfitted estimator with ``directions_`` after ``fit`` (cloned), or a direction ``[p]``.
        sa_maxiter (int): annealing evaluations (official: ``2 * maxit = 20000``); 0 skips annealing.
        sa_temperature (float), sa_tmax (int): R's ``temp`` and ``tmax`` (10, 10).
        nm_maxfev (int): Nelder–Mead evaluations at most (official: 10000); 0 skips it.
        nm_reltol (float): R's ``reltol`` (1e-8).
        algorithm (str): the 1-NN search of the objective, ``"sweep"`` (default) or ``"kdtree"``; both exact.
        random_state (int | Generator | None): seeds the annealing (and a random initializer such as DCOV).

    Attributes (after ``fit``):
        directions_ (ndarray [p, 1]); initial_direction_ (ndarray [p, 1]): the initializer's direction;
        initial_bhattacharyya_, bhattacharyya_ (float): ``B`` before and after; correlation_ (float): the
        final Hellinger correlation ``eta``; n_evaluations_ (int): objective evaluations.
    """

    def __init__(self, init="dr", sa_maxiter: int = 20_000, sa_temperature: float = 10.0, sa_tmax: int = 10,
                 nm_maxfev: int = 10_000, nm_reltol: float = 1e-8, algorithm: str = "sweep", random_state=None):
        self.init = init
        self.sa_maxiter = sa_maxiter
        self.sa_temperature = sa_temperature
        self.sa_tmax = sa_tmax
        self.nm_maxfev = nm_maxfev
        self.nm_reltol = nm_reltol
        self.algorithm = algorithm
        self.random_state = random_state

    def _initial_direction(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        init = self.init
        if isinstance(init, str):
            estimator = make_initializer(init, random_state=rng)
        elif hasattr(init, "fit"):
            estimator = clone(init)
        else:
            try:
                direction = np.asarray(init, dtype=np.float64).ravel()
            except (TypeError, ValueError):
                raise ValueError(f"init must be an initializer name ({', '.join(INITIALIZERS)}), an unfitted "
                                 f"estimator or a direction of length {X.shape[1]}, got {init!r}") from None
            if direction.shape != (X.shape[1],) or not np.all(np.isfinite(direction)) or not direction.any():
                raise ValueError(f"init as an array must be a finite nonzero direction of length {X.shape[1]}")
            return direction / np.linalg.norm(direction)
        return np.asarray(estimator.fit(X, y).directions_, dtype=np.float64)[:, 0]

    def _check_params(self) -> None:
        check_integer("sa_maxiter", self.sa_maxiter, 0)
        check_number("sa_temperature", self.sa_temperature)
        check_integer("sa_tmax", self.sa_tmax, 1)
        check_integer("nm_maxfev", self.nm_maxfev, 0)
        check_number("nm_reltol", self.nm_reltol, allow_zero=True)

    def _fit_directions(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        self._check_params()
        rng = np.random.default_rng(self.random_state)
        init_rng, anneal_rng = rng.spawn(2)
        beta0 = self._initial_direction(X, y, init_rng)
        self.initial_direction_ = normalize_directions(beta0)
        if X.shape[1] == 1:  # the sphere in R^1 is {-1, 1}: nothing to refine
            objective = ProjectionObjective(X, y, self.algorithm)
            self.initial_bhattacharyya_ = self.bhattacharyya_ = objective(beta0)
            self.correlation_ = hellinger_from_bhattacharyya(self.bhattacharyya_)
            self.n_evaluations_ = objective.evaluations
            return beta0[:, None]
        objective = ProjectionObjective(X, y, self.algorithm)
        on_angles = lambda theta: objective(from_sphere(theta))  # noqa: E731
        theta = to_sphere(beta0)
        self.initial_bhattacharyya_ = value = objective(from_sphere(theta))
        if int(self.sa_maxiter) > 0:
            theta, value, _ = anneal(on_angles, theta, anneal_rng, maxiter=int(self.sa_maxiter),
                                     temperature=float(self.sa_temperature), tmax=int(self.sa_tmax))
        if int(self.nm_maxfev) > 0:
            theta, value, _ = nelder_mead(on_angles, to_sphere(from_sphere(theta)), maxfev=int(self.nm_maxfev),
                                          reltol=float(self.nm_reltol))
        self.bhattacharyya_ = float(value)
        self.correlation_ = hellinger_from_bhattacharyya(self.bhattacharyya_)
        self.n_evaluations_ = objective.evaluations
        return from_sphere(theta)[:, None]
