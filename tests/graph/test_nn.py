"""The shared node classifiers (GCN, GAT, MLP) and the GCN operator in both forms."""

import pytest
import torch

from icml24.graph import GAT, GCN, MLP, gcn_propagate, normalized_adjacency, sparse_features
from icml24.graph.nn import dropout


def small_graph(seed=0, n=20, num_features=12):
    gen = torch.Generator().manual_seed(seed)
    upper = torch.triu(torch.rand(n, n, generator=gen) < 0.25, 1)
    edge_index = (upper | upper.T).nonzero().T
    x = torch.rand(n, num_features, generator=gen)
    x[x < 0.7] = 0.0  # mostly zero, like bag-of-words features
    return x, edge_index


def dense_operator(edge_index, n):
    a = torch.zeros(n, n)
    a[edge_index[0], edge_index[1]] = 1.0
    a = a + torch.eye(n)
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :]


def test_gcn_propagate_equals_the_normalized_adjacency_and_pyg():
    from torch_geometric.nn import GCNConv

    x, edge_index = small_graph()
    h = torch.rand(x.shape[0], 4)
    expected = dense_operator(edge_index, x.shape[0]) @ h
    torch.testing.assert_close(gcn_propagate(h, edge_index), expected)
    operator = normalized_adjacency(edge_index, x.shape[0], dtype=torch.float32)
    torch.testing.assert_close(gcn_propagate(h, operator), expected)  # a matrix is used as given
    torch.testing.assert_close(gcn_propagate(h, operator.to_dense()), expected)
    conv = GCNConv(4, 4, bias=False)
    conv.lin.weight.data = torch.eye(4)
    torch.testing.assert_close(gcn_propagate(h, edge_index), conv(h, edge_index), atol=1e-6, rtol=1e-5)


def test_gcn_is_the_two_layer_formula():
    x, edge_index = small_graph(1)
    model = GCN(x.shape[1], 3, hidden_channels=8).eval()
    s = dense_operator(edge_index, x.shape[0])
    hidden = torch.relu(s @ x @ model.lin1.weight.T + model.bias1)
    expected = s @ hidden @ model.lin2.weight.T + model.lin2.bias
    torch.testing.assert_close(model(x, edge_index), expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(model(x, s), expected, atol=1e-5, rtol=1e-4)  # a propagation matrix instead
    torch.testing.assert_close(model.propagate(model.encode(x), edge_index), model(x, edge_index))


def test_gat_equals_pyg_two_layer_gat():
    from torch_geometric.nn import GATConv

    x, edge_index = small_graph(2)
    model = GAT(x.shape[1], 3, hidden_channels=16, heads=4, dropout=0.6).eval()
    conv1 = GATConv(x.shape[1], 4, heads=4, dropout=0.6).eval()
    conv2 = GATConv(16, 3, heads=1, concat=False, dropout=0.6).eval()
    conv1.lin.weight.data = model.lin1.weight.data.clone()
    conv1.att_src.data, conv1.att_dst.data = model.conv1.att_src.data, model.conv1.att_dst.data
    conv1.bias.data = torch.rand(16)
    model.conv1.bias.data = conv1.bias.data.clone()
    conv2.load_state_dict(model.conv2.state_dict())
    expected = conv2(torch.nn.functional.elu(conv1(x, edge_index)), edge_index)
    torch.testing.assert_close(model(x, edge_index), expected, atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="edge_index"):
        model(x, dense_operator(edge_index, x.shape[0]))


@pytest.mark.parametrize("cls", [GCN, GAT, MLP])
def test_models_accept_sparse_features(cls):
    x, edge_index = small_graph(3)
    model = cls(x.shape[1], 3).eval()
    dense = model(x, edge_index)
    assert dense.shape == (x.shape[0], 3)
    torch.testing.assert_close(model(sparse_features(x, max_density=0.5), edge_index), dense, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(model(x.to_sparse(), edge_index), dense, atol=1e-6, rtol=1e-5)
    assert cls.__name__ in repr(model)


def test_mlp_ignores_the_graph_and_reset_redraws():
    x, edge_index = small_graph(4)
    model = MLP(x.shape[1], 3, hidden_channels=5).eval()
    torch.testing.assert_close(model(x, edge_index), model(x))
    before = model.lin1.weight.detach().clone()
    model.reset_parameters()
    assert not torch.equal(before, model.lin1.weight)
    assert torch.count_nonzero(model.lin1.bias) == 0


def test_sparse_dropout_drops_stored_entries_only():
    x, _ = small_graph(5, n=200, num_features=50)
    csr = sparse_features(x, max_density=0.5)
    assert csr.layout == torch.sparse_csr
    dropped = dropout(csr, 0.5, training=True).to_dense()
    assert torch.all(dropped[x == 0] == 0)  # zeros stay zero
    kept = dropped[x != 0] != 0
    assert 0.4 < kept.float().mean() < 0.6
    torch.testing.assert_close(dropped[x != 0][kept], 2 * x[x != 0][kept])  # survivors are rescaled
    assert dropout(csr, 0.5, training=False) is csr
    dense_x = torch.rand(4, 4) + 1.0
    assert sparse_features(dense_x) is dense_x  # dense features stay dense
