"""Node classifiers on ``(x, edge_index)``: GCN, GAT and an MLP, shared by every graph method and reproduction.

Conventions (PyTorch Geometric's):

- ``forward(x, edge_index) -> logits [num_nodes, out_channels]``; the loss applies the log-softmax
  (``fit_node_classifier`` uses cross-entropy).
- ``x [num_nodes, in_channels]`` may be dense or sparse (COO or CSR; see
  ``sparse_features``); dropout on sparse input drops stored entries only.
- ``edge_index [2, num_edges]`` lists each undirected edge in both directions without self-loops. GCN also
  accepts a propagation matrix ``[num_nodes, num_nodes]`` in its place (see
  ``gcn_propagate``), e.g. GDEM's dense learned ``A'``.
- Weights are Glorot-uniform, biases zero; ``reset_parameters()`` redraws them.
- GCN and GAT split into ``encode(x)``, the graph-independent first linear map (with its input dropout), and
  ``propagate(h, edge_index)``, everything that depends on the graph: ``forward = propagate(encode(x), ...)``.
  Randomized smoothing encodes the features once and re-runs only ``propagate`` on perturbed graphs.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .operators import gcn_propagate

__all__ = ["GAT", "GCN", "MLP", "Linear", "dropout"]


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """``F.dropout`` that also accepts a sparse COO or CSR tensor (it drops stored entries; zeros stay zero)."""
    if not training or p == 0.0:
        return x
    if x.layout == torch.sparse_csr:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            return torch.sparse_csr_tensor(x.crow_indices(), x.col_indices(), F.dropout(x.values(), p, True),
                                           x.shape, check_invariants=False)
    if x.layout == torch.sparse_coo:
        x = x.coalesce()
        return torch.sparse_coo_tensor(x.indices(), F.dropout(x.values(), p, True), x.shape, check_invariants=False)
    return F.dropout(x, p, True)


class Linear(nn.Linear):
    """``nn.Linear`` with Glorot-uniform weights and a zero bias (the GCN/GAT initialization); ``x`` may be sparse."""

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)


class _EncodeThenPropagate(nn.Module):
    """A two-stage graph model: ``encode(x)`` (graph-free, computed once per graph) then ``propagate``."""

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.propagate(self.encode(x), edge_index)


class GCN(_EncodeThenPropagate):
    r"""Two-layer GCN (Kipf & Welling, ICLR 2017), Eq. (9) of the paper, with biases:

    .. code-block:: text

        logits = S relu(S dropout(X) W1 + b1) W2 + b2,      S = D^-1/2 (A + I) D^-1/2

    with dropout on the hidden layer (and on the input features when ``input_dropout``), as in Kipf & Welling.

    Args:
        in_channels (int): number of input features.
        out_channels (int): number of classes.
        hidden_channels (int, default 16): hidden width.
        dropout (float, default 0.5): dropout probability (training only).
        input_dropout (bool, default True): also drop input features.
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int = 16, dropout: float = 0.5,
                 input_dropout: bool = True):
        super().__init__()
        self.lin1 = Linear(in_channels, hidden_channels, bias=False)
        self.bias1 = nn.Parameter(torch.zeros(hidden_channels))
        self.lin2 = Linear(hidden_channels, out_channels)
        self.dropout = dropout
        self.input_dropout = input_dropout

    def reset_parameters(self) -> None:
        self.lin1.reset_parameters()
        self.lin2.reset_parameters()
        nn.init.zeros_(self.bias1)

    def encode(self, x: Tensor) -> Tensor:
        """``x [N, in_channels]`` (dense or sparse) -> ``dropout(X) W1 [N, hidden_channels]``; no graph involved."""
        return self.lin1(dropout(x, self.dropout if self.input_dropout else 0.0, self.training))

    def propagate(self, h: Tensor, edge_index: Tensor) -> Tensor:
        """``h = encode(x)``; ``edge_index [2, E]`` or a propagation matrix ``[N, N]`` -> logits ``[N, C]``."""
        h = F.relu(gcn_propagate(h, edge_index) + self.bias1)  # the bias after propagation, as GCNConv
        h = F.dropout(h, p=self.dropout, training=self.training)
        # S (h W2) + b2 == (S h) W2 + b2: multiply first so that the propagated width is C, not hidden
        return gcn_propagate(h @ self.lin2.weight.T, edge_index) + self.lin2.bias

    def __repr__(self) -> str:
        return (f"GCN({self.lin1.in_features}, {self.lin2.out_features}, hidden_channels={self.lin1.out_features}, "
                f"dropout={self.dropout}, input_dropout={self.input_dropout})")


class _Projected(nn.Module):
    """Stands in for a ``GATConv``'s input projection, which ``GAT.encode`` applies once per graph."""

    def forward(self, h: Tensor) -> Tensor:
        return h

    def reset_parameters(self) -> None:
        pass


class GAT(_EncodeThenPropagate):
    r"""Two-layer GAT (Veličković et al., ICLR 2018): ``heads`` attention heads of ``hidden_channels // heads``
    units (concatenated, ELU), then one output head; self-loops; dropout on the input, the attention coefficients
    and the hidden layer. The same function as PyG's ``GATConv(in, hidden // heads, heads) -> GATConv(hidden, C)``
    (tested), with the first layer's projection moved into ``encode``.

    Args:
        in_channels (int): number of input features.
        out_channels (int): number of classes.
        hidden_channels (int, default 64): total hidden width, split across heads.
        heads (int, default 8): attention heads of the first layer.
        dropout (float, default 0.6): dropout probability (training only).
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int = 64, heads: int = 8,
                 dropout: float = 0.6):
        super().__init__()
        from torch_geometric.nn import GATConv

        per_head = max(1, hidden_channels // heads)
        self.lin1 = Linear(in_channels, per_head * heads, bias=False)
        self.conv1 = GATConv(per_head * heads, per_head, heads=heads, dropout=dropout)
        self.conv1.lin = _Projected()  # its projection is lin1, applied in encode
        self.conv2 = GATConv(per_head * heads, out_channels, heads=1, concat=False, dropout=dropout)
        self.dropout = dropout
        self.heads = heads

    def reset_parameters(self) -> None:
        self.lin1.reset_parameters()
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()

    def encode(self, x: Tensor) -> Tensor:
        """``x [N, in_channels]`` (dense or sparse) -> the first layer's projection ``[N, hidden_channels]``."""
        return self.lin1(dropout(x, self.dropout, self.training))

    def propagate(self, h: Tensor, edge_index: Tensor) -> Tensor:
        """``h = encode(x)``, ``edge_index [2, E]`` -> logits ``[N, C]``."""
        if edge_index.is_floating_point():
            raise ValueError("GAT attends over an edge list: pass edge_index [2, num_edges], not a dense matrix")
        h = F.elu(self.conv1(h, edge_index))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.conv2(h, edge_index)

    def __repr__(self) -> str:
        return (f"GAT({self.lin1.in_features}, {self.conv2.out_channels}, hidden_channels={self.lin1.out_features}, "
                f"heads={self.heads}, dropout={self.dropout})")


class MLP(nn.Module):
    """Two-layer perceptron ``relu(dropout(X) W1 + b1) -> dropout -> W2 + b2``; it ignores the graph.

    Args:
        in_channels (int): number of input features.
        out_channels (int): number of classes.
        hidden_channels (int, default 64): hidden width.
        dropout (float, default 0.5): dropout probability on the hidden layer (training only).
        input_dropout (bool, default True): also drop input features.
    """

    def __init__(self, in_channels: int, out_channels: int, hidden_channels: int = 64, dropout: float = 0.5,
                 input_dropout: bool = True):
        super().__init__()
        self.lin1 = Linear(in_channels, hidden_channels)
        self.lin2 = Linear(hidden_channels, out_channels)
        self.dropout = dropout
        self.input_dropout = input_dropout

    def reset_parameters(self) -> None:
        self.lin1.reset_parameters()
        self.lin2.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor | None = None) -> Tensor:
        """``x [N, in_channels]`` -> logits ``[N, C]``; ``edge_index`` (or a matrix) is accepted and ignored."""
        x = dropout(x, self.dropout if self.input_dropout else 0.0, self.training)
        h = F.dropout(F.relu(self.lin1(x)), p=self.dropout, training=self.training)
        return self.lin2(h)

    def __repr__(self) -> str:
        return (f"MLP({self.lin1.in_features}, {self.lin2.out_features}, hidden_channels={self.lin1.out_features}, "
                f"dropout={self.dropout}, input_dropout={self.input_dropout})")
