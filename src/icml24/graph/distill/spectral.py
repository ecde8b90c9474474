"""Spectral preprocessing for GDEM: largest connected component and Laplacian eigenpairs.

GDEM (Liu, Bo & Shi, ICML 2024) restricts the real graph to its largest connected component (LCC) and
eigendecomposes the normalized Laplacian with self-loops,

    L = I - D~^{-1/2} (A + I) D~^{-1/2},     D~ = diag((A + I) 1),

keeping the ``K1`` smallest and ``K2`` largest eigenpairs. The decomposition is the expensive one-off step, so
``laplacian_eigenpairs`` caches it per graph in memory, and on disk only in a ``cache_dir`` the caller names
(e.g. ``default_cache_dir``, ``$XDG_CACHE_HOME/icml24/eigenpairs``); it writes no file otherwise.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components

from ..operators import normalized_adjacency

_MEMORY_CACHE: dict[str, LaplacianSpectrum] = {}


@dataclass
class LaplacianSpectrum:
    """Eigenpairs of the LCC's normalized Laplacian.

    Attributes:
        lcc_index: ``[n_lcc]`` node ids (in the input graph) of the largest connected component, ascending.
        eigenvalues: ``[m]`` ascending eigenvalues in ``[0, 2)``.
        eigenvectors: ``[n_lcc, m]`` orthonormal eigenvectors (columns), row ``i`` is node ``lcc_index[i]``.
        num_smallest: how many of the ``m`` pairs are the smallest ones (the rest are the largest);
            equals ``m`` when the full spectrum was computed.
        complete: whether all ``n_lcc`` eigenpairs are present.
        seconds: wall time of the decomposition (0 when read from a disk cache).
    """

    lcc_index: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    num_smallest: int
    complete: bool
    seconds: float = 0.0

    @property
    def num_nodes(self) -> int:
        return int(self.lcc_index.shape[0])


def _adjacency(edge_index: torch.Tensor | np.ndarray, num_nodes: int) -> sp.csr_matrix:
    edges = np.asarray(edge_index.cpu() if isinstance(edge_index, torch.Tensor) else edge_index)
    if edges.ndim != 2 or edges.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got {edges.shape}")
    if edges.size and (edges.min() < 0 or edges.max() >= num_nodes):
        raise ValueError(f"edge_index has node ids outside [0, {num_nodes}); pass the right num_nodes")
    adj = sp.csr_matrix((np.ones(edges.shape[1]), (edges[0], edges[1])), shape=(num_nodes, num_nodes))
    adj = ((adj + adj.T) > 0).astype(np.float64)  # symmetric, unweighted, duplicates merged
    adj.setdiag(0)
    adj.eliminate_zeros()
    return adj.tocsr()


def largest_connected_component(edge_index: torch.Tensor | np.ndarray, num_nodes: int) -> np.ndarray:
    """Node ids (ascending) of the largest connected component of the undirected graph."""
    adj = _adjacency(edge_index, num_nodes)
    _, component = connected_components(adj, directed=False)
    largest = np.bincount(component).argmax()
    return np.flatnonzero(component == largest)


def normalized_laplacian(adj: sp.spmatrix) -> sp.csr_matrix:
    """``I - S`` with GCN's ``S = D~^{-1/2} (A + I) D~^{-1/2}`` (``normalized_adjacency``)
    of the symmetric, unweighted ``adj``, as a scipy matrix for ``eigh``/``eigsh``."""
    n = adj.shape[0]
    coo = sp.coo_matrix(adj)
    edge_index = torch.as_tensor(np.stack([coo.row, coo.col]), dtype=torch.long)
    operator = normalized_adjacency(edge_index, n)
    s = sp.csr_matrix((operator.values().numpy(), operator.col_indices().numpy(), operator.crow_indices().numpy()),
                      shape=(n, n))
    return (sp.eye(n, format="csr") - s).tocsr()


def _graph_key(adj: sp.csr_matrix, num_smallest: int | None, num_largest: int | None) -> str:
    coo = adj.tocoo()
    digest = hashlib.sha1()
    digest.update(np.int64(adj.shape[0]).tobytes())
    order = np.lexsort((coo.col, coo.row))
    digest.update(coo.row[order].astype(np.int64).tobytes())
    digest.update(coo.col[order].astype(np.int64).tobytes())
    digest.update(f"{num_smallest}-{num_largest}".encode())
    return digest.hexdigest()[:20]


def clear_memory_cache() -> None:
    """Forget the in-memory eigenpairs (a disk cache is left alone)."""
    _MEMORY_CACHE.clear()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/icml24/eigenpairs`` (or ``~/.cache/icml24/eigenpairs``): a place to pass as ``cache_dir``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "icml24" / "eigenpairs"


def laplacian_eigenpairs(
    edge_index: torch.Tensor | np.ndarray,
    num_nodes: int,
    num_smallest: int | None = None,
    num_largest: int | None = None,
    dense_limit: int = 6000,
    cache_dir: str | Path | None = None,
    recompute: bool = False,
) -> LaplacianSpectrum:
    """Eigenpairs of the normalized Laplacian of the largest connected component.

    Args:
        edge_index (Tensor): ``[2, num_edges]`` edges (made symmetric here).
        num_nodes (int): number of nodes of the input graph.
        num_smallest (int, optional): smallest eigenpairs to keep when the LCC is larger than ``dense_limit``
            (``scipy.sparse.linalg.eigsh``); ignored for a dense decomposition, which keeps all pairs.
        num_largest (int, optional): largest eigenpairs to keep in the sparse case (default 0).
        dense_limit (int): LCC size up to which a full ``numpy.linalg.eigh`` is used (default 6000).
        cache_dir (str or Path, optional): read and write the eigenpairs there (one ``.npz`` per graph); default
            ``None`` writes nothing and keeps only the in-memory cache of this process.
        recompute (bool): decompose again even when a cached result exists (to time it); the new result replaces
            the cached ones.
    """
    adj = _adjacency(edge_index, num_nodes)
    lcc = largest_connected_component(edge_index, num_nodes)
    adj_lcc = adj[lcc][:, lcc]
    dense = len(lcc) <= dense_limit
    if not dense and not num_smallest and not num_largest:
        raise ValueError(f"the LCC has {len(lcc)} > dense_limit={dense_limit} nodes: pass num_smallest/num_largest")
    key = _graph_key(adj, None if dense else num_smallest, None if dense else num_largest)
    if key in _MEMORY_CACHE and not recompute:
        return _MEMORY_CACHE[key]
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"{key}.npz"
        if path.exists() and not recompute:
            stored = np.load(path)
            spectrum = LaplacianSpectrum(stored["lcc_index"], stored["eigenvalues"], stored["eigenvectors"],
                                         int(stored["num_smallest"]), bool(stored["complete"]))
            _MEMORY_CACHE[key] = spectrum
            return spectrum
    laplacian = normalized_laplacian(adj_lcc)
    start = time.perf_counter()
    if dense:
        values, vectors = np.linalg.eigh(laplacian.toarray())
        num_small, complete = len(values), True
    else:
        from scipy.sparse.linalg import eigsh

        blocks = []
        num_small = int(num_smallest or 0)
        if num_small:
            blocks.append(eigsh(laplacian, k=num_small, which="SA", tol=1e-5))
        if num_largest:
            blocks.append(eigsh(laplacian, k=int(num_largest), which="LA", tol=1e-5))
        blocks = [(val[np.argsort(val)], vec[:, np.argsort(val)]) for val, vec in blocks]
        values = np.concatenate([val for val, _ in blocks])
        vectors = np.concatenate([vec for _, vec in blocks], axis=1)
        complete = False
    spectrum = LaplacianSpectrum(lcc, values, vectors, num_small, complete, time.perf_counter() - start)
    _MEMORY_CACHE[key] = spectrum
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")  # per process: two writers never share a temporary
        np.savez(tmp, lcc_index=lcc, eigenvalues=values, eigenvectors=vectors,
                 num_smallest=num_small, complete=complete)
        os.replace(tmp, path)
    return spectrum


def select_eigenpairs(spectrum: LaplacianSpectrum, k: int, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``K1 = ceil(k * ratio)`` smallest and ``K2 = k - K1`` largest eigenpairs (GDEM Sec. 4, "Sizes").

    Returns:
        ``(eigenvalues [k], eigenvectors [n_lcc, k])``, smallest block first.
    """
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must lie in [0, 1], got {ratio}")
    k1 = math.ceil(k * ratio)
    k2 = k - k1
    m = len(spectrum.eigenvalues)
    if spectrum.complete:
        if k > m:
            raise ValueError(f"asked for {k} eigenpairs but the LCC has only {m} nodes")
        columns = np.r_[np.arange(k1), np.arange(m - k2, m)]
    else:
        num_large = m - spectrum.num_smallest
        if k1 > spectrum.num_smallest or k2 > num_large:
            raise ValueError(f"need {k1} smallest and {k2} largest eigenpairs, the spectrum holds "
                             f"{spectrum.num_smallest} and {num_large}; recompute with larger num_smallest/num_largest")
        columns = np.r_[np.arange(k1), np.arange(m - k2, m)]
    return spectrum.eigenvalues[columns], spectrum.eigenvectors[:, columns]
