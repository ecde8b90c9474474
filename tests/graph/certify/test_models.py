"""Row-normalized GCN: its propagation, and the receptive field for injected nodes the certificate relies on."""

import numpy as np
import pytest
import torch

from icml24.graph.certify import GCN, NodeAwareSmoothing, RowNormalizedGCN, row_propagate, smoothed_votes
from icml24.graph.certify.smoothing import _base_model


def path_edges(n):
    src = torch.arange(n - 1)
    return torch.stack([torch.cat([src, src + 1]), torch.cat([src + 1, src])])


def test_row_propagate_is_the_closed_neighbourhood_mean():
    edges = path_edges(4)
    h = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    a = torch.eye(4)
    a[edges[0], edges[1]] = 1.0
    torch.testing.assert_close(row_propagate(h, edges), (a / a.sum(1, keepdim=True)) @ h)
    with pytest.raises(ValueError, match="edge_index"):
        row_propagate(h, a)


@pytest.mark.parametrize("cls,reaches", [(GCN, True), (RowNormalizedGCN, False)])
def test_injection_three_hops_away(cls, reaches):
    """Path 0-1-2-3 plus an injected node 4 tied to node 1: node 3 is 3 hops away. The symmetric GCN's output at
    node 3 moves (it reads node 1's degree), the row-normalized GCN's does not; both move at node 2 (2 hops)."""
    torch.manual_seed(0)
    model = cls(3, 2, hidden_channels=8, dropout=0.0).eval()
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    x[4] = 0.0  # featureless injected node
    clean = path_edges(4)
    attacked = torch.cat([clean, torch.tensor([[1, 4], [4, 1]])], dim=1)
    with torch.no_grad():
        before, after = model(x, clean), model(x, attacked)
    assert not torch.allclose(before[2], after[2])
    assert torch.allclose(before[3], after[3]) is not reaches


def test_row_gcn_votes_and_smoothing_option():
    torch.manual_seed(0)
    model = RowNormalizedGCN(3, 2, hidden_channels=4).eval()
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(2))
    votes = smoothed_votes(model, x, path_edges(6), 0.3, 0.2, 50, 2, 16, torch.Generator().manual_seed(0))
    assert (votes.sum(1) == 50).all()
    assert isinstance(_base_model("gcn", 3, 2, 4, 0.5, "row"), RowNormalizedGCN)
    assert type(_base_model("gcn", 3, 2, 4, 0.5)) is GCN
    with pytest.raises(ValueError, match="normalization"):
        _base_model("gcn", 3, 2, 4, 0.5, "left")
    assert "normalization='row'" in repr(NodeAwareSmoothing(normalization="row"))
    assert np.isfinite(model(x, path_edges(6)).detach().numpy()).all()
