"""The paper's synthetic benchmark (Wang et al., ICML 2024, experiments; official ``graph_generate``).

A random upper-triangular DAG with ``int(density * (d^2 / 2 - d))`` edges. Roots are N(0, 1) or U(-0.5, 0.5) with
1..max_dim columns. Each child applies a random f (linear, power 1-2, or sin/cos/tanh) to the *sum* of all its
parents' columns, adds noise 0.25 N(0, 1) or 0.25 U(-0.5, 0.5), then a random post-transform g (linear, y + exp(y),
power 1-2, or sin/cos/tanh). Variants: continuous, discrete (every column in 20 bins), mixed (half the columns
binned; official ``Continuous2Discrete`` / ``Part2Discrete``) and multi-dimensional roots (up to 4 columns). The
binned columns are marked in ``SyntheticData.discrete``, which a score's ``fit(..., discrete=...)`` takes.

The official code applies its linear and trigonometric g to the noiseless parent sum, overwriting f and the noise
(the child is then a deterministic function of its parents); ``official_overwrite=True`` reproduces that, the
default applies g to the noisy f(sum) as the paper's post-nonlinear description says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml24._random import check_random_state
from icml24._validation import check_positive

VARIANTS = ("continuous", "discrete", "mixed", "multi")
_TRIG = (np.sin, np.cos, np.tanh)


@dataclass
class SyntheticData:
    """``data`` (n x columns), ``groups`` (columns of each variable), ``dag`` (0/1, ``dag[i, j] = 1`` for i -> j),
    ``discrete`` (boolean mask of the binned columns; None: all continuous)."""

    data: np.ndarray
    groups: list[list[int]]
    dag: np.ndarray
    discrete: np.ndarray | None = None

    @property
    def density(self) -> float:
        """Edges over the d (d - 1) / 2 possible ones."""
        d = len(self.dag)
        return float(self.dag.sum()) / (d * (d - 1) / 2)


def random_dag(num_variables: int, density: float, random_state=None) -> np.ndarray:
    """Upper-triangular DAG with ``int(density * (d^2 / 2 - d))`` edges drawn uniformly (official count)."""
    rng = check_random_state(random_state)
    d = int(num_variables)
    if d < 2:
        raise ValueError(f"num_variables must be >= 2, got {num_variables}")
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"density must be in [0, 1], got {density}")
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    count = min(len(pairs), max(0, int(density * (0.5 * d * d - d))))
    dag = np.zeros((d, d), dtype=int)
    for k in rng.choice(len(pairs), size=count, replace=False):
        dag[pairs[k]] = 1
    return dag


def _f(s: np.ndarray, width: int, rng: np.random.Generator) -> np.ndarray:
    kind = rng.integers(0, 3)
    if kind == 0:
        return 1.7 * s / (width + 1)
    if kind == 1:
        return s ** int(rng.integers(1, 3))
    return _TRIG[rng.integers(0, 3)](s)


def _g(y: np.ndarray, s: np.ndarray, width: int, rng: np.random.Generator, official_overwrite: bool) -> np.ndarray:
    kind = rng.integers(0, 4)
    if kind == 0:
        return 3 * (s if official_overwrite else y) / (width + 1)
    if kind == 1:
        return y + np.exp(y)
    if kind == 2:
        return y ** int(rng.integers(1, 3))
    return _TRIG[rng.integers(0, 3)](s if official_overwrite else y)


def _discretize(column: np.ndarray, bins: int) -> np.ndarray:
    edges = np.linspace(column.min(), column.max(), num=bins)
    return np.digitize(column, bins=edges).astype(float)


def simulate(dag: np.ndarray, num_samples: int, random_state=None, max_dim: int = 1,
             official_overwrite: bool = False) -> SyntheticData:
    """Sample data from ``dag`` (upper-triangular order not required; a topological order is used)."""
    rng = check_random_state(random_state)
    dag = np.asarray(dag) != 0
    n = int(check_positive("num_samples", num_samples))
    d = len(dag)
    values: dict[int, np.ndarray] = {}
    remaining = list(range(d))
    while remaining:
        ready = [v for v in remaining if all(p in values for p in np.flatnonzero(dag[:, v]))]
        if not ready:
            raise ValueError("dag has a directed cycle")
        for v in ready:
            parents = np.flatnonzero(dag[:, v])
            if len(parents) == 0:
                dim = int(rng.integers(1, max_dim + 1))
                values[v] = rng.standard_normal((n, dim)) if rng.integers(0, 2) == 0 else rng.random((n, dim)) - 0.5
                continue
            block = np.concatenate([values[p] for p in parents], axis=1)
            s = block.sum(axis=1, keepdims=True)  # the child sees the sum of its parents' columns
            y = _f(s, block.shape[1], rng)
            noise = rng.standard_normal((n, 1)) if rng.integers(0, 2) == 0 else rng.random((n, 1)) - 0.5
            values[v] = _g(y + 0.25 * noise, s, block.shape[1], rng, official_overwrite)
        remaining = [v for v in remaining if v not in ready]
    groups, start = [], 0
    for v in range(d):
        groups.append(list(range(start, start + values[v].shape[1])))
        start += values[v].shape[1]
    data = np.concatenate([values[v] for v in range(d)], axis=1)
    return SyntheticData(data=data, groups=groups, dag=dag.astype(int))


def generate(num_variables: int = 6, num_samples: int = 300, density: float = 0.5, variant: str = "continuous",
             random_state=None, official_overwrite: bool = False, bins: int = 20) -> SyntheticData:
    """One dataset of the paper's benchmark: a random DAG and data of the chosen ``variant``."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    rng = check_random_state(random_state)
    dag = random_dag(num_variables, density, rng)
    max_dim = min(4, num_variables // 2) if variant == "multi" else 1
    out = simulate(dag, num_samples, rng, max_dim=max_dim, official_overwrite=official_overwrite)
    out.discrete = np.zeros(out.data.shape[1], dtype=bool)
    if variant in ("discrete", "mixed"):
        columns = range(out.data.shape[1])
        if variant == "mixed":  # official Part2Discrete: int(0.5 * columns) columns drawn without replacement
            columns = rng.choice(out.data.shape[1], size=out.data.shape[1] // 2, replace=False)
        for c in columns:
            out.data[:, c] = _discretize(out.data[:, c], bins)
            out.discrete[c] = True
    return out
