"""Graph datasets: the Planetoid citation graphs (public split) and the contextual stochastic block model."""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from icml24._extras import require_module
from icml24._random import check_random_state

if TYPE_CHECKING:  # torch is the graph extra's: imported where a graph is built, so data_root needs no torch
    import torch

PLANETOID_NAMES = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
_PLANETOID_URL = "https://github.com/kimiyoung/planetoid/raw/master/data"
_PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
# SHA-256 of the raw files (kimiyoung/planetoid, as PyG reads them): they are pickles, so a file is unpickled
# only once its bytes are known.
_PLANETOID_SHA256 = {
    "cora": {
        "allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
        "ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
        "graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
        "test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
        "tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
        "ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
        "x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
        "y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
    },
    "citeseer": {
        "allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
        "ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
        "graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
        "test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
        "tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
        "ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
        "x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
        "y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
    },
}


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Where datasets live: ``root`` if given, else ``$ICML24_DATA``, else ``~/.cache/icml24``."""
    if root is not None:
        return Path(root)
    env = os.environ.get("ICML24_DATA")
    return Path(env) if env else Path.home() / ".cache" / "icml24"


def check_data_root() -> None:
    """Raise ``FileNotFoundError`` when ``$ICML24_DATA`` is set but names no folder (checked before any work)."""
    env = os.environ.get("ICML24_DATA")
    if env and not Path(env).is_dir():
        raise FileNotFoundError(f"ICML24_DATA={env} is not a folder (it resolves to {Path(env).resolve()}, from the "
                                f"current folder {Path.cwd()}); point it at the folder holding Cora/raw and "
                                "CiteSeer/raw (for this repo: ../shared/data), or unset it to use ~/.cache/icml24")


def planetoid(name: str, root: str | os.PathLike | None = None, download: bool = True, verify: bool = True):
    """Load a Planetoid citation graph with its public split (20 labels per class, 500 val, 1000 test).

    Reads ``<root>/<Name>/raw/ind.<name>.*`` (PyTorch Geometric's layout), where root is ``root``,
    ``$ICML24_DATA`` or ``~/.cache/icml24``; downloads the raw files only when they are missing (and only into
    a folder that exists, or the default cache). The files are pickles: each is checked against its recorded
    SHA-256 before it is read, and a mismatch is refused (``verify=False`` trusts files of your own, e.g. PubMed,
    whose checksums are not recorded here).

    Returns:
        torch_geometric.data.Data with ``x: [num_nodes, num_features]``, undirected ``edge_index: [2, num_edges]``,
        ``y: [num_nodes]`` and boolean ``train_mask``, ``val_mask``, ``test_mask``.
    """
    key = name.lower()
    if key not in PLANETOID_NAMES:
        raise ValueError(f"unknown Planetoid dataset {name!r}; choose one of {', '.join(PLANETOID_NAMES)}")
    require_module("torch_geometric", "icml24.data.planetoid")  # before any download
    base = data_root(root)
    if (root is not None or os.environ.get("ICML24_DATA")) and not base.is_dir():
        raise FileNotFoundError(f"the data folder {base} ({base.resolve()}) does not exist; point root or "
                                f"ICML24_DATA at the folder holding {PLANETOID_NAMES[key]}/raw (for this repo: "
                                "../shared/data)")
    folder = base / PLANETOID_NAMES[key] / "raw"
    missing = [s for s in _PLANETOID_SUFFIXES if not (folder / f"ind.{key}.{s}").exists()]
    if missing:
        if not download:
            raise FileNotFoundError(_missing_message(folder, key, missing))
        _download_planetoid(folder, key, missing)
    if verify:
        _verify_planetoid(folder, key)
    from torch_geometric.io import read_planetoid_data

    data = read_planetoid_data(str(folder), key)
    data.name = PLANETOID_NAMES[key]
    return data


def planetoid_missing(names, root: str | os.PathLike | None = None) -> list[str]:
    """One line per Planetoid dataset among ``names`` whose raw files are not all in the data folder: where they were
    looked for and how to get them (other names, a synthetic graph say, are skipped). Only checks: the command reads
    it before any run, where ``planetoid`` would try a download in the middle of the runs."""
    lines = []
    base = data_root(root)
    for name in names:
        key = str(name).strip().lower()
        if key not in PLANETOID_NAMES:
            continue
        folder = base / PLANETOID_NAMES[key] / "raw"
        missing = [s for s in _PLANETOID_SUFFIXES if not (folder / f"ind.{key}.{s}").is_file()]
        if missing:
            where = "" if os.environ.get("ICML24_DATA") or root is not None else " (ICML24_DATA is not set)"
            lines.append(f"{_missing_message(folder, key, missing)}{where}; with a network, fetch them once into "
                         f"that folder: python -c \"from icml24.data import planetoid; planetoid('{key}')\"")
    return lines


def _missing_message(folder: Path, key: str, missing: list[str]) -> str:
    return (
        f"Planetoid files ind.{key}.{{{','.join(missing)}}} are missing in {folder}; put the raw files there "
        f"or set ICML24_DATA to a folder holding {PLANETOID_NAMES[key]}/raw/ "
        "(for this repo: ICML24_DATA=../shared/data)"
    )


def _verify_planetoid(folder: Path, key: str) -> None:
    recorded = _PLANETOID_SHA256.get(key)
    if recorded is None:
        raise ValueError(f"no SHA-256 is recorded for the Planetoid {PLANETOID_NAMES[key]} files, which are pickles "
                         "(unpickling runs code); pass verify=False only if you trust the files in "
                         f"{folder}")
    for suffix, expected in recorded.items():
        path = folder / f"ind.{key}.{suffix}"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != expected:
            raise ValueError(f"{path} does not match the recorded SHA-256 of the Planetoid file (got {digest[:16]}..., "
                             f"expected {expected[:16]}...); it is a pickle and is not read: replace it with the "
                             "original file")


def _download_planetoid(folder: Path, key: str, missing: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in missing:
        target = folder / f"ind.{key}.{suffix}"
        try:
            with urllib.request.urlopen(f"{_PLANETOID_URL}/ind.{key}.{suffix}", timeout=30) as response:
                payload = response.read()
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise FileNotFoundError(_missing_message(folder, key, missing) + f" (download failed: {exc})") from None
        tmp = target.with_suffix(f"{target.suffix}.{os.getpid()}.part")
        tmp.write_bytes(payload)
        os.replace(tmp, target)


def edge_homophily(edge_index: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of edges whose endpoints share a label."""
    if edge_index.numel() == 0:
        return float("nan")
    return float((y[edge_index[0]] == y[edge_index[1]]).float().mean())


def csbm(num_nodes: int = 1000, num_features: int = 100, num_classes: int = 2, homophily: float = 0.8,
         feature_signal: float = 1.0, random_state=None, avg_degree: float = 10.0,
         split: tuple[float, float] = (0.6, 0.2)):
    """Contextual stochastic block model with a chosen edge homophily.

    Balanced classes. Each of the ``num_nodes * avg_degree / 2`` undirected edges joins a uniformly drawn node
    to a node of its own class with probability ``homophily``, else to a node of another class, so the
    measured edge homophily matches the parameter up to sampling noise. Features are
    ``x_i = feature_signal * mu_{y_i} + eps_i`` with class means ``mu_c ~ N(0, I/num_features)`` and
    noise ``eps_i ~ N(0, I/num_features)``. Train/val/test masks are a random ``split`` of the nodes.
    ``random_state`` (None, an int or a numpy Generator; ``icml24._random.check_random_state``) draws
    labels, edges, features and split.
    """
    if not 0.0 <= homophily <= 1.0:
        raise ValueError(f"homophily must lie in [0, 1], got {homophily}")
    if num_classes < 2 or num_nodes < 2 * num_classes:
        raise ValueError(f"need num_classes >= 2 and num_nodes >= 2 * num_classes, got {num_classes}, {num_nodes}")
    require_module("torch_geometric", "icml24.data.csbm")
    import torch
    from torch_geometric.data import Data
    from torch_geometric.utils import coalesce, to_undirected

    rng = check_random_state(random_state)
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
