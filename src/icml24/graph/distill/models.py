"""Small node classifiers used to evaluate distilled graphs: GCN, SGC, APPNP, ChebNet and MLP.

Every model is ``forward(x, adj) -> log-probabilities [n, C]`` where ``adj [n, n]`` is the propagation
matrix used as given (a dense synthetic ``A' = I - U' Lambda U'^T`` or a sparse GCN-normalized
``D~^{-1/2}(A + I)D~^{-1/2}``) and ``x [n, d]`` may be a dense or a sparse COO tensor. They follow the
evaluation models of the GDEM code: Xavier-uniform weights, zero biases, dropout on the input and hidden layer.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout that also accepts a sparse COO or CSR tensor (drops stored values)."""
    if not training or p == 0.0:
        return x
    if x.layout == torch.sparse_csr:
        values = F.dropout(x.values(), p, True)
        return torch.sparse_csr_tensor(x.crow_indices(), x.col_indices(), values, x.shape, check_invariants=False)
    if x.is_sparse:
        x = x.coalesce()
        values = F.dropout(x.values(), p, True)
        return torch.sparse_coo_tensor(x.indices(), values, x.shape, check_invariants=False)
    return F.dropout(x, p, True)


class DenseLayer(nn.Module):
    """``x W + b`` with ``W [in, out]`` Xavier-uniform; ``x`` dense or sparse."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = math.sqrt(6.0 / (self.weight.shape[0] + self.weight.shape[1]))
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x @ self.weight  # dense, COO or CSR ``x``
        return out if self.bias is None else out + self.bias


class GCN(nn.Module):
    """Two-layer GCN (Kipf & Welling): ``log_softmax(A relu(A X W1) W2)``."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5):
        super().__init__()
        self.layer1, self.layer2 = DenseLayer(in_features, hidden, False), DenseLayer(hidden, num_classes, False)
        self.bias1, self.bias2 = nn.Parameter(torch.zeros(hidden)), nn.Parameter(torch.zeros(num_classes))
        self.dropout = dropout

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.relu(adj @ self.layer1(x) + self.bias1)  # bias after propagation, as in Kipf & Welling
        h = F.dropout(h, self.dropout, self.training)
        return F.log_softmax(adj @ self.layer2(h) + self.bias2, dim=1)


class SGC(nn.Module):
    """SGC (Wu et al.): ``log_softmax(A^K X W + b)``, linear, no dropout."""

    def __init__(self, in_features: int, num_classes: int, hops: int = 2, **_):
        super().__init__()
        self.linear, self.hops = DenseLayer(in_features, num_classes, bias=False), hops
        self.bias = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        for _ in range(self.hops):
            h = adj @ h
        return F.log_softmax(h + self.bias, dim=1)


class APPNP(nn.Module):
    """APPNP (Gasteiger et al.): an MLP then ``K`` steps of ``h <- (1 - a) A h + a h0``."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5,
                 hops: int = 10, teleport: float = 0.1):
        super().__init__()
        self.layer1, self.layer2 = DenseLayer(in_features, hidden), DenseLayer(hidden, num_classes)
        self.dropout, self.hops, self.teleport = dropout, hops, teleport

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.dropout(F.relu(self.layer1(x)), self.dropout, self.training)
        h0 = self.layer2(h)
        h = h0
        for _ in range(self.hops):
            h = (1.0 - self.teleport) * (adj @ h) + self.teleport * h0
        return F.log_softmax(h, dim=1)


class ChebLayer(nn.Module):
    """Order-1 Chebyshev layer as in the GDEM code: ``X W0 + A X W1 + b`` (``A`` the given propagation matrix)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.lin0 = DenseLayer(in_features, out_features, bias=False)
        self.lin1 = DenseLayer(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        return self.lin0(x) + adj @ self.lin1(x) + self.bias


class ChebNet(nn.Module):
    """Two ChebLayers with ReLU and dropout."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5):
        super().__init__()
        self.layer1, self.layer2, self.dropout = ChebLayer(in_features, hidden), ChebLayer(hidden, num_classes), dropout

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.dropout(F.relu(self.layer1(x, adj)), self.dropout, self.training)
        return F.log_softmax(self.layer2(h, adj), dim=1)


class MLP(nn.Module):
    """Two-layer perceptron; ignores the graph."""

    def __init__(self, in_features: int, num_classes: int, hidden: int = 256, dropout: float = 0.5):
        super().__init__()
        self.layer1, self.layer2 = DenseLayer(in_features, hidden), DenseLayer(hidden, num_classes)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, adj: torch.Tensor | None = None) -> torch.Tensor:
        x = dropout(x, self.dropout, self.training)
        h = F.dropout(F.relu(self.layer1(x)), self.dropout, self.training)
        return F.log_softmax(self.layer2(h), dim=1)


ARCHITECTURES = {"GCN": GCN, "SGC": SGC, "APPNP": APPNP, "ChebNet": ChebNet, "MLP": MLP}


def build_model(architecture: str, in_features: int, num_classes: int, hidden: int = 256,
                dropout: float = 0.5) -> nn.Module:
    """One of :data:`ARCHITECTURES` by name."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {', '.join(ARCHITECTURES)}")
    if architecture == "SGC":
        return SGC(in_features, num_classes)
    return ARCHITECTURES[architecture](in_features, num_classes, hidden=hidden, dropout=dropout)
