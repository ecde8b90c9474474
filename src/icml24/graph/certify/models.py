"""Base classifiers for node-aware bi-smoothing: two-layer GCN and GAT (as in Lai et al., S&P 2024).

Both split into ``encode(x)`` (a node-wise linear map that does not depend on the graph) and
``propagate(h, edge_index)`` (everything that does), with ``forward = propagate(encode(x), edge_index)``.
Monte Carlo smoothing encodes the features once and re-runs only ``propagate`` on perturbed graphs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def gcn_propagate(h: Tensor, edge_index: Tensor) -> Tensor:
    """``Â h`` with ``Â = D^-1/2 (A + I) D^-1/2``; ``edge_index`` holds both directions, no self-loops."""
    num_nodes = h.shape[0]
    src, dst = edge_index
    deg = torch.ones(num_nodes, dtype=h.dtype, device=h.device).index_add_(
        0, dst, torch.ones(dst.shape[0], dtype=h.dtype, device=h.device))
    inv_sqrt = deg.rsqrt()
    out = h * (inv_sqrt * inv_sqrt).unsqueeze(1)  # the self-loop term
    weight = (inv_sqrt[src] * inv_sqrt[dst]).unsqueeze(1)
    return out.index_add_(0, dst, h[src] * weight)


class GCN(nn.Module):
    """Two-layer GCN ``log_softmax(Â relu(Â X W1 + b1) W2 + b2)``, ``Â = D^-1/2 (A + I) D^-1/2`` (Kipf & Welling).

    Args:
        in_channels (int): number of input features.
        out_channels (int): number of classes.
        hidden_channels (int, default 64): hidden width.
        dropout (float, default 0.5): dropout on the hidden layer (training only).
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int = 64, dropout: float = 0.5):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, hidden_channels, bias=False)
        self.bias1 = nn.Parameter(torch.zeros(hidden_channels))
        self.lin2 = nn.Linear(hidden_channels, out_channels)
        self.dropout = dropout
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.lin1.weight)
        nn.init.xavier_uniform_(self.lin2.weight)
        nn.init.zeros_(self.bias1)
        nn.init.zeros_(self.lin2.bias)

    def encode(self, x: Tensor) -> Tensor:
        """x: ``[num_nodes, in_channels]`` (dense or sparse COO) -> ``X W1``: ``[num_nodes, hidden_channels]``."""
        if x.is_sparse:  # bag-of-words features are ~1% dense: a sparse product is far cheaper
            return torch.sparse.mm(x, self.lin1.weight.T)
        return self.lin1(x)

    def propagate(self, h: Tensor, edge_index: Tensor) -> Tensor:
        """h = ``encode(x)``, edge_index ``[2, num_edges]`` (both directions) -> log-probabilities ``[N, C]``."""
        h = F.relu(gcn_propagate(h, edge_index) + self.bias1)
        h = F.dropout(h, p=self.dropout, training=self.training)
        # Â (h W2) + b2 == Â h W2 + b2; multiply first so that the propagated width is C, not hidden
        out = gcn_propagate(h @ self.lin2.weight.T, edge_index) + self.lin2.bias
        return F.log_softmax(out, dim=1)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.propagate(self.encode(x), edge_index)

    def __repr__(self) -> str:
        return (f"GCN({self.lin1.in_features}, {self.lin2.out_features}, "
                f"hidden_channels={self.lin1.out_features}, dropout={self.dropout})")


class GAT(nn.Module):
    """Two-layer GAT with ``heads`` heads of ``hidden_channels // heads`` units (Veličković et al.), self-loops.

    ``encode`` is a bias-free linear map to ``hidden_channels`` dimensions, followed by GATConv layers; the
    composition of two linear maps spans the same functions as the first GATConv's own projection.

    Args:
        in_channels (int): number of input features.
        out_channels (int): number of classes.
        hidden_channels (int, default 64): total hidden width, split across heads.
        heads (int, default 8): attention heads of the first layer.
        dropout (float, default 0.5): dropout on attention and hidden features (training only).
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int = 64, heads: int = 8,
                 dropout: float = 0.5):
        super().__init__()
        from torch_geometric.nn import GATConv

        per_head = max(1, hidden_channels // heads)
        self.lin0 = nn.Linear(in_channels, per_head * heads, bias=False)
        self.conv1 = GATConv(per_head * heads, per_head, heads=heads, dropout=dropout)
        self.conv2 = GATConv(per_head * heads, out_channels, dropout=dropout)
        self.dropout = dropout
        self.heads = heads

    def reset_parameters(self) -> None:
        self.lin0.reset_parameters()
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()

    def encode(self, x: Tensor) -> Tensor:
        x = x.to_dense() if x.is_sparse else x
        return self.lin0(F.dropout(x, p=self.dropout, training=self.training))

    def propagate(self, h: Tensor, edge_index: Tensor) -> Tensor:
        h = F.elu(self.conv1(h, edge_index))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=1)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.propagate(self.encode(x), edge_index)

    def __repr__(self) -> str:
        return (f"GAT({self.lin0.in_features}, {self.conv2.out_channels}, "
                f"hidden_channels={self.lin0.out_features}, heads={self.heads}, dropout={self.dropout})")


def make_model(name: str, in_channels: int, out_channels: int, hidden_channels: int = 64,
               dropout: float = 0.5) -> nn.Module:
    """``"gcn"`` or ``"gat"`` -> a fresh base classifier."""
    name = name.lower()
    if name == "gcn":
        return GCN(in_channels, out_channels, hidden_channels, dropout)
    if name == "gat":
        return GAT(in_channels, out_channels, hidden_channels, dropout=dropout)
    raise ValueError(f"unknown base model {name!r}; expected 'gcn' or 'gat'")
