"""Graph operators and feature helpers shared by every graph method.

GCN's operator ``S = D^{-1/2} (A + I) D^{-1/2}`` is defined here once, in two forms: the sparse matrix
(``normalized_adjacency``, for methods that reuse it, e.g. RP's ``S^k``) and its application by message passing
(``gcn_propagate``, for GNN layers on graphs that change every call, e.g. randomized smoothing).
"""

from __future__ import annotations

import warnings

import torch

__all__ = ["gcn_propagate", "normalized_adjacency", "normalize_features", "normalized_gaussian_kernel_matmul",
           "sparse_features"]


def normalized_adjacency(edge_index: torch.Tensor, num_nodes: int, self_loops: bool = True,
                         dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The operator ``S = D^{-1/2} (A + I) D^{-1/2}`` of GCN, as a sparse CSR tensor ``[num_nodes, num_nodes]``.

    The graph is made undirected, existing self-loops are replaced by one unit self-loop per node (when
    ``self_loops``), and duplicate edges count once. Isolated nodes (without self-loops) get a zero row.

    Args:
        edge_index (LongTensor): ``[2, num_edges]`` edge list.
        num_nodes (int): number of nodes ``n``.
        self_loops (bool): add ``I`` before normalizing (default ``True``).
        dtype (torch.dtype): value type (default ``torch.float64``).
    """
    edge_index = torch.as_tensor(edge_index, dtype=torch.long)
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got {tuple(edge_index.shape)}")
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        raise ValueError(f"edge_index holds node ids outside [0, {num_nodes}); check num_nodes")
    row = torch.cat([edge_index[0], edge_index[1]])
    col = torch.cat([edge_index[1], edge_index[0]])
    off_diagonal = row != col
    row, col = row[off_diagonal], col[off_diagonal]
    if self_loops:
        nodes = torch.arange(num_nodes)
        row, col = torch.cat([row, nodes]), torch.cat([col, nodes])
    # unique (row, col) pairs: duplicates and both directions of an undirected edge count once
    key = torch.unique(row * num_nodes + col)
    row, col = key // num_nodes, key % num_nodes
    degree = torch.bincount(row, minlength=num_nodes).to(dtype)
    inv_sqrt = degree.pow(-0.5).masked_fill_(degree == 0, 0.0)
    values = inv_sqrt[row] * inv_sqrt[col]
    # keys are sorted by (row, col): that is CSR order already
    crow = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(row, minlength=num_nodes).cumsum(0)])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(crow, col, values, (num_nodes, num_nodes), check_invariants=False)


def gcn_propagate(h: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
    """``S h``: GCN's propagation of ``h [num_nodes, channels]`` over ``graph``.

    ``graph`` is either an ``edge_index`` (integer ``[2, num_edges]`` listing every undirected edge in both directions,
    without self-loops or duplicates: PyG's coalesced convention), propagated by message passing with the same ``S``
    as ``normalized_adjacency`` (tested equal) and no matrix built; or a propagation matrix ``[num_nodes,
    num_nodes]`` (float, dense or sparse, e.g. ``normalized_adjacency`` or GDEM's learned ``A'``), used as given.
    """
    if graph.is_floating_point():
        return graph @ h
    num_nodes = h.shape[0]
    src, dst = graph
    ones = torch.ones(dst.shape[0], dtype=h.dtype, device=h.device)
    degree = torch.ones(num_nodes, dtype=h.dtype, device=h.device).index_add_(0, dst, ones)  # + 1: the self-loop
    inv_sqrt = degree.rsqrt()
    out = h * (inv_sqrt * inv_sqrt).unsqueeze(1)  # the self-loop term
    weight = (inv_sqrt[src] * inv_sqrt[dst]).unsqueeze(1)
    return out.index_add(0, dst, h[src] * weight)


def sparse_features(x: torch.Tensor, max_density: float = 0.1) -> torch.Tensor:
    """``x`` as a sparse CSR tensor when at most ``max_density`` of its entries are non-zero, else ``x`` unchanged.

    Bag-of-words features are ~1% dense: a CSR first layer is several times cheaper than a dense or COO one, and
    every model of ``icml24.graph.nn`` accepts it. A sparse COO input is converted to CSR.
    """
    if x.layout == torch.sparse_csr:
        return x
    if x.layout == torch.strided and (x.numel() == 0 or float((x != 0).float().mean()) > max_density):
        return x
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return x.to_sparse_csr()


def normalize_features(x: torch.Tensor) -> torch.Tensor:
    """Row-normalize features as PyG's ``NormalizeFeatures``: shift to zero minimum, divide rows by ``max(sum, 1)``."""
    x = x - x.min()
    return x / x.sum(dim=-1, keepdim=True).clamp(min=1.0)


def normalized_gaussian_kernel_matmul(x: torch.Tensor, gamma: float, z: torch.Tensor, block_size: int = 2048,
                                      max_cache_bytes: float = 2**30) -> torch.Tensor:
    """``K z`` with ``K = D^{-1/2} G D^{-1/2}``, ``G_ij = exp(-gamma ||x_i - x_j||^2)``, ``D = diag(G 1)``.

    ``G`` is built in row blocks of ``block_size``; the blocks are kept for the product when ``G`` fits in
    ``max_cache_bytes``, else built a second time, so memory stays ``O(block_size * n)`` for large graphs.
    Inner products use float32 (distances of row-normalized features are far above its rounding); the rest
    is float64. Time ``O(n^2 d)``.

    Args:
        x (Tensor): ``[n, d]`` features.  gamma (float): kernel width.  z (Tensor): ``[n, m]``.
    """
    x64 = x.to(torch.float64)
    x32 = x.to(torch.float32)
    sq_norm = (x64 * x64).sum(dim=1)
    n = x.shape[0]
    # bag-of-words features are ~1% dense: sparse rows times dense columns is far cheaper than a dense GEMM
    sparse_rows = float((x32 != 0).float().mean()) < 0.05
    columns = x32.T.contiguous()

    def block(start: int) -> torch.Tensor:
        stop = min(start + block_size, n)
        rows = x32[start:stop]
        if sparse_rows:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
                inner = torch.sparse.mm(rows.to_sparse_csr(), columns)
        else:
            inner = rows @ columns
        inner = inner.to(torch.float64)
        dist = (sq_norm[start:stop, None] + sq_norm[None, :] - 2.0 * inner).clamp_(min=0.0)
        return torch.exp(-gamma * dist)

    starts = range(0, n, block_size)
    cache = 8.0 * n * n <= max_cache_bytes
    blocks = [block(s) for s in starts] if cache else None
    degree = torch.cat([b.sum(dim=1) for b in blocks] if cache else [block(s).sum(dim=1) for s in starts])
    inv_sqrt = degree.rsqrt()
    scaled = inv_sqrt[:, None] * z.to(torch.float64)
    products = [b @ scaled for b in blocks] if cache else [block(s) @ scaled for s in starts]
    return inv_sqrt[:, None] * torch.cat(products)
