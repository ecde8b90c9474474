import itertools

import numpy as np
import pytest
import torch

from icml24.data import csbm
from icml24.graph.distill import herding_coreset, random_coreset
from icml24.graph.distill.coresets import herding_select


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=90, num_features=8, num_classes=3, random_state=1, avg_degree=8.0, split=(0.5, 0.2))


def test_random_coreset_counts_and_induced_edges(graph):
    counts = np.array([2, 3, 4])
    core = random_coreset(graph, counts, random_state=0)
    np.testing.assert_array_equal(np.bincount(core.y.numpy(), minlength=3), counts)
    assert graph.train_mask[core.node_index].all()
    original = set(map(tuple, graph.edge_index.T.tolist()))
    for s, t in core.edge_index.T.tolist():
        assert (int(core.node_index[s]), int(core.node_index[t])) in original
    # every real edge between selected nodes is kept
    chosen = set(core.node_index.tolist())
    inside = sum(1 for s, t in original if s in chosen and t in chosen)
    assert core.edge_index.shape[1] == inside
    torch.testing.assert_close(core.x, graph.x[core.node_index])
    assert random_coreset(graph, counts, random_state=0).node_index.tolist() == core.node_index.tolist()


def test_herding_matches_brute_force_greedy():
    g = torch.Generator().manual_seed(0)
    emb = torch.randn(12, 3, generator=g)
    order = herding_select(emb, 4).tolist()
    mu, chosen = emb.mean(0), []
    for _ in range(4):  # brute-force greedy
        best = min((i for i in range(12) if i not in chosen),
                   key=lambda i: (emb[chosen + [i]].mean(0) - mu).norm().item())
        chosen.append(best)
    assert order == chosen
    # with the full budget herding picks every row once
    assert sorted(herding_select(emb, 12).tolist()) == list(range(12))


def test_herding_beats_worst_subset_mean_error():
    g = torch.Generator().manual_seed(3)
    emb = torch.randn(9, 2, generator=g)
    sel = herding_select(emb, 3)
    err = (emb[sel].mean(0) - emb.mean(0)).norm()
    errors = [(emb[list(c)].mean(0) - emb.mean(0)).norm() for c in itertools.combinations(range(9), 3)]
    assert err <= np.quantile(errors, 0.25)


def test_herding_coreset_counts_and_errors(graph):
    counts = np.array([1, 2, 3])
    core = herding_coreset(graph, counts)
    np.testing.assert_array_equal(np.bincount(core.y.numpy(), minlength=3), counts)
    with pytest.raises(ValueError, match="per class"):
        herding_coreset(graph, np.array([100, 1, 1]))
