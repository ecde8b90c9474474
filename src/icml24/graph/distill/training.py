"""Train a node classifier on a (synthetic or real) graph, select it on the real validation nodes, test it.

This is the evaluation protocol of graph distillation (GCond, GDEM): a GNN is trained on the small graph
``(X', A', y')``; after every epoch it predicts on the *real* graph, and the weights with the best real
validation accuracy are kept and scored on the real test nodes.
"""

from __future__ import annotations

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from .models import build_model


@dataclass
class RealGraph:
    """The real graph prepared once for repeated evaluation.

    Attributes:
        x: ``[n, d]`` features (sparse CSR when at most 10% of entries are non-zero).
        adj: ``[n, n]`` sparse CSR ``D~^{-1/2}(A + I)D~^{-1/2}``.
        y: ``[n]`` labels; ``train_index``, ``val_index``, ``test_index``: node ids of the public split.
    """

    x: torch.Tensor
    adj: torch.Tensor
    y: torch.Tensor
    train_index: torch.Tensor
    val_index: torch.Tensor
    test_index: torch.Tensor
    num_classes: int


def gcn_normalized_adjacency(edge_index: torch.Tensor, num_nodes: int, dense: bool = False) -> torch.Tensor:
    """``D~^{-1/2}(A + I)D~^{-1/2}`` of the symmetrized, unweighted graph (sparse CSR unless ``dense``)."""
    loops = torch.arange(num_nodes, device=edge_index.device)
    edges = torch.cat([edge_index, edge_index.flip(0), torch.stack([loops, loops])], dim=1)
    edges = torch.unique(edges, dim=1)
    degree = torch.bincount(edges[0], minlength=num_nodes).float()
    inv_sqrt = degree.pow(-0.5)
    values = inv_sqrt[edges[0]] * inv_sqrt[edges[1]]
    adj = torch.sparse_coo_tensor(edges, values, (num_nodes, num_nodes), check_invariants=False).coalesce()
    return adj.to_dense() if dense else _to_csr(adj)


def _to_csr(x: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return x.to_sparse_csr()


def prepare_real_graph(data: Data) -> RealGraph:
    """Build the :class:`RealGraph` of a PyG ``Data`` with ``x, y, edge_index`` and train/val/test masks."""
    for name in ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask"):
        if getattr(data, name, None) is None:
            raise ValueError(f"the real graph needs data.{name} (a Planetoid-style Data with the public split)")
    x = data.x.float()
    if x.layout == torch.strided and (x != 0).float().mean() <= 0.1:
        x = _to_csr(x)  # CSR products are several times faster than COO or dense on bag-of-words features
    return RealGraph(x=x, adj=gcn_normalized_adjacency(data.edge_index, data.num_nodes), y=data.y,
                     train_index=data.train_mask.nonzero().view(-1), val_index=data.val_mask.nonzero().view(-1),
                     test_index=data.test_mask.nonzero().view(-1), num_classes=int(data.y.max()) + 1)


def fit_with_validation(model: torch.nn.Module, x: torch.Tensor, adj: torch.Tensor | None, y: torch.Tensor,
                        real: RealGraph, epochs: int = 2000, lr: float = 0.01, weight_decay: float = 5e-4,
                        train_index: torch.Tensor | None = None) -> dict[str, float]:
    """Adam on the NLL of ``model(x, adj)[train_index]``; keep the weights with the best real validation accuracy.

    Returns ``{"test_acc", "val_acc", "best_epoch", "seconds"}`` (accuracies in ``[0, 1]``).
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    targets = y if train_index is None else y[train_index]
    val_y = real.y[real.val_index]
    best_val, best_epoch, best_state = -1.0, -1, None
    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, adj)
        loss = F.nll_loss(out if train_index is None else out[train_index], targets)
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            val_acc = (model(real.x, real.adj)[real.val_index].argmax(1) == val_y).float().mean().item()
        if val_acc > best_val:
            best_val, best_epoch = val_acc, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        pred = model(real.x, real.adj).argmax(1)
    test_acc = (pred[real.test_index] == real.y[real.test_index]).float().mean().item()
    return {"test_acc": test_acc, "val_acc": best_val, "best_epoch": float(best_epoch),
            "seconds": time.perf_counter() - start}


def _as_real(real: Data | RealGraph) -> RealGraph:
    return real if isinstance(real, RealGraph) else prepare_real_graph(real)


@contextmanager
def seeded(seed: int | None):
    """Run a block under ``torch.manual_seed(seed)`` without disturbing the caller's global torch RNG."""
    with torch.random.fork_rng(devices=[]):
        if seed is not None:
            torch.manual_seed(seed)
        yield


def train_on_synthetic(synthetic: Data, real: Data | RealGraph, architecture: str = "GCN", hidden: int = 256,
                       dropout: float = 0.5, epochs: int = 2000, lr: float = 0.01, weight_decay: float = 5e-4,
                       seed: int | None = None) -> dict[str, float]:
    """Train ``architecture`` on a small graph, select on the real validation set, score on the real test set.

    Args:
        synthetic (Data): ``x [n', d]``, ``y [n']`` and the propagation matrix: ``synthetic.adj [n', n']``
            (dense, used as given, e.g. GDEM's ``A' = I - U' Lambda U'^T``) or else ``edge_index``, which is
            GCN-normalized with self-loops.
        real (Data or RealGraph): the real graph with its public split (see :func:`prepare_real_graph`).
        architecture (str): ``"GCN"``, ``"SGC"``, ``"APPNP"``, ``"ChebNet"`` or ``"MLP"``.
        seed (int, optional): seeds the model's initialization and dropout (global torch RNG left untouched).

    Returns:
        ``{"test_acc", "val_acc", "best_epoch", "seconds"}``.
    """
    real = _as_real(real)
    if getattr(synthetic, "adj", None) is not None:
        adj = synthetic.adj.float()
    elif getattr(synthetic, "edge_index", None) is not None:
        adj = gcn_normalized_adjacency(synthetic.edge_index, synthetic.num_nodes, dense=True)
    else:
        raise ValueError("synthetic graph needs .adj (dense [n', n']) or .edge_index")
    if synthetic.x.shape[1] != real.x.shape[1]:
        raise ValueError(f"synthetic features have {synthetic.x.shape[1]} columns, the real graph {real.x.shape[1]}")
    with seeded(seed):
        model = build_model(architecture, real.x.shape[1], real.num_classes, hidden, dropout)
        return fit_with_validation(model, synthetic.x.float(), adj, synthetic.y, real, epochs, lr, weight_decay)


def train_on_whole_graph(real: Data | RealGraph, architecture: str = "GCN", hidden: int = 256, dropout: float = 0.5,
                         epochs: int = 2000, lr: float = 0.01, weight_decay: float = 5e-4,
                         seed: int | None = None, return_model: bool = False):
    """The whole-graph baseline: train on the real graph's training nodes, same selection and scoring."""
    real = _as_real(real)
    with seeded(seed):
        model = build_model(architecture, real.x.shape[1], real.num_classes, hidden, dropout)
        result = fit_with_validation(model, real.x, real.adj, real.y, real, epochs, lr, weight_decay,
                                     train_index=real.train_index)
    return (result, model) if return_model else result


def accuracy_summary(values: list[float]) -> tuple[float, float]:
    """Mean and (population) standard deviation in percent."""
    arr = 100.0 * np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.std())
