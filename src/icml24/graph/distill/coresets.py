"""Coreset baselines for graph distillation: random and herding selections of real training nodes.

Both keep ``counts[c]`` training nodes of each class ``c`` (use
``synthetic_label_counts`` to match GDEM's synthetic graph) and
return the induced subgraph, as in GCond's coreset baselines. Herding (Welling, ICML 2009) greedily adds the
node that keeps the running mean of the selected embeddings closest to the class mean.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import subgraph

from ..._random import check_random_state


def _check(data: Data, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if getattr(data, "train_mask", None) is None:
        raise ValueError("coresets select training nodes: data.train_mask is required")
    train = data.train_mask.nonzero().view(-1).cpu().numpy()
    y_train = data.y[train].cpu().numpy()
    available = np.bincount(y_train, minlength=len(counts))
    if np.any(np.asarray(counts) > available[: len(counts)]):
        raise ValueError(f"asked for {list(counts)} nodes per class but the training set has {list(available)}")
    return train, y_train


def induced_coreset(data: Data, nodes: np.ndarray | torch.Tensor) -> Data:
    """``Data(x, y, edge_index)`` of the subgraph induced by ``nodes`` (relabelled 0..len(nodes)-1).

    ``node_index`` keeps the original ids; the edges are GCN-normalized when training on it.
    """
    nodes = torch.as_tensor(np.asarray(nodes), dtype=torch.long)
    edge_index, _ = subgraph(nodes, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes)
    x = data.x[nodes]
    x = x.to_dense() if x.layout != torch.strided else x
    return Data(x=x, y=data.y[nodes], edge_index=edge_index, node_index=nodes, num_nodes=len(nodes))


def random_coreset(data: Data, counts: np.ndarray, random_state=None) -> Data:
    """``counts[c]`` training nodes of each class, uniformly at random (stratified), drawn from ``random_state``
    (None, an int or a numpy Generator; ``icml24._random.check_random_state``)."""
    train, y_train = _check(data, counts)
    rng = check_random_state(random_state)
    chosen = [rng.choice(train[y_train == c], size=int(m), replace=False) for c, m in enumerate(counts) if m > 0]
    return induced_coreset(data, np.concatenate(chosen))


def herding_select(embeddings: torch.Tensor, budget: int) -> torch.Tensor:
    """Indices (into ``embeddings [n, h]``) of ``budget`` rows chosen by herding, in selection order."""
    n = embeddings.shape[0]
    if budget > n:
        raise ValueError(f"cannot herd {budget} rows out of {n}")
    target = embeddings.mean(0)
    selected = torch.zeros(n, dtype=torch.bool)
    order, running = [], torch.zeros_like(target)
    for step in range(budget):
        candidate_means = (running.unsqueeze(0) + embeddings) / (step + 1)  # mean if each row were added
        distance = (candidate_means - target).norm(dim=1).masked_fill(selected, float("inf"))
        best = int(distance.argmin())
        selected[best] = True
        order.append(best)
        running = running + embeddings[best]
    return torch.as_tensor(order, dtype=torch.long)


def herding_coreset(data: Data, counts: np.ndarray, embeddings: torch.Tensor | None = None) -> Data:
    """``counts[c]`` training nodes of each class chosen by herding on ``embeddings [n, h]`` (default ``data.x``)."""
    train, y_train = _check(data, counts)
    source = data.x if embeddings is None else embeddings
    source = (source.to_dense() if source.layout != torch.strided else source).float()
    chosen = []
    for c, m in enumerate(counts):
        if m > 0:
            members = train[y_train == c]
            chosen.append(members[herding_select(source[members], int(m)).numpy()])
    return induced_coreset(data, np.concatenate(chosen))
