"""GDEM's fixed synthetic labels and the initial synthetic eigenvectors and features.

* Labels: each class but the most frequent gets ``max(floor(r * n_c), 1)`` synthetic nodes, the most frequent
  gets the remainder of ``floor(r * n_train)`` (classes ordered by training count, as in the GDEM code).
* Eigenvectors: those of ``I - D~^{-1/2}(A + I)D~^{-1/2}`` for a stochastic-block-model graph with ``C`` equal
  blocks, ``p_in = 1/C`` and ``p_out = p_in / 3``.
* Features: an MLP is trained on the real training nodes (selected on validation accuracy); then ``X'``
  (Xavier-uniform) is optimized so that this frozen MLP assigns each synthetic node its label.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..._random import check_random_state
from ..nn import MLP
from ..operators import sparse_features


def synthetic_label_counts(train_labels: torch.Tensor | np.ndarray, reduction_rate: float,
                           num_classes: int | None = None) -> np.ndarray:
    """``[C]`` number of synthetic nodes per class; they sum to ``floor(r * n_train)``."""
    labels = np.asarray(train_labels.cpu() if isinstance(train_labels, torch.Tensor) else train_labels)
    num_classes = int(labels.max()) + 1 if num_classes is None else num_classes
    counts = np.bincount(labels, minlength=num_classes)
    present = np.flatnonzero(counts)
    order = present[np.argsort(counts[present], kind="stable")]  # ascending training count
    total = int(len(labels) * reduction_rate)
    alloc = np.zeros(num_classes, dtype=np.int64)
    alloc[order[:-1]] = np.maximum((counts[order[:-1]] * reduction_rate).astype(np.int64), 1)
    alloc[order[-1]] = total - alloc[order[:-1]].sum()
    if alloc[order[-1]] < 1:
        raise ValueError(f"reduction_rate={reduction_rate} leaves no synthetic node for the largest class; raise it")
    return alloc


def synthetic_labels(train_labels: torch.Tensor, reduction_rate: float, num_classes: int | None = None) -> torch.Tensor:
    """``[n']`` synthetic labels, grouped by class in ascending order of training count."""
    alloc = synthetic_label_counts(train_labels, reduction_rate, num_classes)
    counts = np.bincount(np.asarray(train_labels.cpu()), minlength=len(alloc))
    order = np.argsort(np.where(alloc > 0, counts, -1), kind="stable")
    order = order[alloc[order] > 0]
    return torch.as_tensor(np.repeat(order, alloc[order]), dtype=torch.long)


def sbm_eigenvectors(num_nodes: int, num_blocks: int, random_state=None) -> np.ndarray:
    """``[n', n']`` eigenvectors (ascending eigenvalues) of the normalized Laplacian of an SBM graph sampled from
    ``random_state`` (None, an int or a numpy Generator, used as is; ``icml24._random.check_random_state``)."""
    rng = check_random_state(random_state)
    size = num_nodes // num_blocks
    sizes = [size] * (num_blocks - 1) + [num_nodes - (num_blocks - 1) * size]
    block = np.repeat(np.arange(num_blocks), sizes)
    p_in = 1.0 / num_blocks
    prob = np.where(block[:, None] == block[None, :], p_in, p_in / 3.0)
    upper = np.triu(rng.random((num_nodes, num_nodes)) < prob, k=1)
    adj = (upper | upper.T).astype(np.float64) + np.eye(num_nodes)
    inv_sqrt = 1.0 / np.sqrt(adj.sum(1))
    laplacian = np.eye(num_nodes) - inv_sqrt[:, None] * adj * inv_sqrt[None, :]
    return np.linalg.eigh(laplacian)[1]


def train_feature_mlp(x_train: torch.Tensor, y_train: torch.Tensor, x_val: torch.Tensor, y_val: torch.Tensor,
                      num_classes: int, hidden: int = 256, dropout: float = 0.0, epochs: int = 100,
                      lr: float = 0.05, weight_decay: float = 5e-4) -> MLP:
    """An MLP trained on the real training nodes, kept at its best validation accuracy.

    As in the GDEM code, Adam is restarted (same learning rate) halfway through: the one reason this loop is not
    ``fit_node_classifier``.
    """
    model = MLP(x_train.shape[1], num_classes, hidden_channels=hidden, dropout=dropout)
    x_train, x_val = sparse_features(x_train), sparse_features(x_val)  # bag-of-words: CSR products are cheaper
    best_acc, best_state = -1.0, None
    for epoch in range(epochs):
        if epoch == 0 or epoch == epochs // 2:
            optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x_train), y_train).backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x_val).argmax(1) == y_val).float().mean().item()
        if acc > best_acc:
            best_acc, best_state = acc, {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    return model


def initial_features(model: MLP, labels: torch.Tensor, num_features: int, epochs: int = 200, lr: float = 0.005,
                     weight_decay: float = 0.05) -> torch.Tensor:
    """``[n', d]`` features that the frozen ``model`` classifies as ``labels`` (Adam on the loss w.r.t. ``X'``)."""
    n = labels.shape[0]
    bound = float(np.sqrt(6.0 / (n + num_features)))
    features = torch.empty(n, num_features).uniform_(-bound, bound).requires_grad_(True)
    optimizer = torch.optim.Adam([features], lr=lr, weight_decay=weight_decay)
    model.train()  # mirrors the code (dropout is 0 for the Planetoid configs)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for _ in range(epochs):
        optimizer.zero_grad()
        F.cross_entropy(model(features), labels).backward()
        optimizer.step()
    return features.detach()
