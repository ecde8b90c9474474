"""Kernel-graph alignment: empirical NTK, centred kernel alignment and a training-dynamics tracker.

Yang, Wu, Wipf, Sun, Yan. "How Graph Neural Networks Learn: Lessons from Training Dynamics", ICML 2024.

The paper explains GNN generalization by the alignment, during training, of the network's empirical neural
tangent kernel ``Theta_t`` with the graph operator ``S^{2L}`` (``L`` layers) and with the optimal kernel
``Y Y^T``. Alignment is centred kernel alignment

    A(K1, K2) = <H K1 H, H K2 H>_F / (||H K1 H||_F ||H K2 H||_F),   H = I - 1 1^T / n.

NTK conventions for a network with ``C`` outputs (``J_{n,k} = d f_k(x_n) / d theta``):

- ``"summed"``: ``Theta[n, N] = sum_{k, K} <J_{n,k}, J_{N,K}>``, the NTK of the summed logits ``sum_k f_k``.
  This is what the official code computes (``einsum('nkm,NKm->nN')``), so use it to compare with the paper.
- ``"trace"``: ``Theta[n, N] = sum_k <J_{n,k}, J_{N,k}>``, the per-class kernel summed over classes (the usual
  NTK when outputs are exchangeable; infinite-width NTKs are ``Theta (x) I_C``).
- ``"full"``: the ``[n, C, n, C]`` tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from .._random import seed_int
from .operators import normalize_features, normalized_adjacency

__all__ = ["centered_kernel_alignment", "empirical_ntk", "graph_kernel", "TwoLayerGCN", "AlignmentTracker",
           "track_gcn_alignment"]

_CONVENTIONS = ("summed", "trace", "full")


def centered_kernel_alignment(k1, k2) -> float:
    """``A(K1, K2)`` for two ``[n, n]`` kernels (tensors or arrays), computed in float64; ``nan`` if one is constant."""
    k1 = torch.as_tensor(k1, dtype=torch.float64)
    k2 = torch.as_tensor(k2, dtype=torch.float64)
    if k1.shape != k2.shape or k1.dim() != 2 or k1.shape[0] != k1.shape[1]:
        raise ValueError(f"kernels must be square and of equal shape, got {tuple(k1.shape)} and {tuple(k2.shape)}")

    c1, c2 = _center(k1), _center(k2)
    denominator = float(c1.norm() * c2.norm())
    return float((c1 * c2).sum()) / denominator if denominator > 0 else float("nan")


def empirical_ntk(model: nn.Module, *inputs, convention: str = "summed", parameters: list[str] | None = None,
                  chunk_size: int | None = None) -> torch.Tensor:
    """Empirical NTK of ``model(*inputs) -> [n, C]`` by Jacobian contraction (``torch.func``).

    Args:
        model: a module whose output row ``n`` is the prediction for example (node) ``n``.
        convention (str): ``"summed"`` (official code), ``"trace"`` -> ``[n, n]``; ``"full"`` -> ``[n, C, n, C]``.
        parameters (list[str] | None): names of the parameters to differentiate (default: all that need grad);
            the NTK is a sum over parameters, so this gives one block of it.
        chunk_size (int | None): passed to ``jacrev`` to bound memory.
    The Jacobian takes ``n * C * P`` numbers; for large graphs use an analytic kernel (``TwoLayerGCN.ntk``).
    """
    from torch.func import functional_call, jacrev

    if convention not in _CONVENTIONS:
        raise ValueError(f"convention must be one of {_CONVENTIONS}, got {convention!r}")
    named = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    if parameters is not None:
        unknown = set(parameters) - set(named)
        if unknown:
            raise ValueError(f"model has no trainable parameter {sorted(unknown)}; it has {sorted(named)}")
        named = {name: named[name] for name in parameters}
    buffers = dict(model.named_buffers())
    others = {name: p.detach() for name, p in model.named_parameters() if name not in named}

    def output(params):
        out = functional_call(model, {**others, **buffers, **params}, inputs)
        out = out if out.dim() == 2 else out.unsqueeze(-1)
        return out.sum(dim=1) if convention == "summed" else out

    jacobian = jacrev(output, chunk_size=chunk_size)(named)
    n = next(iter(jacobian.values())).shape[0]
    if convention == "summed":
        flat = torch.cat([j.reshape(n, -1) for j in jacobian.values()], dim=1)
        return flat @ flat.T
    num_outputs = next(iter(jacobian.values())).shape[1]
    flat = torch.cat([j.reshape(n, num_outputs, -1) for j in jacobian.values()], dim=2)
    if convention == "trace":
        return torch.einsum("nkp,Nkp->nN", flat, flat)
    return torch.einsum("nkp,NKp->nkNK", flat, flat)


def graph_kernel(operator: torch.Tensor, power: int) -> torch.Tensor:
    """Dense ``S^power`` (``[n, n]``, float64) from a sparse or dense ``S``."""
    n = operator.shape[0]
    result = torch.eye(n, dtype=torch.float64, device=operator.device)
    operator = operator.to(torch.float64)
    for _ in range(power):
        result = operator @ result
    return result.to_dense() if result.is_sparse else result


def _mm(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    return torch.sparse.mm(left, right) if left.layout != torch.strided else left @ right


class TwoLayerGCN(nn.Module):
    r"""The GCN of the paper's alignment study: ``f(X) = S relu(S X W_1^T + b_1) W_2^T + b_2``.

    Propagation precedes each ``nn.Linear`` (as in the official code), so the biases are not propagated.
    Kept apart from ``icml24.graph.nn.GCN`` because ``ntk`` is the exact NTK of this parametrization.

    Args:
        operator (Tensor): ``S`` as a sparse or dense ``[n, n]`` tensor (float32).
        in_features, hidden, out_features (int): layer widths.
    """

    def __init__(self, operator: torch.Tensor, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.operator = operator
        self.lin1 = nn.Linear(in_features, hidden)
        self.lin2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor, propagated: bool = False) -> torch.Tensor:
        """``x: [n, in_features]`` -> logits ``[n, out_features]``; ``propagated=True`` if ``x`` is already ``S X``."""
        sx = x if propagated else _mm(self.operator, x)
        hidden = torch.relu(_mm(sx, self.lin1.weight.T) + self.lin1.bias)
        return self.lin2(_mm(self.operator, hidden))

    def rows_forward(self, sx_support: torch.Tensor, row_operator: torch.Tensor) -> torch.Tensor:
        """Logits of a few rows only, from the hidden features they read: ``S[rows, sup] relu(SX[sup] W_1^T + b_1)``.

        ``sx_support``: rows ``sup`` of ``S X`` (the 1-hop support of the rows); ``row_operator``: ``S[rows, sup]``
        (dense). Exactly the rows of ``forward`` (the loss reads only the training rows), at a fraction of its cost.
        """
        hidden = torch.relu(_mm(sx_support, self.lin1.weight.T) + self.lin1.bias)
        return self.lin2(row_operator @ hidden)

    @torch.no_grad()
    def ntk(self, sx: torch.Tensor, convention: str = "summed", feature_gram: torch.Tensor | None = None
            ) -> dict[str, torch.Tensor]:
        """Exact empirical NTK, one ``[n, n]`` float64 block per parameter (sum them for the NTK).

        With ``D = 1[S X W_1^T + b_1 > 0]``, ``G = (S X)(S X)^T`` and ``v_j = (sum_k W_2[k, j])^2`` (summed) or
        ``sum_k W_2[k, j]^2`` (trace)::

            lin1.weight: S (G * D diag(v) D^T) S      lin1.bias: (S D) diag(v) (S D)^T
            lin2.weight: C (S H)(S H)^T                 lin2.bias: C 1 1^T

        Args:
            sx (Tensor): ``S X``, ``[n, in_features]``.  feature_gram (Tensor): ``G`` if precomputed.
        """
        if convention not in ("summed", "trace"):
            raise ValueError(f"the analytic NTK supports 'summed' and 'trace', got {convention!r}")
        operator = self.operator.to(torch.float64)
        sx64 = sx.to(torch.float64)
        sx64 = sx64.to_dense() if sx64.layout != torch.strided else sx64
        w1, b1 = self.lin1.weight.to(torch.float64), self.lin1.bias.to(torch.float64)
        w2 = self.lin2.weight.to(torch.float64)
        num_outputs = w2.shape[0]
        pre = sx64 @ w1.T + b1
        active = (pre > 0).to(torch.float64)  # relu'(z), 0 at z = 0 like torch
        weights = w2.sum(dim=0) ** 2 if convention == "summed" else (w2 ** 2).sum(dim=0)
        gram = feature_gram.to(torch.float64) if feature_gram is not None else sx64 @ sx64.T
        inner = gram * ((active * weights) @ active.T)
        propagated_active = _mm(operator, active)
        propagated_hidden = _mm(operator, torch.relu(pre))
        n = sx64.shape[0]
        device = sx64.device
        return {
            "lin1.weight": _mm(operator, _mm(operator, inner).T).T,
            "lin1.bias": (propagated_active * weights) @ propagated_active.T,
            "lin2.weight": num_outputs * propagated_hidden @ propagated_hidden.T,
            "lin2.bias": torch.full((n, n), float(num_outputs), dtype=torch.float64, device=device),
        }


class AlignmentTracker:
    """Records ``A(Theta_t, graph_kernel)`` and ``A(Theta_t, label_kernel)`` at checkpoints of training.

    Args:
        graph_kernel (Tensor): ``[n, n]``, e.g. ``graph_kernel(S, 2 * num_layers)``.
        label_kernel (Tensor): ``[n, n]``, e.g. ``Y Y^T`` with one-hot ``Y``.
    ``record(step, ntk, **scalars)`` takes the NTK as a tensor or as a dict of parameter blocks; for a dict it
    also records each block's alignments (``ntk_graph[name]``, ``ntk_label[name]``) and its share of the
    centred NTK's Frobenius norm (``share[name]``); constant blocks (zero once centred) are skipped.
    ``history`` is a list of dicts; ``as_arrays()`` stacks it.
    """

    def __init__(self, graph_kernel: torch.Tensor, label_kernel: torch.Tensor):
        if graph_kernel.shape != label_kernel.shape:
            raise ValueError(f"kernels differ in shape: {tuple(graph_kernel.shape)} vs {tuple(label_kernel.shape)}")
        # <H K1 H, H K2 H> = <H K1 H, K2>: centre the references once, each NTK block once
        self._graph = _center(graph_kernel.to(torch.float64))
        self._label = _center(label_kernel.to(torch.float64))
        self._graph_norm, self._label_norm = float(self._graph.norm()), float(self._label.norm())
        self.graph_label_alignment = float((self._graph * self._label).sum()) / (self._graph_norm * self._label_norm)
        self.history: list[dict[str, float]] = []

    def _alignments(self, kernel: torch.Tensor) -> tuple[float, float, float]:
        """``(A(K, graph), A(K, label), ||H K H||_F)`` without forming ``H K H`` (two passes over ``K``):
        ``<H K H, R> = <K, R>`` for a centred ``R``, and ``||H K H||^2 = ||K||^2 - |K 1|^2 / n - |K^T 1|^2 / n
        + (1^T K 1)^2 / n^2``."""
        k = kernel.to(torch.float64).contiguous().view(-1)
        n = kernel.shape[0]
        square = k.view(n, n)
        rows, cols = square.sum(dim=1), square.sum(dim=0)
        raw = float(k @ k)
        norm_sq = raw - float(rows @ rows) / n - float(cols @ cols) / n + float(rows.sum()) ** 2 / n**2
        if norm_sq <= 1e-12 * raw:  # a constant kernel (zero once centred), up to rounding
            return math.nan, math.nan, 0.0
        norm = math.sqrt(norm_sq)
        return (float(k @ self._graph.view(-1)) / (norm * self._graph_norm),
                float(k @ self._label.view(-1)) / (norm * self._label_norm), norm)

    def record(self, step: int, ntk, **scalars: float) -> dict[str, float]:
        blocks = ntk if isinstance(ntk, dict) else {}
        total = sum(blocks.values()) if blocks else ntk
        graph, label, total_norm = self._alignments(total)
        entry = {"step": float(step), "ntk_graph": graph, "ntk_label": label}
        for name, block in blocks.items():
            graph, label, norm = self._alignments(block)
            if norm > 0:
                entry[f"ntk_graph[{name}]"], entry[f"ntk_label[{name}]"] = graph, label
                entry[f"share[{name}]"] = norm / total_norm if total_norm > 0 else math.nan
        entry.update({key: float(value) for key, value in scalars.items()})
        self.history.append(entry)
        return entry

    def as_arrays(self) -> dict[str, np.ndarray]:
        keys = self.history[0].keys() if self.history else []
        return {key: np.array([entry.get(key, math.nan) for entry in self.history]) for key in keys}


def _center(kernel: torch.Tensor) -> torch.Tensor:
    """``H K H`` with ``H = I - 1 1^T / n``, without forming ``H``."""
    return kernel - kernel.mean(dim=0, keepdim=True) - kernel.mean(dim=1, keepdim=True) + kernel.mean()


def track_gcn_alignment(data, steps: int = 2000, every: int = 200, hidden: int = 16, lr: float = 0.01,
                        momentum: float = 0.9, weight_decay: float = 5e-4, convention: str = "summed",
                        random_state=None, device: str = "cpu",
                        callback: Callable[[dict[str, float]], None] | None = None) -> AlignmentTracker:
    """Train the paper's two-layer GCN and track its NTK alignment (the paper's alignment figure).

    Full-batch SGD with momentum and weight decay on the weights only (not the biases), cross-entropy on the
    training nodes, no dropout, as the official ``Visualization/main_realworld.py``. The NTK is the analytic
    one of ``TwoLayerGCN.ntk`` over all nodes, recorded at step 0 and every ``every`` steps, compared with
    ``S^4`` and ``Y Y^T`` (labels of all nodes). ``data``: a PyG ``Data`` with x, edge_index, y, train/test masks.
    ``random_state`` seeds the model's initialization as ``torch.manual_seed(seed)`` does just before the model is
    built, with ``seed`` the int ``random_state`` (the official script's ``--seed 123`` gives its exact
    initialization) or else one draw from it (``icml24._random.seed_int``; None: fresh entropy), inside
    ``fork_rng``: the caller's global generator is left untouched. ``device`` runs training and the NTK there.
    """
    n = int(data.num_nodes)
    operator64 = normalized_adjacency(data.edge_index, n).to(device)
    operator = normalized_adjacency(data.edge_index, n, dtype=torch.float32).to(device)
    x = normalize_features(torch.as_tensor(data.x, dtype=torch.float32)).to(device)  # as the official loader
    sx = _mm(operator, x)
    y = torch.as_tensor(data.y).long().to(device)
    num_classes = int(y.max()) + 1
    onehot = nn.functional.one_hot(y, num_classes).to(torch.float64)
    tracker = AlignmentTracker(graph_kernel(operator64, 4), onehot @ onehot.T)
    feature_gram = sx.to(torch.float64) @ sx.to(torch.float64).T

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed_int(random_state))
        model = TwoLayerGCN(operator, x.shape[1], hidden, num_classes).to(device)
    decayed = [p for name, p in model.named_parameters() if "bias" not in name]
    undecayed = [p for name, p in model.named_parameters() if "bias" in name]
    optimizer = torch.optim.SGD([{"params": decayed}, {"params": undecayed, "weight_decay": 0.0}],
                                lr=lr, momentum=momentum, weight_decay=weight_decay)
    train, test = data.train_mask.to(device), data.test_mask.to(device)
    # the loss reads only the training rows, which read only their 1-hop support: train on that subgraph (exact)
    train_rows = operator.to_sparse_coo().index_select(0, train.nonzero().flatten()).to_dense()
    support = train_rows.abs().sum(dim=0).nonzero().flatten()
    train_operator, sx_support = train_rows[:, support], sx[support]

    def checkpoint(step: int) -> None:
        with torch.no_grad():
            predicted = model(sx, propagated=True).argmax(dim=1)
        entry = tracker.record(step, model.ntk(sx, convention, feature_gram),
                               train_acc=float((predicted[train] == y[train]).float().mean()),
                               test_acc=float((predicted[test] == y[test]).float().mean()))
        if callback is not None:
            callback(entry)

    checkpoint(0)
    for step in range(1, steps + 1):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model.rows_forward(sx_support, train_operator), y[train])
        loss.backward()
        optimizer.step()
        if step % every == 0 or step == steps:
            checkpoint(step)
    return tracker
