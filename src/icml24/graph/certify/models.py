"""Base classifiers for certification against node injection, with the receptive field the certificate assumes.

The collective certificate charges injected nodes only through paths of at most ``hops`` edges (see
``collective``). A 2-layer GCN with symmetric normalization ``D^-1/2 (A + I) D^-1/2``
reads the degrees of the nodes 2 hops away, so injected nodes 3 hops away change its output (``hops=3``).
``RowNormalizedGCN`` propagates with ``D^-1 (A + I)`` (the mean over the closed neighbourhood): a node's
output reads only its own and its neighbours' degrees, so 2 layers have the 2-hop receptive field of the paper's
certificate (``hops=2``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ..nn import GCN

NORMALIZATIONS = ("sym", "row")


def row_propagate(h: Tensor, edge_index: Tensor) -> Tensor:
    """``D^-1 (A + I) h``: mean of ``h`` over each closed neighbourhood; ``edge_index [2, E]`` both directions."""
    edge_index = torch.as_tensor(edge_index, dtype=torch.long)
    if edge_index.ndim != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must be [2, num_edges] (row normalization takes no dense matrix), got "
                         f"{tuple(edge_index.shape)}")
    src, dst = edge_index
    ones = torch.ones(dst.shape[0], dtype=h.dtype, device=h.device)
    degree = torch.ones(h.shape[0], dtype=h.dtype, device=h.device).index_add_(0, dst, ones)  # + 1: the self-loop
    return h.index_add(0, dst, h[src]) / degree.unsqueeze(1)


class RowNormalizedGCN(GCN):
    r"""Two-layer GCN with row (mean) normalization ``S = D^-1 (A + I)`` instead of ``D^-1/2 (A + I) D^-1/2``:

    .. code-block:: text

        logits = S relu(S dropout(X) W1 + b1) W2 + b2

    Same parameters, initialization, dropout and ``encode``/``propagate`` split as ``GCN``;
    its output at ``v`` depends on injected nodes only within 2 hops (sound for ``CollectiveCertificate(hops=2)``).
    """

    def propagate(self, h: Tensor, edge_index: Tensor) -> Tensor:
        """``h = encode(x)``; ``edge_index [2, E]`` -> logits ``[N, C]``."""
        h = F.relu(row_propagate(h, edge_index) + self.bias1)
        h = F.dropout(h, p=self.dropout, training=self.training)
        return row_propagate(h @ self.lin2.weight.T, edge_index) + self.lin2.bias

    def __repr__(self) -> str:
        return "RowNormalized" + super().__repr__()
