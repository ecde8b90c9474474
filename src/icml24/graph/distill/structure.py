"""GCond's structure generator: the synthetic adjacency as a function of the synthetic features.

GCond (Jin et al., ICLR 2022, Eq. 6) does not learn ``A'`` entry by entry; it parametrizes it by an MLP of the
feature pairs, ``A'_ij = sigmoid((MLP([x'_i; x'_j]) + MLP([x'_j; x'_i])) / 2)``, with a zero diagonal. The MLP
(official ``PGE``: 3 layers, 128 hidden units, batch normalization over the ``n'^2`` pairs, ReLU) is the
parameter that gradient matching updates, alongside ``X'``.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class PairwiseStructure(nn.Module):
    """``A' = g_phi(X')``: a symmetric ``[n', n']`` adjacency in ``(0, 1)`` with a zero diagonal (GCond Eq. 6).

    The first layer on the concatenated pair ``[x_i; x_j]`` is applied as ``x_i W_a + x_j W_b + b`` (the same
    value, without materializing the ``n'^2 x 2d`` pair matrix). Batch normalization always uses the statistics
    of the current ``n'^2`` pairs, as the official module (never switched to eval mode) does.

    Args:
        in_features (int): ``d``; hidden (int): width of the hidden layers (128); layers (int): ``>= 2`` (3).
    """

    def __init__(self, in_features: int, hidden: int = 128, layers: int = 3):
        super().__init__()
        if layers < 2:
            raise ValueError(f"the structure MLP needs at least 2 layers, got {layers}")
        self.first = nn.Linear(2 * in_features, hidden)
        self.hidden_layers = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers - 2))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden) for _ in range(layers - 1))
        self.last = nn.Linear(hidden, 1)
        self.in_features = in_features

    def reset_parameters(self) -> None:
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.BatchNorm1d)):
                module.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, d = x.shape
        w_a, w_b = self.first.weight[:, :d], self.first.weight[:, d:]
        pairs = (x @ w_a.T).unsqueeze(1) + (x @ w_b.T).unsqueeze(0) + self.first.bias  # [n, n, h]: row i, col j
        h = F.relu(self._norm(0, pairs.reshape(n * n, -1)))
        for i, layer in enumerate(self.hidden_layers):
            h = F.relu(self._norm(i + 1, layer(h)))
        logits = self.last(h).reshape(n, n)
        adj = torch.sigmoid((logits + logits.T) / 2)
        return adj - torch.diag_embed(torch.diagonal(adj))

    def _norm(self, i: int, h: torch.Tensor) -> torch.Tensor:
        norm = self.norms[i]
        return F.batch_norm(h, None, None, norm.weight, norm.bias, training=True, eps=norm.eps)


def normalize_dense_adjacency(adj: torch.Tensor) -> torch.Tensor:
    """GCN's ``D^{-1/2} (A + I) D^{-1/2}`` of a dense, non-negative ``[n, n]`` ``adj`` (differentiable)."""
    adj = adj + torch.eye(adj.shape[0], dtype=adj.dtype, device=adj.device)
    inv_sqrt = adj.sum(1).clamp_min(1e-12).rsqrt()
    return inv_sqrt[:, None] * adj * inv_sqrt[None, :]
