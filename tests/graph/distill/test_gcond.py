import numpy as np
import pytest
import torch
import torch.nn.functional as F

from icml24._validation import NotFittedError
from icml24.data import csbm
from icml24.graph import normalized_adjacency
from icml24.graph.distill import (
    GCond,
    PairwiseStructure,
    gradient_distance,
    normalize_dense_adjacency,
    prepare_real_graph,
    synthetic_label_counts,
    train_on_synthetic,
)


def small_graph(seed=0):
    data = csbm(num_nodes=150, num_features=12, num_classes=3, homophily=0.85, feature_signal=2.5, random_state=seed,
                avg_degree=5.0, split=(0.3, 0.2))
    data.x = data.x.abs()
    return data


def test_gradient_distance_is_per_output_cosine_and_ignores_biases():
    g = torch.randn(7, 3)
    assert float(gradient_distance(g, g)) == pytest.approx(0.0, abs=1e-5)
    assert float(gradient_distance(3.0 * g, g)) == pytest.approx(0.0, abs=1e-5)  # scale-free per output unit
    assert float(gradient_distance(-g, g)) == pytest.approx(6.0, abs=1e-4)  # 1 - (-1) for each of 3 outputs
    flipped = g.clone()
    flipped[:, 0] *= -1  # one output column reversed costs 2, the others 0
    assert float(gradient_distance(flipped, g)) == pytest.approx(2.0, abs=1e-4)
    assert float(gradient_distance(torch.randn(3), torch.randn(3))) == 0.0


def test_structure_equals_the_mlp_on_concatenated_pairs_and_is_a_valid_adjacency():
    torch.manual_seed(0)
    model = PairwiseStructure(5, hidden=8, layers=3)
    x = torch.randn(6, 5)
    adj = model(x)
    pairs = torch.cat([x.repeat_interleave(6, 0), x.repeat(6, 1)], dim=1)  # row i*6+j = [x_i; x_j]
    h = F.relu(F.batch_norm(model.first(pairs), None, None, model.norms[0].weight, model.norms[0].bias, training=True))
    h = F.relu(F.batch_norm(model.hidden_layers[0](h), None, None, model.norms[1].weight, model.norms[1].bias,
                            training=True))
    logits = model.last(h).reshape(6, 6)
    expected = torch.sigmoid((logits + logits.T) / 2) * (1 - torch.eye(6))
    torch.testing.assert_close(adj, expected)
    assert torch.equal(adj, adj.T) and torch.all(adj.diagonal() == 0)
    off = adj[~torch.eye(6, dtype=torch.bool)]
    assert torch.all((off > 0) & (off < 1))
    with pytest.raises(ValueError, match="at least 2 layers"):
        PairwiseStructure(5, layers=1)


def test_dense_normalization_matches_gcn_operator():
    edge_index = torch.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 4]])
    edge_index = torch.cat([edge_index, edge_index.flip(0)], 1).unique(dim=1)
    adj = torch.zeros(5, 5)
    adj[edge_index[0], edge_index[1]] = 1.0
    expected = normalized_adjacency(edge_index, 5, dtype=torch.float32).to_dense()
    torch.testing.assert_close(normalize_dense_adjacency(adj), expected)


def test_fit_shapes_labels_determinism_and_no_global_rng_use():
    data = small_graph()
    state = torch.get_rng_state()
    small = dict(reduction_rate=0.2, epochs=2, outer_loop=2, inner_loop=1, structure_hidden=16)
    a = GCond(random_state=1, **small).fit(data)
    assert torch.equal(torch.get_rng_state(), state)
    counts = synthetic_label_counts(data.y[data.train_mask], 0.2, 3)
    graph = a.graph_
    assert graph.x.shape == (counts.sum(), 12) and graph.adj.shape == (counts.sum(), counts.sum())
    assert np.array_equal(np.bincount(graph.y.numpy(), minlength=3), counts)
    assert torch.allclose(graph.adj.sum(1) > 0, torch.ones(len(graph.y), dtype=torch.bool))
    b = GCond(random_state=1, **small).fit(data)
    c = GCond(random_state=2, **small).fit(data)
    assert torch.equal(a.graph_.x, b.graph_.x) and torch.equal(a.graph_.adj, b.graph_.adj)
    assert not torch.equal(a.graph_.x, c.graph_.x)
    assert a.condense_seconds_ <= a.seconds_ and a.history_.shape == (2,)


def test_initial_features_are_real_training_nodes_of_the_right_class():
    data = small_graph()
    model = GCond(reduction_rate=0.3, epochs=1, outer_loop=1, lr_features=0.0, random_state=0).fit(data)
    train = data.train_mask.nonzero().view(-1)
    for row, label in zip(model.graph_.x, model.graph_.y):  # lr 0: X' is still its initialization
        match = (data.x[train] == row).all(1)
        assert match.any() and bool((data.y[train][match] == label).all())


def test_matching_lowers_the_gradient_distance_and_helps_accuracy():
    data = small_graph()
    kwargs = dict(reduction_rate=0.2, outer_loop=3, inner_loop=2, lr_features=0.02, lr_structure=0.02, random_state=0)
    model = GCond(epochs=8, structure_hidden=16, **kwargs).fit(data)
    assert model.history_[-3:].mean() < 0.8 * model.history_[:3].mean()
    real = prepare_real_graph(data)
    acc = train_on_synthetic(model.graph_, real, epochs=30, hidden=16, random_state=torch.Generator().manual_seed(0))
    assert acc["test_acc"] > 0.6  # chance is 1/3


def test_errors_name_the_fix():
    data = small_graph()
    with pytest.raises(NotFittedError, match="call fit"):
        _ = GCond().graph_
    bad = data.clone()
    bad.train_mask = None
    with pytest.raises(ValueError, match="train_mask"):
        GCond().fit(bad)
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        GCond(epochs=0).fit(data)
    with pytest.raises(ValueError, match="reduction_rate"):
        GCond(reduction_rate=0.0).fit(data)
    nan = data.clone()
    nan.x = nan.x.clone()
    nan.x[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        GCond(epochs=1).fit(nan)
