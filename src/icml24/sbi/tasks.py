"""Benchmark tasks with exact references: linear-Gaussian DAGs (every conditional in closed form) and two moons.

* ``gaussian_linear`` — SBIBM's task: ``theta ~ N(0, 0.1 I_d)``, ``x ~ N(theta, 0.1 I_d)`` (d = 10).
* ``gaussian_tree`` — a linear-Gaussian version of the Simformer paper's tree
  (``theta0 -> theta1, theta2``; ``theta1 -> x0, x1``; ``theta2 -> x2, x3``).
* ``markov_chain`` — a linear-Gaussian hidden Markov chain ``theta_k -> theta_{k+1}``, ``theta_k -> x_k``.
* ``ProductTask`` — ``theta ~ U(-1, 1)^2``, ``x = theta_1 theta_2 + 0.1 eps``: nonlinear, with the exact
  conditional ``p(theta_2 | theta_1, x)`` (a truncated Gaussian) mixing an observed parameter and the data.
* ``TwoMoons`` — SBIBM's two moons; reference posteriors are SBIBM's shipped samples when the ``sbibm`` package
  files are installed, otherwise exact grid samples of the closed-form likelihood times the uniform prior.

Every task exposes ``num_theta``, ``num_x``, ``graph`` (``[n, n]`` bool, ``graph[i, j]`` = ``j`` is a parent of
``i``), ``prior()`` (a torch distribution over theta), ``simulate_joint(num, random_state) -> [num, n]`` and
``observation(index) -> x_o``. Random draws use the ``random_state`` passed in (None: fresh entropy; an int; a numpy
or torch Generator, a torch one used as is: ``icml24._random.torch_generator``), never torch's global generator;
``observation(index)`` is a data constant, simulated (when SBIBM's file is absent) from
``torch.Generator().manual_seed(1_000_000 + index)`` so that every run sees the same observations.
"""

from __future__ import annotations

import bz2
import importlib.util
import math
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from icml24._random import torch_generator
from icml24._validation import check_finite


class LinearGaussianTask:
    """A linear-Gaussian DAG ``v = W v + b + diag(noise_std) eps`` over ``n`` variables (first ``num_theta`` = theta).

    The joint is ``N(mu, Sigma)`` with ``L = (I - W)^{-1}``, ``mu = L b``, ``Sigma = L diag(noise_std^2) L^T``, so any
    conditional ``p(v_free | v_obs)`` is Gaussian in closed form (``conditional``).

    Args:
        weights: ``[n, n]``, ``weights[i, j]`` = coefficient of parent ``j`` in node ``i`` (strictly lower-triangular
            in a topological order).
        noise_std: ``[n]`` noise standard deviations.
        num_theta: how many leading variables are parameters.
        bias: ``[n]`` offsets (default 0).
        name: task name.
    """

    def __init__(self, weights, noise_std, num_theta: int, bias=None, name: str = "linear_gaussian"):
        self.weights = check_finite("weights", np.asarray(weights, dtype=np.float64))
        n = self.weights.shape[0]
        if self.weights.ndim != 2 or self.weights.shape != (n, n):
            raise ValueError(f"weights must be a square [n, n] matrix, got shape {self.weights.shape}")
        self.noise_std = np.broadcast_to(check_finite("noise_std", np.asarray(noise_std, dtype=np.float64)),
                                         (n,)).copy()
        if np.any(self.noise_std <= 0):
            raise ValueError("noise_std must be > 0 for every variable")
        self.bias = np.zeros(n) if bias is None else check_finite("bias", np.asarray(bias, dtype=np.float64))
        if not 1 <= num_theta < n:
            raise ValueError(f"num_theta must lie in 1..{n - 1} (some parameters and some data), got {num_theta}")
        self.num_theta, self.num_x, self.name = num_theta, n - num_theta, name
        lower = np.linalg.inv(np.eye(n) - self.weights)
        self.mean = lower @ self.bias
        self.cov = lower @ np.diag(self.noise_std**2) @ lower.T
        self.graph = (self.weights != 0) | np.eye(n, dtype=bool)

    @property
    def num_variables(self) -> int:
        return self.num_theta + self.num_x

    def prior(self) -> torch.distributions.Distribution:
        """The marginal of theta, ``N(mu_theta, Sigma_theta)`` (float32)."""
        k = self.num_theta
        return torch.distributions.MultivariateNormal(torch.as_tensor(self.mean[:k], dtype=torch.float32),
                                                      torch.as_tensor(self.cov[:k, :k], dtype=torch.float32))

    def simulate_joint(self, num: int, random_state=None) -> Tensor:
        """Joint samples ``[num, n]`` (ancestral sampling in closed form)."""
        eps = torch.randn(num, self.num_variables, generator=torch_generator(random_state), dtype=torch.float64)
        lower = torch.as_tensor(np.linalg.cholesky(self.cov + 1e-12 * np.eye(self.num_variables)))
        return (torch.as_tensor(self.mean) + eps @ lower.T).float()

    def conditional(self, mask, values) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of the free variables (``~mask``) given ``values[mask]``."""
        mask = np.asarray(mask, dtype=bool)
        values = np.asarray(values, dtype=np.float64)
        if mask.shape != (self.num_variables,) or values.shape != (self.num_variables,):
            raise ValueError(f"mask and values must both have {self.num_variables} entries, got {mask.shape} and "
                             f"{values.shape}")
        check_finite("values (observed entries)", values[mask])
        free, obs = ~mask, mask
        if not free.any():
            raise ValueError("every variable is observed; leave at least one free")
        if not obs.any():
            return self.mean[free], self.cov[np.ix_(free, free)]
        gain = np.linalg.solve(self.cov[np.ix_(obs, obs)], self.cov[np.ix_(obs, free)]).T
        mean = self.mean[free] + gain @ (values[obs] - self.mean[obs])
        cov = self.cov[np.ix_(free, free)] - gain @ self.cov[np.ix_(obs, free)]
        return mean, (cov + cov.T) / 2

    def sample_conditional(self, num: int, mask, values, random_state=None) -> Tensor:
        """Exact samples ``[num, num_free]`` of ``p(v_free | v_obs)``."""
        mean, cov = self.conditional(mask, values)
        lower = torch.as_tensor(np.linalg.cholesky(cov + 1e-12 * np.eye(len(mean))))
        eps = torch.randn(num, len(mean), generator=torch_generator(random_state), dtype=torch.float64)
        return (torch.as_tensor(mean) + eps @ lower.T).float()

    def reference_posterior(self, x_observed, num: int, random_state=None) -> Tensor:
        x_observed = check_finite("x_observed", np.asarray(x_observed, dtype=np.float64).reshape(-1))
        mask = np.arange(self.num_variables) >= self.num_theta
        values = np.concatenate([np.zeros(self.num_theta), x_observed])
        return self.sample_conditional(num, mask, values, random_state)

    def observation(self, index: int) -> Tensor:
        """Observation ``x_o`` number ``index`` (1-based): SBIBM's file when available, else a seeded simulation."""
        if self.name == "gaussian_linear" and self.num_x == 10:
            table = _sbibm_csv("gaussian_linear", index, "observation.csv")
            if table is not None:
                return torch.as_tensor(table[0], dtype=torch.float32)
        joint = self.simulate_joint(1, torch.Generator().manual_seed(1_000_000 + index))
        return joint[0, self.num_theta:]

    def __repr__(self) -> str:
        return f"LinearGaussianTask(name={self.name!r}, num_theta={self.num_theta}, num_x={self.num_x})"


def gaussian_linear(dim: int = 10, prior_var: float = 0.1, noise_var: float = 0.1) -> LinearGaussianTask:
    """SBIBM's gaussian_linear: ``theta ~ N(0, 0.1 I)``, ``x_i ~ N(theta_i, 0.1)``; graph ``x_i <- theta_i``."""
    weights = np.zeros((2 * dim, 2 * dim))
    weights[dim + np.arange(dim), np.arange(dim)] = 1.0
    std = np.concatenate([np.full(dim, math.sqrt(prior_var)), np.full(dim, math.sqrt(noise_var))])
    return LinearGaussianTask(weights, std, dim, name="gaussian_linear")


def gaussian_tree(theta_std: float = 1.0, x_std: float = 0.5) -> LinearGaussianTask:
    """Tree of the paper's Fig. 4 with linear-Gaussian edges: ``theta0 -> theta1, theta2``; ``theta1 -> x0, x1``;
    ``theta2 -> x2, x3`` (each child = parent + noise)."""
    edges = [(1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 2)]
    weights = np.zeros((7, 7))
    for child, parent in edges:
        weights[child, parent] = 1.0
    std = np.array([theta_std] * 3 + [x_std] * 4)
    return LinearGaussianTask(weights, std, 3, name="gaussian_tree")


def markov_chain(length: int = 5, coefficient: float = 0.9, theta_std: float = 0.5, x_std: float = 0.3):
    """Hidden Markov chain: ``theta_{k+1} = c theta_k + N(0, s^2)``, ``x_k = theta_k + N(0, x_std^2)``."""
    n = 2 * length
    weights = np.zeros((n, n))
    weights[np.arange(1, length), np.arange(length - 1)] = coefficient
    weights[length + np.arange(length), np.arange(length)] = 1.0
    std = np.array([1.0] + [theta_std] * (length - 1) + [x_std] * length)
    return LinearGaussianTask(weights, std, length, name="markov_chain")


class TwoMoons:
    """SBIBM's two moons: ``theta ~ U(-1, 1)^2``, ``a ~ U(-pi/2, pi/2)``, ``r ~ N(0.1, 0.01^2)``,
    ``x = (r cos a + 0.25, r sin a) + (-|theta1 + theta2| / sqrt 2, (theta2 - theta1) / sqrt 2)``.

    Graph (as the official Simformer code): every ``x_j`` depends on both thetas and on ``x_{<j}``.
    """

    name, num_theta, num_x = "two_moons", 2, 2

    def __init__(self):
        self.graph = np.eye(4, dtype=bool)
        self.graph[2:, :2] = True
        self.graph[3, 2] = True

    @property
    def num_variables(self) -> int:
        return 4

    @staticmethod
    def _shift(theta: Tensor) -> Tensor:
        return torch.stack([-torch.abs(theta[:, 0] + theta[:, 1]) / math.sqrt(2),
                            (theta[:, 1] - theta[:, 0]) / math.sqrt(2)], dim=1)

    def prior(self) -> torch.distributions.Distribution:
        """``U(-1, 1)^2`` (the same distribution as sbi's ``BoxUniform(-1, 1)``)."""
        return torch.distributions.Independent(torch.distributions.Uniform(-torch.ones(2), torch.ones(2)), 1)

    def simulate(self, theta: Tensor, random_state=None) -> Tensor:
        """``x ~ p(x | theta)`` for ``theta: [num, 2]``."""
        theta = check_finite("theta", torch.as_tensor(theta, dtype=torch.float32).reshape(-1, 2))
        generator = torch_generator(random_state)
        num = theta.shape[0]
        angle = (torch.rand(num, generator=generator) - 0.5) * math.pi
        radius = 0.1 + 0.01 * torch.randn(num, generator=generator)
        moon = torch.stack([radius * torch.cos(angle) + 0.25, radius * torch.sin(angle)], dim=1)
        return moon + self._shift(theta)

    def simulate_joint(self, num: int, random_state=None) -> Tensor:
        generator = torch_generator(random_state)
        theta = 2 * torch.rand(num, 2, generator=generator) - 1
        return torch.cat([theta, self.simulate(theta, generator)], dim=1)

    def log_likelihood(self, theta: np.ndarray, x_observed: np.ndarray) -> np.ndarray:
        """Closed-form ``log p(x | theta)`` for ``theta: [m, 2]`` (change of variables to polar coordinates)."""
        shift = self._shift(check_finite("theta", torch.as_tensor(theta, dtype=torch.float64))).numpy()
        u = check_finite("x_observed", np.asarray(x_observed, dtype=np.float64))[None] - shift - np.array([0.25, 0.0])
        radius = np.hypot(u[:, 0], u[:, 1])
        log_density = (-0.5 * ((radius - 0.1) / 0.01) ** 2 - math.log(0.01 * math.sqrt(2 * math.pi))
                       - math.log(math.pi) - np.log(np.maximum(radius, 1e-300)))
        return np.where(u[:, 0] > 0, log_density, -np.inf)

    def observation(self, index: int) -> Tensor:
        table = _sbibm_csv("two_moons", index, "observation.csv")
        if table is not None:
            return torch.as_tensor(table[0], dtype=torch.float32)
        theta = 2 * torch.rand(1, 2, generator=torch.Generator().manual_seed(1_000_000 + index)) - 1
        return self.simulate(theta, torch.Generator().manual_seed(2_000_000 + index))[0]

    def reference_posterior(self, x_observed, num: int, random_state=None, index: int | None = None,
                            grid: int = 2000) -> Tensor:
        """Reference posterior samples: SBIBM's file for observation ``index`` if available, else exact grid
        sampling of the closed-form posterior (``grid^2`` cells on ``[-1, 1]^2``, uniform jitter in each cell)."""
        x_observed = check_finite("x_observed", np.asarray(x_observed, dtype=np.float64).reshape(-1))
        generator = torch_generator(random_state)
        if index is not None:
            table = _sbibm_csv("two_moons", index, "reference_posterior_samples.csv.bz2")
            if table is not None:
                pick = torch.randperm(table.shape[0], generator=generator)[:num]
                return torch.as_tensor(table[pick.numpy()], dtype=torch.float32)
        edges = np.linspace(-1, 1, grid + 1)
        centers = (edges[:-1] + edges[1:]) / 2
        t0, t1 = np.meshgrid(centers, centers, indexing="ij")
        log_post = self.log_likelihood(np.stack([t0.ravel(), t1.ravel()], 1), x_observed)
        weights = np.exp(log_post - log_post.max())
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        rng = np.random.default_rng(seed)
        cells = rng.choice(len(weights), size=num, p=weights / weights.sum())
        jitter = rng.uniform(-0.5, 0.5, size=(num, 2)) * (2 / grid)
        return torch.as_tensor(np.stack([t0.ravel()[cells], t1.ravel()[cells]], 1) + jitter, dtype=torch.float32)


class ProductTask:
    """``theta ~ U(-1, 1)^2``, ``x = theta_1 theta_2 + noise_std eps`` (issue #48's held-out simulator).

    Given ``theta_1 = a != 0`` and ``x``, the likelihood ``N(x; a theta_2, noise_std^2)`` times the uniform prior makes
    ``p(theta_2 | theta_1 = a, x)`` the Gaussian ``N(x / a, (noise_std / a)^2)`` truncated to ``[-1, 1]``: exact
    samples by the inverse CDF (``sample_theta2``) and exact moments (``theta2_moments``).
    """

    name, num_theta, num_x = "product", 2, 1

    def __init__(self, noise_std: float = 0.1):
        value = float(check_finite("noise_std", float(noise_std)))
        if value <= 0:
            raise ValueError(f"noise_std must be > 0, got {noise_std}")
        self.noise_std = value
        self.graph = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1]], dtype=bool)

    @property
    def num_variables(self) -> int:
        return 3

    def prior(self) -> torch.distributions.Distribution:
        return torch.distributions.Independent(torch.distributions.Uniform(-torch.ones(2), torch.ones(2)), 1)

    def simulate_joint(self, num: int, random_state=None) -> Tensor:
        generator = torch_generator(random_state)
        theta = 2 * torch.rand(num, 2, generator=generator) - 1
        x = theta[:, :1] * theta[:, 1:] + self.noise_std * torch.randn(num, 1, generator=generator)
        return torch.cat([theta, x], dim=1)

    def _truncated(self, theta1: float, x: float) -> tuple[float, float, float, float]:
        theta1, x = float(check_finite("theta1", theta1)), float(check_finite("x", x))
        if theta1 == 0.0:
            raise ValueError("theta1 must be nonzero (at theta1 = 0, x carries no information on theta_2)")
        mu, sd = x / theta1, self.noise_std / abs(theta1)
        lo, hi = (math.erf(((b - mu) / sd) / math.sqrt(2)) * 0.5 + 0.5 for b in (-1.0, 1.0))
        if hi - lo < 1e-12:
            raise ValueError(f"p(theta_2 | theta_1={theta1}, x={x}) has no mass on [-1, 1] in float64")
        return mu, sd, lo, hi

    def sample_theta2(self, num: int, theta1: float, x: float, random_state=None) -> Tensor:
        """Exact samples ``[num]`` of ``p(theta_2 | theta_1, x)`` (inverse CDF of the truncated Gaussian)."""
        mu, sd, lo, hi = self._truncated(theta1, x)
        u = lo + (hi - lo) * torch.rand(num, generator=torch_generator(random_state), dtype=torch.float64)
        return (mu + sd * torch.special.ndtri(u)).clamp(-1.0, 1.0).float()

    def theta2_moments(self, theta1: float, x: float) -> tuple[float, float]:
        """Exact mean and standard deviation of ``p(theta_2 | theta_1, x)``."""
        mu, sd, lo, hi = self._truncated(theta1, x)
        a, b = (-1.0 - mu) / sd, (1.0 - mu) / sd
        pdf = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731
        mass = hi - lo
        mean = mu + sd * (pdf(a) - pdf(b)) / mass
        var = sd**2 * (1 + (a * pdf(a) - b * pdf(b)) / mass - ((pdf(a) - pdf(b)) / mass) ** 2)
        return mean, math.sqrt(var)


def _sbibm_csv(task: str, index: int, filename: str) -> np.ndarray | None:
    """Read ``sbibm/tasks/<task>/files/num_observation_<index>/<filename>`` without importing sbibm (None if absent)."""
    spec = importlib.util.find_spec("sbibm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "tasks" / task / "files" / f"num_observation_{index}"
    path = path / filename
    if not path.exists():
        return None
    opener = bz2.open if filename.endswith(".bz2") else open
    with opener(path, "rt") as handle:
        return np.loadtxt(handle, delimiter=",", skiprows=1, ndmin=2)


TASKS = {"gaussian_linear": gaussian_linear, "gaussian_tree": gaussian_tree, "markov_chain": markov_chain,
         "two_moons": TwoMoons, "product": ProductTask}


def get_task(name: str):
    """Task by name: ``gaussian_linear``, ``gaussian_tree``, ``markov_chain``, ``two_moons`` or ``product``."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; use one of {sorted(TASKS)}")
    return TASKS[name]()
