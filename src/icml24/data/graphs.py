"""Graph datasets: the Planetoid citation graphs (public split) and the contextual stochastic block model."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import torch

PLANETOID_NAMES = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
_PLANETOID_URL = "https://github.com/kimiyoung/planetoid/raw/master/data"
_PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Where datasets live: ``root`` if given, else ``$ICML24_DATA``, else ``~/.cache/icml24``."""
    if root is not None:
        return Path(root)
    env = os.environ.get("ICML24_DATA")
    return Path(env) if env else Path.home() / ".cache" / "icml24"


def planetoid(name: str, root: str | os.PathLike | None = None, download: bool = True):
    """Load a Planetoid citation graph with its public split (20 labels per class, 500 val, 1000 test).

    Reads ``<root>/<Name>/raw/ind.<name>.*`` (PyTorch Geometric's layout), where root is ``root``,
    ``$ICML24_DATA`` or ``~/.cache/icml24``; downloads the raw files only when they are missing.

    Returns:
        torch_geometric.data.Data with ``x: [num_nodes, num_features]``, undirected ``edge_index: [2, num_edges]``,
        ``y: [num_nodes]`` and boolean ``train_mask``, ``val_mask``, ``test_mask``.
    """
    key = name.lower()
    if key not in PLANETOID_NAMES:
        raise ValueError(f"unknown Planetoid dataset {name!r}; choose one of {', '.join(PLANETOID_NAMES)}")
    folder = data_root(root) / PLANETOID_NAMES[key] / "raw"
    missing = [s for s in _PLANETOID_SUFFIXES if not (folder / f"ind.{key}.{s}").exists()]
    if missing:
        if not download:
            raise FileNotFoundError(_missing_message(folder, key, missing))
        _download_planetoid(folder, key, missing)
    from torch_geometric.io import read_planetoid_data

    data = read_planetoid_data(str(folder), key)
    data.name = PLANETOID_NAMES[key]
    return data


def _missing_message(folder: Path, key: str, missing: list[str]) -> str:
    return (
        f"Planetoid files ind.{key}.{{{','.join(missing)}}} are missing in {folder}; put the raw files there "
        f"or set ICML24_DATA to a folder holding {PLANETOID_NAMES[key]}/raw/ "
        "(for this repo: ICML24_DATA=../shared/data)"
    )


def _download_planetoid(folder: Path, key: str, missing: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in missing:
        target = folder / f"ind.{key}.{suffix}"
        try:
            with urllib.request.urlopen(f"{_PLANETOID_URL}/ind.{key}.{suffix}", timeout=30) as response:
                payload = response.read()
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise FileNotFoundError(_missing_message(folder, key, missing) + f" (download failed: {exc})") from None
        tmp = target.with_suffix(target.suffix + ".part")
        tmp.write_bytes(payload)
        os.replace(tmp, target)


def edge_homophily(edge_index: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of edges whose endpoints share a label."""
    if edge_index.numel() == 0:
        return float("nan")
    return float((y[edge_index[0]] == y[edge_index[1]]).float().mean())


def csbm(num_nodes: int = 1000, num_features: int = 100, num_classes: int = 2, homophily: float = 0.8,
         feature_signal: float = 1.0, seed: int = 0, avg_degree: float = 10.0,
         split: tuple[float, float] = (0.6, 0.2)):
    """Contextual stochastic block model with a chosen edge homophily.

    Balanced classes. Each of the ``num_nodes * avg_degree / 2`` undirected edges joins a uniformly drawn node
    to a node of its own class with probability ``homophily``, else to a node of another class, so the
    measured edge homophily matches the parameter up to sampling noise. Features are
    ``x_i = feature_signal * mu_{y_i} + eps_i`` with class means ``mu_c ~ N(0, I/num_features)`` and
    noise ``eps_i ~ N(0, I/num_features)``. Train/val/test masks are a random ``split`` of the nodes.
    """
    if not 0.0 <= homophily <= 1.0:
        raise ValueError(f"homophily must lie in [0, 1], got {homophily}")
    if num_classes < 2 or num_nodes < 2 * num_classes:
        raise ValueError(f"need num_classes >= 2 and num_nodes >= 2 * num_classes, got {num_classes}, {num_nodes}")
    from torch_geometric.data import Data
    from torch_geometric.utils import coalesce, to_undirected

    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(num_nodes) % num_classes)
    members = np.argsort(y, kind="stable")  # node ids grouped by class
    class_size = np.bincount(y, minlength=num_classes)
    class_start = np.concatenate([[0], np.cumsum(class_size)[:-1]])

    num_edges = int(round(num_nodes * avg_degree / 2))
    source = rng.integers(0, num_nodes, num_edges)
    same_class = rng.random(num_edges) < homophily
    shift = rng.integers(1, num_classes, num_edges)  # another class, uniformly
    target_class = np.where(same_class, y[source], (y[source] + shift) % num_classes)
    target = members[class_start[target_class] + (rng.random(num_edges) * class_size[target_class]).astype(int)]
    keep = source != target
    edge_index = torch.from_numpy(np.stack([source[keep], target[keep]])).long()
    edge_index = coalesce(to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes)

    means = rng.normal(0.0, 1.0 / np.sqrt(num_features), (num_classes, num_features))
    noise = rng.normal(0.0, 1.0 / np.sqrt(num_features), (num_nodes, num_features))
    x = torch.from_numpy(feature_signal * means[y] + noise).float()

    order = rng.permutation(num_nodes)
    n_train, n_val = int(split[0] * num_nodes), int(split[1] * num_nodes)
    masks = [torch.zeros(num_nodes, dtype=torch.bool) for _ in range(3)]
    masks[0][order[:n_train]] = True
    masks[1][order[n_train:n_train + n_val]] = True
    masks[2][order[n_train + n_val:]] = True
    return Data(x=x, edge_index=edge_index, y=torch.from_numpy(y).long(),
                train_mask=masks[0], val_mask=masks[1], test_mask=masks[2], num_nodes=num_nodes)
