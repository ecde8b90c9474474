"""Node-aware bi-smoothing (Lai et al., S&P 2024), the base certificate of the collective certificate (ICML 2024).

The smoothed classifier ``g(G)_v = argmax_c P(f(φ(G))_v = c)`` votes a base GNN ``f`` over random graphs
``φ(G)`` in which every edge is deleted with probability ``p_e`` and every node with probability ``p_n``
(a deleted node loses all its edges but is still classified from its own features: the "include" mode).
Monte Carlo votes give Clopper–Pearson bounds ``p̲_A`` (top class) and ``p̄_B`` (runner-up) at level ``alpha``.

Speed-up (exact): a node that keeps no edge in ``φ(G)`` is classified from its own features alone, so its
vote equals the isolated-node prediction computed once. Each batch of samples therefore runs the GNN only
on the disjoint union of the nodes that keep at least one edge, and the first linear layer
(``model.encode``) runs once for the whole graph.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats
from torch import Tensor, nn

from ..._estimator import Estimator
from ..._random import RandomState, spawn, torch_generator
from ..._validation import FittedAttributes, check_finite, check_fitted
from ..nn import GAT, GCN
from ..operators import sparse_features
from ..training import fit_node_classifier, forked_rng
from .models import NORMALIZATIONS, RowNormalizedGCN


def clopper_pearson(count_top, count_runner_up, num_samples: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson bounds at level ``alpha``: ``(lower of p_A, upper of p_B)``.

    Same as ``statsmodels.stats.proportion.proportion_confint(k, n, alpha, method="beta")`` lower/upper.
    The official code uses ``alpha = 2 * 0.01 / 7`` for every dataset.
    """
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must lie in (0, 1) (the bounds' error level), got {alpha!r}")
    if not (isinstance(num_samples, (int, np.integer)) and num_samples >= 1):
        raise ValueError(f"num_samples must be a positive int, got {num_samples!r}")
    k_a = np.asarray(count_top, dtype=float)
    k_b = np.asarray(count_runner_up, dtype=float)
    if not (np.all(np.isfinite(k_a)) and np.all(np.isfinite(k_b))) or np.any(k_a < 0) or np.any(k_b < 0):
        raise ValueError("count_top and count_runner_up must be finite non-negative counts")
    if np.any(k_a + k_b > num_samples) or np.any(k_b > k_a):
        raise ValueError("need count_runner_up <= count_top and count_top + count_runner_up <= num_samples")
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k_a > 0, stats.beta.ppf(alpha / 2, k_a, num_samples - k_a + 1), 0.0)
        upper = np.where(k_b < num_samples, stats.beta.ppf(1 - alpha / 2, k_b + 1, num_samples - k_b), 1.0)
    return np.nan_to_num(lower, nan=0.0), np.nan_to_num(upper, nan=1.0)


def undirected_edges(edge_index: Tensor) -> Tensor:
    """Each undirected edge once, as ``[2, E]`` with ``src < dst``."""
    edge_index = torch.as_tensor(edge_index, dtype=torch.long)
    both = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    both = both[:, both[0] < both[1]]
    return torch.unique(both, dim=1)


def sample_kept_edges(edges: Tensor, num_nodes: int, p_e: float, p_n: float, num_samples: int,
                      random_state: RandomState = None) -> tuple[Tensor, Tensor]:
    """Draw ``num_samples`` perturbations; return the kept edges as ``(sample_id [K], edge_id [K])``.

    An undirected edge survives iff it is not deleted (prob ``1 - p_e``) and neither endpoint is (``1 - p_n`` each).
    ``random_state`` (``icml24._random.torch_generator``): pass one torch Generator to draw successive batches.
    """
    generator = torch_generator(random_state)
    keep_edge = torch.rand(num_samples, edges.shape[1], generator=generator) >= p_e
    keep_node = torch.rand(num_samples, num_nodes, generator=generator) >= p_n
    sample_id, edge_id = keep_edge.nonzero(as_tuple=True)
    alive = keep_node[sample_id, edges[0, edge_id]] & keep_node[sample_id, edges[1, edge_id]]
    return sample_id[alive], edge_id[alive]


def perturb(edge_index: Tensor, num_nodes: int, p_e: float, p_n: float,
            random_state: RandomState = None) -> Tensor:
    """One sample of ``φ(G)``: the kept edges in both directions, ``[2, 2K]`` (``random_state`` as in
    ``sample_kept_edges``)."""
    edges = undirected_edges(edge_index)
    _, edge_id = sample_kept_edges(edges, num_nodes, p_e, p_n, 1, random_state)
    kept = edges[:, edge_id]
    return torch.cat([kept, kept.flip(0)], dim=1)


@torch.no_grad()
def smoothed_votes(model: nn.Module, x: Tensor, edge_index: Tensor, p_e: float, p_n: float, num_samples: int,
                   num_classes: int | None = None, batch_size: int = 1000,
                   random_state: RandomState = None) -> Tensor:
    """Monte Carlo votes ``counts[v, c] = #{samples: f(φ(G))_v = c}`` of the node-aware bi-smoothed ``model``.

    Args:
        model (nn.Module): ``model(x, edge_index) -> [N, C]`` scores; with ``encode``/``propagate`` methods the
            feature transform runs once. Must be a message-passing GNN (an edgeless node depends only on itself).
        x (Tensor): ``[num_nodes, num_features]``.
        edge_index (Tensor): ``[2, num_edges]``, undirected.
        p_e, p_n (float): edge and node deletion probabilities.
        num_samples (int): Monte Carlo samples N.
        num_classes (int, optional): defaults to the model's output width.
        batch_size (int, default 1000): perturbed graphs evaluated in one forward pass.
        random_state (None, int, torch or numpy Generator): the samples' randomness
            (``icml24._random.torch_generator``; an int ``s`` draws what ``torch.Generator().manual_seed(s)``
            does, None fresh entropy).

    Returns:
        LongTensor ``[num_nodes, num_classes]`` whose rows sum to ``num_samples``.
    """
    if not (0.0 <= p_e <= 1.0 and 0.0 <= p_n <= 1.0):
        raise ValueError(f"p_e and p_n must lie in [0, 1], got p_e={p_e}, p_n={p_n}")
    if num_samples < 1 or batch_size < 1:
        raise ValueError("num_samples and batch_size must be positive")
    was_training = model.training
    model.eval()
    generator = torch_generator(random_state)
    num_nodes = x.shape[0]
    has_encode = hasattr(model, "encode") and hasattr(model, "propagate")
    base = model.encode(x) if has_encode else x

    def run(features: Tensor, ei: Tensor) -> Tensor:
        return model.propagate(features, ei) if has_encode else model(features, ei)

    isolated_out = run(base, torch.empty(2, 0, dtype=torch.long))
    isolated_pred = isolated_out.argmax(dim=1)  # the vote of every node that keeps no edge
    num_classes = int(num_classes or isolated_out.shape[1])
    counts = torch.zeros(num_nodes, num_classes, dtype=torch.long)
    counts[torch.arange(num_nodes), isolated_pred] = num_samples
    edges = undirected_edges(edge_index)
    done = 0
    while done < num_samples:
        batch = min(batch_size, num_samples - done)
        done += batch
        sample_id, edge_id = sample_kept_edges(edges, num_nodes, p_e, p_n, batch, generator)
        if sample_id.numel() == 0:
            continue
        # disjoint union of the touched nodes of all samples: global id = sample * N + node
        ends = edges[:, edge_id] + sample_id * num_nodes
        touched, local = torch.unique(ends, return_inverse=True)
        node = touched % num_nodes
        sub_edges = torch.cat([local, local.flip(0)], dim=1)
        pred = run(base[node], sub_edges).argmax(dim=1)
        ones = torch.ones_like(node)
        counts.index_put_((node, isolated_pred[node]), -ones, accumulate=True)
        counts.index_put_((node, pred), ones, accumulate=True)
    model.train(was_training)
    return counts


def top_two(counts: Tensor | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(top2 [N, 2], count_top [N], count_runner_up [N])`` from vote counts ``[N, C]``."""
    counts = np.asarray(counts)
    order = np.argsort(-counts, axis=1, kind="stable")[:, :2]
    picked = np.take_along_axis(counts, order, axis=1)
    return order, picked[:, 0], picked[:, 1]


def train_under_smoothing(model: nn.Module, x: Tensor, edge_index: Tensor, y: Tensor, train_idx, val_idx,
                          p_e: float, p_n: float, epochs: int = 1000, lr: float = 1e-3, weight_decay: float = 1e-3,
                          patience: int = 30, eval_every: int = 10,
                          random_state: RandomState = None) -> dict[str, float]:
    """Train ``model`` on a fresh perturbed graph ``φ(G)`` every epoch (Adam, cross-entropy on ``train_idx``).

    Every ``eval_every`` epochs the accuracy on ``val_idx`` under one perturbed graph is measured; the best
    state is kept and training stops after ``patience`` evaluations without improvement (as the official code).
    The parameters are redrawn from ``random_state`` first (one torch Generator drives initialization, dropout
    and the perturbed graphs; see ``fit_node_classifier``).
    Returns ``{"epochs": ..., "best_val_acc": ...}``.
    """
    from torch_geometric.data import Data

    num_nodes = x.shape[0]
    generator = torch_generator(random_state)
    fit = fit_node_classifier(  # the generator by position (the training loop's own parameter name)
        model, Data(x=x, edge_index=edge_index, y=y), epochs, lr, weight_decay, patience, generator,
        train=train_idx, val=val_idx, eval_every=eval_every,
        perturb=lambda graph, gen: perturb(graph, num_nodes, p_e, p_n, gen))
    return {"epochs": float(fit.epochs), "best_val_acc": fit.val_acc}


def _base_model(name: str, in_channels: int, out_channels: int, hidden_channels: int, dropout: float,
                normalization: str = "sym") -> nn.Module:
    """``"gcn"`` (hidden-layer dropout only, as Lai et al.; ``normalization`` "sym" or "row") or ``"gat"``."""
    name = name.lower()
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")
    if name == "gcn":
        cls = GCN if normalization == "sym" else RowNormalizedGCN
        return cls(in_channels, out_channels, hidden_channels, dropout, input_dropout=False)
    if name == "gat":
        return GAT(in_channels, out_channels, hidden_channels, dropout=dropout)
    raise ValueError(f"unknown base model {name!r}; expected 'gcn' or 'gat'")


class NodeAwareSmoothing(FittedAttributes, Estimator):
    """Node-aware bi-smoothed GNN classifier (Lai et al., S&P 2024), as used by the collective certificate.

    ``fit`` trains a GCN/GAT under the smoothing noise; ``votes`` draws ``num_samples`` perturbed graphs
    ``φ(G)`` (edges deleted w.p. ``p_e``, nodes w.p. ``p_n``) and counts the base predictions; ``bounds`` turns
    the top-two counts into Clopper–Pearson ``(p̲_A, p̄_B)``.

    Args:
        p_e (float, default 0.9): edge deletion probability.
        p_n (float, default 0.8): node deletion probability.
        model (str, default "gcn"): base classifier, ``"gcn"`` or ``"gat"``.
        normalization (str, default "sym"): the GCN's propagation, ``"sym"`` (``D^-1/2 (A + I) D^-1/2``, the
            paper's; receptive field 3 hops for injections: certify with ``CollectiveCertificate(hops=3)``) or
            ``"row"`` (``D^-1 (A + I)``; 2 hops, the paper's certificate ``hops=2`` is sound). Ignored for GAT (2 hops).
        hidden_channels (int, default 64): hidden width of the base model.
        dropout (float, default 0.5): dropout of the base model.
        epochs (int, default 1000): training epochs (validation every 10 epochs).
        lr (float, default 1e-3): learning rate.
        weight_decay (float, default 1e-3): weight decay.
        patience (int, default 30): validation checks without improvement before training stops.
        num_samples (int, default 100_000): Monte Carlo samples N.
        batch_size (int, default 1000): perturbed graphs per forward pass.
        alpha (float, default 2 * 0.01 / 7): Clopper–Pearson level (the official value).
        random_state (None, int or Generator, default None): seeds initialisation and training noise
            (``icml24._random.torch_generator``); the Monte Carlo votes draw from an independent child stream
            (``icml24._random.spawn``). Torch's global generator is left untouched.
    """

    def __init__(self, p_e: float = 0.9, p_n: float = 0.8, model: str = "gcn", hidden_channels: int = 64,
                 dropout: float = 0.5, epochs: int = 1000, lr: float = 1e-3, weight_decay: float = 1e-3,
                 patience: int = 30, num_samples: int = 100_000, batch_size: int = 1000,
                 alpha: float = 2 * 0.01 / 7, random_state: RandomState = None, normalization: str = "sym"):
        self.p_e, self.p_n, self.model, self.normalization = p_e, p_n, model, normalization
        self.hidden_channels, self.dropout = hidden_channels, dropout
        self.epochs, self.lr, self.weight_decay, self.patience = epochs, lr, weight_decay, patience
        self.num_samples, self.batch_size, self.alpha = num_samples, batch_size, alpha
        self.random_state = random_state

    def fit(self, data, train_idx, val_idx) -> NodeAwareSmoothing:
        """Train the base model on ``data`` (``x``, ``edge_index``, ``y``) under the smoothing noise."""
        for name in ("x", "edge_index", "y"):
            if getattr(data, name, None) is None:
                raise ValueError(f"data needs a '{name}' attribute (a torch_geometric Data with x, edge_index, y)")
        check_finite("data.x", data.x)
        num_classes = int(data.y.max()) + 1
        # the training stream, and the votes' own (independent) stream fixed now so that votes() is repeatable
        training_stream = torch_generator(self.random_state)
        self.votes_seed_ = int(spawn(self.random_state, 1)[0].integers(0, 2**63 - 1, dtype=np.int64))
        with forked_rng():  # building the model must not advance torch's global generator; fit redraws it
            self.model_ = _base_model(self.model, data.x.shape[1], num_classes, self.hidden_channels, self.dropout,
                                      self.normalization)
        self.training_ = train_under_smoothing(
            self.model_, sparse_features(data.x), data.edge_index, data.y, train_idx, val_idx, self.p_e, self.p_n,
            self.epochs, self.lr, self.weight_decay, self.patience, random_state=training_stream)
        self.num_classes_ = num_classes
        return self

    def votes(self, data) -> np.ndarray:
        """Vote counts ``[num_nodes, num_classes]`` over ``num_samples`` perturbed graphs (sets ``counts_``)."""
        check_fitted(self, "model_")
        counts = smoothed_votes(self.model_, sparse_features(data.x), data.edge_index, self.p_e, self.p_n,
                                self.num_samples, self.num_classes_, self.batch_size,
                                random_state=self.votes_seed_)
        self.counts_ = counts.numpy()
        return self.counts_

    def predict(self, data=None) -> np.ndarray:
        """Smoothed prediction (most-voted class) per node."""
        if data is None:
            check_fitted(self, "counts_")
        counts = self.counts_ if data is None else self.votes(data)
        return top_two(counts)[0][:, 0]

    def bounds(self, counts=None) -> tuple[np.ndarray, np.ndarray]:
        """Clopper–Pearson ``(p̲_A, p̄_B)`` per node from the vote counts."""
        if counts is None:
            check_fitted(self, "counts_")
        _, count_top, count_runner_up = top_two(self.counts_ if counts is None else counts)
        return clopper_pearson(count_top, count_runner_up, self.num_samples, self.alpha)

    def __repr__(self) -> str:
        return (f"NodeAwareSmoothing(p_e={self.p_e}, p_n={self.p_n}, model={self.model!r}, "
                f"normalization={self.normalization!r}, "
                f"num_samples={self.num_samples}, alpha={self.alpha:.6g}, random_state={self.random_state!r})")
