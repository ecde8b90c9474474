"""Centred kernel alignment, empirical NTK conventions and the analytic GCN NTK."""

import math

import numpy as np
import pytest
import torch
from torch import nn
from torch_geometric.data import Data

from icml24.graph import normalized_adjacency
from icml24.graph.alignment import (
    AlignmentTracker,
    TwoLayerGCN,
    centered_kernel_alignment,
    empirical_ntk,
    graph_kernel,
    track_gcn_alignment,
)


def random_psd(n, rank, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(n, rank, generator=g, dtype=torch.float64)
    return a @ a.T


def test_cka_of_a_kernel_with_itself_is_one_and_scale_invariant():
    k = random_psd(9, 4, 0)
    assert centered_kernel_alignment(k, k) == pytest.approx(1.0)
    assert centered_kernel_alignment(3.0 * k, k) == pytest.approx(1.0)


def test_cka_matches_explicit_centering_matrix():
    k1, k2 = random_psd(8, 3, 1), random_psd(8, 5, 2)
    h = torch.eye(8, dtype=torch.float64) - 1.0 / 8
    c1, c2 = h @ k1 @ h, h @ k2 @ h
    expected = float((c1 * c2).sum() / (c1.norm() * c2.norm()))
    assert centered_kernel_alignment(k1, k2) == pytest.approx(expected)
    assert centered_kernel_alignment(k1.numpy(), k2.numpy()) == pytest.approx(expected)
    assert expected < 0.99


def test_cka_rejects_mismatched_shapes_and_flags_constant_kernels():
    with pytest.raises(ValueError, match="square"):
        centered_kernel_alignment(torch.ones(3, 3), torch.ones(4, 4))
    assert math.isnan(centered_kernel_alignment(torch.ones(3, 3), random_psd(3, 2, 0)))


def test_ntk_of_linear_model_is_gram_matrix():
    x = torch.randn(7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    model = nn.Linear(4, 3, bias=False).double()
    gram = x @ x.T
    # J_{n,k} = e_k (x) x_n: summed -> C x x^T, trace -> C x x^T, full -> x x^T (x) I_C
    torch.testing.assert_close(empirical_ntk(model, x, convention="summed"), 3 * gram)
    torch.testing.assert_close(empirical_ntk(model, x, convention="trace"), 3 * gram)
    full = empirical_ntk(model, x, convention="full")
    torch.testing.assert_close(full, torch.einsum("nN,kK->nkNK", gram, torch.eye(3, dtype=torch.float64)))
    single = nn.Linear(4, 1).double()  # with a bias: x x^T + 1
    torch.testing.assert_close(empirical_ntk(single, x), gram + 1.0)


def test_summed_convention_sums_the_full_kernel():
    x = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2)).double()
    full = empirical_ntk(model, x, convention="full")
    torch.testing.assert_close(empirical_ntk(model, x, convention="summed"), full.sum(dim=(1, 3)))
    torch.testing.assert_close(empirical_ntk(model, x, convention="trace"), full.diagonal(dim1=1, dim2=3).sum(-1))
    with pytest.raises(ValueError, match="no trainable parameter"):
        empirical_ntk(model, x, parameters=["nope"])


@pytest.mark.parametrize("convention", ["summed", "trace"])
def test_analytic_gcn_ntk_equals_autodiff(convention):
    n, d = 10, 4
    edge_index = torch.randint(0, n, (2, 25), generator=torch.Generator().manual_seed(3))
    operator = normalized_adjacency(edge_index, n).to_dense()
    x = torch.rand(n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    torch.manual_seed(5)
    model = TwoLayerGCN(operator, d, 5, 3).double()
    blocks = model.ntk(operator @ x, convention)
    for name, block in blocks.items():
        torch.testing.assert_close(block, empirical_ntk(model, x, convention=convention, parameters=[name]))
    torch.testing.assert_close(sum(blocks.values()), empirical_ntk(model, x, convention=convention))


def test_graph_kernel_and_tracker():
    n = 6
    edge_index = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]])
    s = normalized_adjacency(edge_index, n)
    s4 = graph_kernel(s, 4)
    torch.testing.assert_close(s4, torch.linalg.matrix_power(s.to_dense(), 4))
    y = torch.nn.functional.one_hot(torch.tensor([0, 0, 0, 1, 1, 1])).double()
    tracker = AlignmentTracker(s4, y @ y.T)
    assert tracker.graph_label_alignment == pytest.approx(centered_kernel_alignment(s4, y @ y.T))
    entry = tracker.record(0, {"a": s4, "b": torch.ones(n, n, dtype=torch.float64)}, loss=1.0)
    assert entry["ntk_graph"] == pytest.approx(1.0) and entry["share[a]"] == pytest.approx(1.0)
    assert "ntk_graph[b]" not in entry  # a constant block vanishes once centred
    assert tracker.as_arrays()["loss"].tolist() == [1.0]
    other = random_psd(n, 3, 5) + torch.rand(n, n, dtype=torch.float64)  # not symmetric
    entry = tracker.record(1, other)  # centred alignment without forming H K H
    assert entry["ntk_graph"] == pytest.approx(centered_kernel_alignment(other, s4), rel=1e-10)
    assert entry["ntk_label"] == pytest.approx(centered_kernel_alignment(other, y @ y.T), rel=1e-10)


def test_track_gcn_alignment_on_tiny_graph():
    rng = np.random.default_rng(0)
    n = 30
    y = torch.from_numpy(np.arange(n) % 3)
    same = rng.integers(0, n, 90)
    edge_index = torch.from_numpy(np.stack([same, (same + 3 * rng.integers(1, 4, 90)) % n])).long()
    x = torch.from_numpy(rng.random((n, 8))).float() + torch.nn.functional.one_hot(y, 8).float()
    train = torch.zeros(n, dtype=torch.bool)
    train[:9] = True
    data = Data(x=x, edge_index=edge_index, y=y, train_mask=train, test_mask=~train, num_nodes=n)
    tracker = track_gcn_alignment(data, steps=20, every=10, lr=0.5, random_state=0)
    arrays = tracker.as_arrays()
    assert arrays["step"].tolist() == [0.0, 10.0, 20.0]
    assert np.all(np.isfinite(arrays["ntk_graph"])) and np.all(np.isfinite(arrays["ntk_label"]))
    assert tracker.graph_label_alignment > 0.5  # the graph joins same-class nodes only


def test_rows_forward_equals_the_full_forward_on_those_rows_with_the_same_gradients():
    """Training on the training rows' 1-hop support is exact: logits and weight gradients equal the full graph's."""
    rng = np.random.default_rng(1)
    n, d = 40, 6
    edge_index = torch.from_numpy(rng.integers(0, n, (2, 80))).long()
    operator = normalized_adjacency(edge_index, n, dtype=torch.float64)
    x = torch.from_numpy(rng.random((n, d)))
    sx = operator @ x
    rows = torch.tensor([0, 3, 7, 8])
    row_operator = operator.to_sparse_coo().index_select(0, rows).to_dense()
    support = row_operator.abs().sum(dim=0).nonzero().flatten()
    assert len(support) < n  # a real restriction
    torch.manual_seed(0)
    model = TwoLayerGCN(operator, d, 5, 3).double()
    full = model(sx, propagated=True)[rows]
    full.square().sum().backward()
    expected = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    restricted = model.rows_forward(sx[support], row_operator[:, support])
    restricted.square().sum().backward()
    torch.testing.assert_close(restricted, full)
    for grad, reference in zip((p.grad for p in model.parameters()), expected):
        torch.testing.assert_close(grad, reference)
