"""Graphs and smoothing votes used by the collective-certificate paper (Lai et al., ICML 2024).

The files live in ``<data_root()>/collective-cert/``, where ``data_root()`` is ``$ICML24_DATA`` or
``~/.cache/icml24`` (see ``icml24.data.graphs``):

- ``cora_ml.npz`` (2810 nodes, 7981 undirected edges, 7 classes) and ``citeseer.npz`` (2110 nodes,
  3668 edges, 6 classes), as shipped by the official repository: ``A`` = edge index ``[2, E]``
  (both directions), ``X`` = coordinates ``[2, nnz]`` of the binary features, ``y`` = labels.
- ``cora_ml_gcn_votes_pe0.9_pn0.8.npz``: the official node-aware bi-smoothing votes of a GCN on Cora-ML
  (``p_e = 0.9``, ``p_n = 0.8``, 100,000 samples): ``top2``, ``count_top``, ``count_runner_up``, ``num_samples``.

These are not Planetoid's Cora/CiteSeer (``icml24.data.planetoid``); the CiteSeer here has 2110 nodes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from icml24._random import seed_int

from .graphs import data_root

CERT_GRAPHS = ("cora_ml", "citeseer")
_FOLDER = "collective-cert"


def _folder(root: str | os.PathLike | None) -> Path:
    return data_root(root) / _FOLDER


def _require(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path.name} not found in {path.parent}. Put the collective-cert files (cora_ml.npz, citeseer.npz, "
            f"cora_ml_gcn_votes_pe0.9_pn0.8.npz from github.com/Yuni-Lai/CollectiveLPCert) in that folder, "
            f"or set ICML24_DATA to the folder that contains '{_FOLDER}/'."
        )
    return path


def cert_missing(files, root: str | os.PathLike | None = None) -> list[str]:
    """One line per file among ``files`` (``cora_ml.npz``, a votes file) missing in ``<data_root>/collective-cert/``:
    where it was looked for and how to get it. Only checks (the command reads it before any run)."""
    lines = []
    for name in files:
        path = _folder(root) / name
        if not path.is_file():
            where = "" if os.environ.get("ICML24_DATA") or root is not None else " (ICML24_DATA is not set)"
            lines.append(f"{name} not found in {path.parent}{where}; put the collective-cert files from "
                         f"github.com/Yuni-Lai/CollectiveLPCert there, or set ICML24_DATA to the folder that contains "
                         f"'{_FOLDER}/' (for this repo: ../shared/data)")
    return lines


def cert_graph_file(name: str) -> str:
    """The file ``cert_graph(name)`` reads (``cora`` and ``cora-ml`` name Cora-ML)."""
    key = {"cora": "cora_ml", "cora-ml": "cora_ml"}.get(name.lower(), name.lower())
    return f"{key}.npz"


def cert_votes_file(dataset: str = "cora_ml", model: str = "gcn", p_e: float = 0.9, p_n: float = 0.8) -> str:
    """The file ``cert_votes`` reads for these smoothing parameters."""
    return f"{dataset.lower()}_{model.lower()}_votes_pe{p_e:g}_pn{p_n:g}.npz"


def cert_graph(name: str, root: str | os.PathLike | None = None):
    """Load Cora-ML or CiteSeer as used by the collective certificate.

    Args:
        name (str): ``"cora_ml"`` (alias ``"cora"``) or ``"citeseer"``.
        root (path, optional): data root holding ``collective-cert/``; default ``$ICML24_DATA``
            or ``~/.cache/icml24``.

    Returns:
        torch_geometric.data.Data with ``x`` ``[num_nodes, num_features]`` (float, binary),
        ``edge_index`` ``[2, 2 * num_edges]`` (undirected, no self-loops, sorted) and ``y`` ``[num_nodes]``.
    """
    import torch
    from torch_geometric.data import Data

    key = {"cora": "cora_ml", "cora-ml": "cora_ml"}.get(name.lower(), name.lower())
    if key not in CERT_GRAPHS:
        raise ValueError(f"unknown graph {name!r}; expected one of {', '.join(CERT_GRAPHS)}")
    with np.load(_require(_folder(root) / f"{key}.npz")) as npz:
        edges, feats, y = npz["A"].astype(np.int64), npz["X"].astype(np.int64), npz["y"].astype(np.int64)
    num_nodes = int(y.shape[0])
    num_features = int(feats[1].max()) + 1
    x = torch.zeros(num_nodes, num_features)
    x[torch.from_numpy(feats[0]), torch.from_numpy(feats[1])] = 1.0
    # symmetrize, drop self-loops and duplicates so that the graph is a clean undirected simple graph
    edges = np.concatenate([edges, edges[::-1]], axis=1)
    edges = edges[:, edges[0] != edges[1]]
    edges = np.unique(edges, axis=1)
    return Data(x=x, edge_index=torch.from_numpy(edges), y=torch.from_numpy(y), num_nodes=num_nodes, name=key)


def cert_split(labels, n_per_class: int = 50, random_state=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The official split: ``n_per_class`` training and validation nodes per class, the rest is test.

    Mirrors the official procedure so that the shipped votes can be evaluated on the same test set:
    each class's nodes are permuted by ``RandomState(seed)``; the first ``n_per_class`` go to training,
    the next ``n_per_class`` to validation; both lists are then permuted once more by ``RandomState(seed)``.
    ``seed`` is ``random_state`` when it is an int (pass 2020 for the official split), else one draw from it
    (``icml24._random.seed_int``): the procedure re-seeds a legacy ``RandomState`` for every permutation.

    Returns:
        (train, val, test) index arrays; ``test`` is sorted.
    """
    labels = np.asarray(labels)
    seed = seed_int(random_state)
    train, val = [], []
    for c in range(int(labels.max()) + 1):
        perm = np.random.RandomState(seed=seed).permutation(np.flatnonzero(labels == c))
        if perm.size < 2 * n_per_class:
            raise ValueError(f"class {c} has {perm.size} nodes, fewer than 2 * n_per_class = {2 * n_per_class}")
        train.append(perm[:n_per_class])
        val.append(perm[n_per_class : 2 * n_per_class])
    train = np.random.RandomState(seed=seed).permutation(np.concatenate(train))
    val = np.random.RandomState(seed=seed).permutation(np.concatenate(val))
    test = np.setdiff1d(np.arange(labels.shape[0]), np.concatenate([train, val]))
    return train, val, test


def cert_votes(root: str | os.PathLike | None = None, dataset: str = "cora_ml", model: str = "gcn",
               p_e: float = 0.9, p_n: float = 0.8) -> dict[str, np.ndarray | int]:
    """The official smoothing votes (only Cora-ML, GCN, ``p_e = 0.9``, ``p_n = 0.8`` are shipped).

    Returns:
        dict with ``top2`` ``[num_nodes, 2]``, ``count_top`` ``[num_nodes]``, ``count_runner_up`` ``[num_nodes]``
        and ``num_samples`` (int).
    """
    with np.load(_require(_folder(root) / cert_votes_file(dataset, model, p_e, p_n))) as npz:
        return {
            "top2": npz["top2"].astype(np.int64),
            "count_top": npz["count_top"].astype(np.int64),
            "count_runner_up": npz["count_runner_up"].astype(np.int64),
            "num_samples": int(npz["num_samples"]),
        }
