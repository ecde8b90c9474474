import numpy as np
import torch

from icml24.data import csbm
from icml24.graph.distill import prepare_real_graph, random_coreset, train_on_synthetic, train_on_whole_graph
from icml24.graph.distill.models import ARCHITECTURES, build_model
from icml24.graph.distill.training import gcn_normalized_adjacency


def test_gcn_normalization_matches_dense_formula():
    edges = torch.tensor([[0, 1, 2], [1, 2, 3]])
    a = torch.zeros(4, 4)
    a[edges[0], edges[1]] = 1
    a = a + a.T + torch.eye(4)
    d = a.sum(1).pow(-0.5)
    torch.testing.assert_close(gcn_normalized_adjacency(edges, 4, dense=True), d[:, None] * a * d[None, :])
    torch.testing.assert_close(gcn_normalized_adjacency(edges, 4).to_dense(), d[:, None] * a * d[None, :])


def test_models_accept_sparse_and_dense_inputs():
    x = torch.rand(6, 5)
    x[x < 0.6] = 0
    adj = gcn_normalized_adjacency(torch.tensor([[0, 1, 2, 4], [1, 2, 3, 5]]), 6)
    for name in ARCHITECTURES:
        torch.manual_seed(0)
        model = build_model(name, 5, 3, hidden=4).eval()
        torch.testing.assert_close(model(x.to_sparse_csr(), adj), model(x, adj.to_dense()))


def test_training_beats_chance_and_is_seeded():
    data = csbm(num_nodes=200, num_features=16, num_classes=2, homophily=0.9, feature_signal=3.0, seed=0,
                avg_degree=6.0, split=(0.3, 0.2))
    real = prepare_real_graph(data)
    whole = train_on_whole_graph(real, hidden=16, epochs=40, seed=0)
    assert whole["test_acc"] > 0.8
    core = random_coreset(data, np.array([5, 5]), seed=0)
    a = train_on_synthetic(core, real, architecture="SGC", epochs=40, seed=1)
    b = train_on_synthetic(core, real, architecture="SGC", epochs=40, seed=1)
    assert a["test_acc"] == b["test_acc"] and a["test_acc"] > 0.7
    assert 0 <= a["best_epoch"] < 40
