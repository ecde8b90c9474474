"""The paper's generator: official edge counts, variants, reproducibility."""

import numpy as np
import pytest

from icml24.causal import generate, random_dag, simulate
from icml24.causal.graphs import is_dag


@pytest.mark.parametrize("d,density,edges", [(6, 0.5, 6), (5, 0.7, 5), (7, 0.3, 5), (7, 0.7, 12)])
def test_edge_count_is_the_official_one(d, density, edges):
    dag = random_dag(d, density, np.random.default_rng(0))
    assert dag.sum() == edges and is_dag(dag) and not np.tril(dag).any()


def test_variants_shapes_and_reproducibility():
    a = generate(6, 50, 0.5, random_state=np.random.default_rng(3))
    b = generate(6, 50, 0.5, random_state=np.random.default_rng(3))
    assert np.array_equal(a.data, b.data) and a.data.shape == (50, 6) and np.isfinite(a.data).all()
    multi = generate(6, 50, 0.5, variant="multi", random_state=np.random.default_rng(4))
    assert multi.data.shape[1] == sum(len(g) for g in multi.groups) >= 6
    assert max(len(g) for g in multi.groups) <= 3
    discrete = generate(6, 80, 0.5, variant="discrete", random_state=np.random.default_rng(5))
    assert all(len(np.unique(c)) <= 20 for c in discrete.data.T)
    with pytest.raises(ValueError, match="variant"):
        generate(variant="images")


def _binned_r2(x, y, bins=10):
    edges = np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1])
    which = np.digitize(x, edges)
    means = np.array([y[which == b].mean() for b in range(bins)])
    return float(np.var(means[which]) / np.var(y))


def test_children_depend_on_their_parents():
    dag = np.array([[0, 1], [0, 0]])
    r2 = [_binned_r2(*simulate(dag, 400, np.random.default_rng(s)).data.T) for s in range(10)]
    assert np.median(r2) > 0.3  # the parent explains most of the child in a typical draw
    with pytest.raises(ValueError, match="cycle"):
        simulate(np.array([[0, 1], [1, 0]]), 10, np.random.default_rng(0))
