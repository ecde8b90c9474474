"""Train a node classifier on a (synthetic or real) graph, select it on the real validation nodes, test it.

This is the evaluation protocol of graph distillation (GCond, GDEM): a GNN is trained on the small graph
``(X', A', y')``; after every epoch it predicts on the *real* graph, and the weights with the best real
validation accuracy are kept and scored on the real test nodes (``fit_node_classifier``
with ``eval_data``).
"""

from __future__ import annotations

import torch
from torch_geometric.data import Data

from ..operators import normalized_adjacency, sparse_features
from ..training import fit_node_classifier, forked_rng
from .models import build_model


def prepare_real_graph(data: Data) -> Data:
    """The real graph prepared once for repeated evaluation: a ``Data`` with ``x`` (sparse CSR when at most 10% of
    the entries are non-zero), ``adj`` (GCN's ``S`` as a sparse CSR float32 matrix, built once), ``edge_index``,
    ``y`` and the train/val/test masks of ``data``."""
    for name in ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask"):
        if getattr(data, name, None) is None:
            raise ValueError(f"the real graph needs data.{name} (a Planetoid-style Data with the public split)")
    return Data(x=sparse_features(data.x.float()), edge_index=data.edge_index, y=data.y,
                adj=normalized_adjacency(data.edge_index, data.num_nodes, dtype=torch.float32),
                train_mask=data.train_mask, val_mask=data.val_mask, test_mask=data.test_mask, num_nodes=data.num_nodes)


def _as_real(real: Data) -> Data:
    return real if getattr(real, "adj", None) is not None else prepare_real_graph(real)


def _fresh_model(architecture: str, real: Data, hidden: int, dropout: float) -> torch.nn.Module:
    with forked_rng():  # building a model must not advance torch's global generator; the fit redraws it
        return build_model(architecture, real.x.shape[1], int(real.y.max()) + 1, hidden, dropout)


def train_on_synthetic(synthetic: Data, real: Data, architecture: str = "GCN", hidden: int = 256,
                       dropout: float = 0.5, epochs: int = 2000, lr: float = 0.01, weight_decay: float = 5e-4,
                       random_state=None) -> dict[str, float]:
    """Train ``architecture`` on a small graph, select on the real validation set, score on the real test set.

    Args:
        synthetic (Data): ``x [n', d]``, ``y [n']`` and the graph: ``synthetic.adj [n', n']`` (dense, used as
            given, e.g. GDEM's ``A' = I - U' Lambda U'^T``) or else ``edge_index`` (GCN-normalized, e.g. a coreset);
            every node trains.
        real (Data): the real graph with its public split (see ``prepare_real_graph``).
        architecture (str): ``"GCN"``, ``"SGC"``, ``"APPNP"``, ``"ChebNet"`` or ``"MLP"``.
        random_state (None, int, torch or numpy Generator): the model's initialization and dropout (global RNG
            untouched; see ``fit_node_classifier``).

    Returns:
        ``{"test_acc", "val_acc", "best_epoch", "epochs", "seconds"}``.
    """
    real = _as_real(real)
    if getattr(synthetic, "adj", None) is None and getattr(synthetic, "edge_index", None) is None:
        raise ValueError("synthetic graph needs .adj (dense [n', n']) or .edge_index")
    if synthetic.x.shape[1] != real.x.shape[1]:
        raise ValueError(f"synthetic features have {synthetic.x.shape[1]} columns, the real graph {real.x.shape[1]}")
    adj = synthetic.adj.float() if getattr(synthetic, "adj", None) is not None else None
    train = Data(x=synthetic.x.float(), y=synthetic.y, edge_index=synthetic.edge_index, adj=adj,
                 num_nodes=synthetic.x.shape[0])
    model = _fresh_model(architecture, real, hidden, dropout)
    return fit_node_classifier(model, train, epochs, lr, weight_decay, random_state=random_state,
                               eval_data=real).as_dict()


def train_on_whole_graph(real: Data, architecture: str = "GCN", hidden: int = 256, dropout: float = 0.5,
                         epochs: int = 2000, lr: float = 0.01, weight_decay: float = 5e-4,
                         random_state=None, return_model: bool = False):
    """The whole-graph baseline: train on the real graph's training nodes, same selection and scoring.

    Returns the metrics of ``train_on_synthetic``, and the trained model with ``return_model``.
    """
    real = _as_real(real)
    model = _fresh_model(architecture, real, hidden, dropout)
    result = fit_node_classifier(model, real, epochs, lr, weight_decay, random_state=random_state).as_dict()
    return (result, model) if return_model else result
