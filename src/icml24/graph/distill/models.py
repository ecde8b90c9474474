"""The evaluation models of graph distillation: GCN and MLP from ``icml24.graph.nn``, and GDEM's SGC, APPNP
and ChebNet.

Every model is ``forward(x, graph) -> logits [n, C]`` where ``graph`` is an ``edge_index`` or a propagation matrix
``[n, n]`` used as given (see ``gcn_propagate``): a distilled graph is GDEM's dense,
signed ``A' = I - U' Lambda U'^T``, which has no edge list. ``x [n, d]`` may be dense or sparse.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..nn import GCN, MLP, Linear, dropout
from ..operators import gcn_propagate


class SGC(nn.Module):
    """SGC (Wu et al., ICML 2019): ``S^K X W + b``, linear, no dropout.

    Kept here (not in ``icml24.graph.nn``) because only GDEM's cross-architecture table uses it, in the
    official evaluation form (the bias after propagation).
    """

    def __init__(self, in_features: int, num_classes: int, hops: int = 2, **_):
        super().__init__()
        self.linear, self.hops = Linear(in_features, num_classes, bias=False), hops
        self.bias = nn.Parameter(torch.zeros(num_classes))

    def reset_parameters(self) -> None:
        self.linear.reset_parameters()
        nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        for _ in range(self.hops):
            h = gcn_propagate(h, graph)
        return h + self.bias


class APPNP(nn.Module):
    """APPNP (Gasteiger et al., ICLR 2019): an MLP, then ``K`` steps of ``h <- (1 - a) S h + a h0``.

    Kept here because only GDEM's cross-architecture table uses it (the official evaluation form).
    """

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5,
                 hops: int = 10, teleport: float = 0.1):
        super().__init__()
        self.layer1, self.layer2 = Linear(in_features, hidden), Linear(hidden, num_classes)
        self.dropout, self.hops, self.teleport = dropout, hops, teleport

    def reset_parameters(self) -> None:
        self.layer1.reset_parameters()
        self.layer2.reset_parameters()

    def forward(self, x: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.dropout(F.relu(self.layer1(x)), self.dropout, self.training)
        h0 = self.layer2(h)
        h = h0
        for _ in range(self.hops):
            h = (1.0 - self.teleport) * gcn_propagate(h, graph) + self.teleport * h0
        return h


class ChebLayer(nn.Module):
    """Order-1 Chebyshev layer as in the GDEM code: ``X W0 + S X W1 + b`` (``S`` the given propagation matrix)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.lin0 = Linear(in_features, out_features, bias=False)
        self.lin1 = Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def reset_parameters(self) -> None:
        self.lin0.reset_parameters()
        self.lin1.reset_parameters()
        nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        return self.lin0(x) + gcn_propagate(self.lin1(x), graph) + self.bias


class ChebNet(nn.Module):
    """Two ChebLayers with ReLU and dropout; kept here because only GDEM's cross-architecture table uses this
    order-1 variant of the official evaluation code."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5):
        super().__init__()
        self.layer1, self.layer2, self.dropout = ChebLayer(in_features, hidden), ChebLayer(hidden, num_classes), dropout

    def reset_parameters(self) -> None:
        self.layer1.reset_parameters()
        self.layer2.reset_parameters()

    def forward(self, x: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.dropout(F.relu(self.layer1(x, graph)), self.dropout, self.training)
        return self.layer2(h, graph)


ARCHITECTURES = ("GCN", "SGC", "APPNP", "ChebNet", "MLP")


def build_model(architecture: str, in_features: int, num_classes: int, hidden: int = 256,
                dropout: float = 0.5) -> nn.Module:
    """One of ``ARCHITECTURES`` by name, as GDEM evaluates: dropout on the input and the hidden layer."""
    if architecture == "GCN":
        return GCN(in_features, num_classes, hidden_channels=hidden, dropout=dropout, input_dropout=True)
    if architecture == "MLP":
        return MLP(in_features, num_classes, hidden_channels=hidden, dropout=dropout, input_dropout=True)
    if architecture == "SGC":
        return SGC(in_features, num_classes)
    if architecture == "APPNP":
        return APPNP(in_features, num_classes, hidden=hidden, dropout=dropout)
    if architecture == "ChebNet":
        return ChebNet(in_features, num_classes, hidden=hidden, dropout=dropout)
    raise ValueError(f"unknown architecture {architecture!r}; choose one of {', '.join(ARCHITECTURES)}")
