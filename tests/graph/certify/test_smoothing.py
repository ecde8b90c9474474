"""Node-aware bi-smoothing: Clopper–Pearson bounds, the exact fast vote counter, and the sampling distribution."""

import numpy as np
import pytest
import torch
from scipy import stats

from icml24._validation import NotFittedError
from icml24.graph.certify import GAT, GCN, NodeAwareSmoothing, clopper_pearson, smoothed_votes, top_two
from icml24.graph.certify.bruteforce import exact_smoothed_probabilities
from icml24.graph.certify.smoothing import sample_kept_edges, undirected_edges


def test_clopper_pearson_matches_scipy_exact_interval():
    n, alpha = 1000, 2 * 0.01 / 7
    k_a = np.array([1000, 990, 600, 400, 0])
    k_b = np.array([0, 10, 300, 350, 0])
    lower, upper = clopper_pearson(k_a, k_b, n, alpha)
    for i in range(k_a.size):
        assert lower[i] == pytest.approx(stats.binomtest(k_a[i], n).proportion_ci(1 - alpha, "exact").low, abs=1e-12)
        assert upper[i] == pytest.approx(stats.binomtest(k_b[i], n).proportion_ci(1 - alpha, "exact").high, abs=1e-12)
    with pytest.raises(ValueError):
        clopper_pearson([5], [6], 20, 0.01)


def small_graph(seed=0, n=25, num_features=12, num_classes=3):
    gen = torch.Generator().manual_seed(seed)
    upper = torch.triu(torch.rand(n, n, generator=gen) < 0.2, 1)
    edge_index = (upper | upper.T).nonzero().T
    x = torch.rand(n, num_features, generator=gen)
    return x, edge_index, num_classes


def naive_votes(model, x, edge_index, p_e, p_n, num_samples, batch_size, generator):
    """Reference: one full forward per perturbed graph, with the same random draws as smoothed_votes."""
    edges = undirected_edges(edge_index)
    counts = torch.zeros(x.shape[0], 3, dtype=torch.long)
    done = 0
    while done < num_samples:
        batch = min(batch_size, num_samples - done)
        done += batch
        sample_id, edge_id = sample_kept_edges(edges, x.shape[0], p_e, p_n, batch, generator)
        for s in range(batch):
            kept = edges[:, edge_id[sample_id == s]]
            pred = model(x, torch.cat([kept, kept.flip(0)], dim=1)).argmax(1)
            counts[torch.arange(x.shape[0]), pred] += 1
    return counts


@pytest.mark.parametrize("model_cls", [GCN, GAT])
def test_fast_votes_equal_full_forward_votes(model_cls):
    x, edge_index, num_classes = small_graph()
    torch.manual_seed(0)
    model = model_cls(x.shape[1], num_classes, hidden_channels=16).eval()
    with torch.no_grad():
        reference = naive_votes(model, x, edge_index, 0.5, 0.3, 60, 25, torch.Generator().manual_seed(3))
    fast = smoothed_votes(model, x, edge_index, 0.5, 0.3, 60, num_classes, 25, torch.Generator().manual_seed(3))
    assert torch.equal(fast, reference)
    assert (fast.sum(1) == 60).all()


def test_votes_follow_the_smoothing_distribution():
    """Monte Carlo frequencies match exact probabilities (enumeration of all 2^(E+N) deletion patterns)."""
    n = 5
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 0, 4], [1, 0, 2, 1, 3, 2, 4, 0]])
    x = torch.eye(n)
    torch.manual_seed(1)
    model = GCN(n, 3, hidden_channels=8).eval()
    p_e, p_n, num = 0.4, 0.3, 40_000

    def classify(adj):
        out = []
        for a in adj:
            ei = torch.as_tensor(np.stack(np.nonzero(a)), dtype=torch.long)
            out.append(model(x, ei).argmax(1).numpy())
        return np.stack(out)

    adj = np.zeros((n, n), dtype=bool)
    adj[edge_index[0], edge_index[1]] = True
    with torch.no_grad():
        exact = exact_smoothed_probabilities(classify, adj, p_e, p_n, 3)
    votes = smoothed_votes(model, x, edge_index, p_e, p_n, num, 3, 5000, torch.Generator().manual_seed(0)).numpy()
    freq = votes / num
    sigma = np.sqrt(exact * (1 - exact) / num) + 1e-9
    assert np.all(np.abs(freq - exact) <= 5 * sigma + 1e-6)
    assert (exact.max(1) < 1).any()  # the distribution is not degenerate


@pytest.mark.parametrize("model", ["gcn", "gat"])
def test_node_aware_smoothing_fit_votes(model):
    from torch_geometric.data import Data

    x, edge_index, num_classes = small_graph(2, n=40)
    y = torch.arange(40) % num_classes
    data = Data(x=x + torch.nn.functional.one_hot(y, 12)[:, :12].float(), edge_index=edge_index, y=y)
    kwargs = {"p_e": 0.5, "p_n": 0.5, "model": model, "epochs": 40, "num_samples": 200, "batch_size": 64}
    smoother = NodeAwareSmoothing(**kwargs, random_state=0)
    state = torch.get_rng_state()
    smoother.fit(data, np.arange(0, 15), np.arange(15, 25))
    counts = smoother.votes(data)
    assert torch.equal(torch.get_rng_state(), state)  # the seed drives a generator, never the global RNG
    again = NodeAwareSmoothing(**kwargs, random_state=0)
    np.testing.assert_array_equal(again.fit(data, np.arange(0, 15), np.arange(15, 25)).votes(data), counts)
    assert counts.shape == (40, num_classes) and (counts.sum(1) == 200).all()
    top2, count_top, count_runner_up = top_two(counts)
    assert (count_top >= count_runner_up).all() and (top2[:, 0] == smoother.predict()).all()
    lower, upper = smoother.bounds()
    assert np.all(lower <= count_top / 200) and np.all(upper >= count_runner_up / 200)
    assert "p_e=0.5" in repr(smoother)
    with pytest.raises(NotFittedError, match="fit"):
        NodeAwareSmoothing().votes(data)
    with pytest.raises(NotFittedError):
        NodeAwareSmoothing().bounds()


def test_random_state_is_the_one_seed_argument():
    """Issue #46: an int draws what ``torch.Generator().manual_seed(int)`` drew; Generators and None are accepted."""
    from torch_geometric.data import Data

    x, edge_index, num_classes = small_graph(1)
    torch.manual_seed(0)
    model = GCN(x.shape[1], num_classes, hidden_channels=8).eval()
    by_int = smoothed_votes(model, x, edge_index, 0.5, 0.3, 80, num_classes, 32, 3)
    assert torch.equal(by_int, smoothed_votes(model, x, edge_index, 0.5, 0.3, 80, num_classes, 32,
                                              torch.Generator().manual_seed(3)))
    assert not torch.equal(by_int, smoothed_votes(model, x, edge_index, 0.5, 0.3, 80, num_classes, 32, 4))
    assert (smoothed_votes(model, x, edge_index, 0.5, 0.3, 80, num_classes, 32).sum(1) == 80).all()  # fresh
    with pytest.raises(ValueError, match="random_state"):
        smoothed_votes(model, x, edge_index, 0.5, 0.3, 80, num_classes, 32, -1)
    y = torch.arange(x.shape[0]) % num_classes
    data = Data(x=x, edge_index=edge_index, y=y)
    smoother = NodeAwareSmoothing(p_e=0.5, p_n=0.5, epochs=3, num_samples=50, random_state=np.random.default_rng(0))
    smoother.fit(data, np.arange(10), np.arange(10, 20))
    np.testing.assert_array_equal(smoother.votes(data), smoother.votes(data))  # the votes' stream is fixed at fit
    assert "random_state=" in repr(smoother)
