"""Pruning-at-initialisation criteria on K networks at once (Zhang & Papyan, ICML 2024, Sec. 4, the pruners
compared): global magnitude, SNIP, iterative SNIP / FORCE, GraSP and SynFlow. Each returns weight masks
(list of [K, out, in]) keeping exactly ``nnz`` weights per network over all layers (classifier included).

Network k's score only depends on network k: losses are summed over networks, so each gradient is the network's own.
"""

from __future__ import annotations

import math

import torch

from .masked_mlp import BatchedMaskedMLP, check_data


def keep_top(scores: list[torch.Tensor], nnz, allowed: list[torch.Tensor] | None = None) -> list[torch.Tensor]:
    """Global top-``nnz`` per network over all layers (ties broken by position; ``nnz`` an int or a [K] tensor);
    ``allowed`` masks restrict the choice."""
    k = scores[0].shape[0]
    flat = torch.cat([s.reshape(k, -1) for s in scores], 1).double()
    if allowed is not None:
        flat = torch.where(torch.cat([a.reshape(k, -1) for a in allowed], 1) > 0, flat, torch.tensor(-float("inf")))
    nnz = torch.as_tensor(nnz).long().expand(k)
    if bool((nnz < 0).any() or (nnz > flat.shape[1]).any()):
        raise ValueError(f"nnz must be in [0, {flat.shape[1]}] (the network's weights), got {nnz.tolist()}")
    order = flat.argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(order).scatter_(1, order, torch.arange(flat.shape[1]).expand_as(order))
    keep = (rank < nnz.unsqueeze(1)).float()
    out, start = [], 0
    for s in scores:
        size = s[0].numel()
        out.append(keep[:, start:start + size].reshape(s.shape).float())
        start += size
    return out


def global_magnitude(model: BatchedMaskedMLP, nnz: int) -> list[torch.Tensor]:
    """Keep the ``nnz`` largest |w| among each network's unmasked weights (global L1 unstructured pruning)."""
    return keep_top([w.abs() for w in model.effective_weights()], nnz, model.masks)


def _loss(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    logits = model(x) / temperature
    return torch.nn.functional.binary_cross_entropy_with_logits(
        logits, y.unsqueeze(0).expand_as(logits), reduction="none").mean((1, 2)).sum()


def snip_scores(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    """SNIP connection sensitivity |dL/dw * w| (Lee et al., 2019, Eq. 6) on the masked network."""
    check_data(x, y, model.widths[0])
    grads = torch.autograd.grad(_loss(model, x, y), list(model.weights))
    return [(g * w * m).abs().detach() for g, w, m in zip(grads, model.weights, model.masks)]


def snip(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int) -> list[torch.Tensor]:
    return keep_top(snip_scores(model, x, y), nnz, model.masks)


def _mask_gradients(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    """dL/d(w * m) at the current masks, for every weight, pruned or not (the gradient FORCE scores with)."""
    eff = [(w * m).detach().requires_grad_(True) for w, m in zip(model.weights, model.masks)]
    h = x.unsqueeze(0).expand(model.num_networks, *x.shape)
    for layer, (e, b, bm) in enumerate(zip(eff, model.biases, model.bias_masks)):
        h = torch.baddbmm((b * bm).detach().unsqueeze(1), h, e.transpose(1, 2))
        if layer < model.num_layers - 1:
            h = torch.relu(h)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(h, y.unsqueeze(0).expand_as(h), reduction="none")
    return list(torch.autograd.grad(loss.mean((1, 2)).sum(), eff))


def iterative_snip(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int, iterations: int = 10,
                   regrow: bool = False) -> list[torch.Tensor]:
    """Iterative SNIP (de Jorge et al., 2021): ``iterations`` rounds on a geometric schedule down to ``nnz``,
    scoring the current pruned network. ``regrow=True`` is FORCE: every weight is rescored with the gradient with
    respect to the mask, |w * dL/d(w m)|, so pruned weights may return; iterative SNIP prunes among survivors."""
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    check_data(x, y, model.widths[0])
    start = [m.clone() for m in model.masks]
    total = int(sum(m[0].sum() for m in start))
    masks = start
    for t in range(1, iterations + 1):
        keep = max(int(nnz), int(round(total * (nnz / total) ** (t / iterations))))  # geometric schedule
        model.set_masks(masks, zero=False)
        if regrow:
            scores = [(g * w).abs().detach() for g, w in zip(_mask_gradients(model, x, y), model.weights)]
            masks = keep_top(scores, keep, start)
        else:
            masks = keep_top(snip_scores(model, x, y), keep, masks)
    model.set_masks(start, zero=False)
    return masks


def force(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int, iterations: int = 10):
    """FORCE (de Jorge et al., 2021): iterative SNIP whose pruned weights may be revived."""
    return iterative_snip(model, x, y, nnz, iterations, regrow=True)


def grasp_scores(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, temperature: float = 200.0
                 ) -> list[torch.Tensor]:
    """GraSP (Wang et al., 2020, Eq. 8): S = -w * (H g) of the loss of logits / ``temperature`` (the official
    T = 200); the weights with the largest S are removed. (The official code sums g and Hg over two halves of its
    50 points: a factor 4 on every score, the same ranking.)"""
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be finite and > 0, got {temperature}")
    check_data(x, y, model.widths[0])
    params = list(model.weights)
    g = torch.autograd.grad(_loss(model, x, y, temperature), params)  # g at init, treated as a constant
    grads = torch.autograd.grad(_loss(model, x, y, temperature), params, create_graph=True)
    hg = torch.autograd.grad(sum((a * b.detach()).sum() for a, b in zip(grads, g)), params)  # Hessian-gradient
    return [(-w * h * m).detach() for w, h, m in zip(params, hg, model.masks)]


def grasp(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int, temperature: float = 200.0
          ) -> list[torch.Tensor]:
    return keep_top([-s for s in grasp_scores(model, x, y, temperature)], nnz, model.masks)  # keep the lowest S


def per_class(x: torch.Tensor, y: torch.Tensor, count: int = 25) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``count`` points of each class, class 0 first (the official GraSP's scoring data: 25 per class)."""
    picks = [torch.nonzero(y.reshape(-1) == c).reshape(-1)[:count] for c in (0.0, 1.0)]
    if min(len(p) for p in picks) < count:
        raise ValueError(f"need {count} points of each class to score GraSP, got {[len(p) for p in picks]}")
    idx = torch.cat(picks)
    return x[idx], y[idx]


def synflow(model: BatchedMaskedMLP, nnz: int, iterations: int = 100) -> list[torch.Tensor]:
    """SynFlow (Tanaka et al., 2020, Alg. 1): data-free, R = 1^T (prod |W_l|) 1, score |dR/dw * w|, pruned
    iteratively on the exponential schedule n_t = N (nnz / N)^(t / iterations)."""
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    start = [m.clone() for m in model.masks]
    total = int(sum(m[0].sum() for m in start))
    masks = start
    ones = torch.ones(model.num_networks, 1, model.widths[0], dtype=torch.float64)
    for t in range(1, iterations + 1):
        w = [(p.detach().abs().double() * m).requires_grad_(True) for p, m in zip(model.weights, masks)]
        h = ones
        for layer in w:
            h = torch.bmm(h, layer.transpose(1, 2))  # linearised network: |W| products, no biases, no ReLU
        grads = torch.autograd.grad(h.sum(), w)
        scores = [(g * p).abs().detach() for g, p in zip(grads, w)]
        keep = int(total * (nnz / total) ** (t / iterations))  # exponential schedule
        masks = keep_top(scores, max(int(nnz), keep), masks)
    return masks
