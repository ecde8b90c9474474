"""ProsPr, prospect pruning (Alizadeh et al., "Prospect Pruning: Finding Trainable Weights at Initialization using
Meta-Gradients", ICLR 2022), on K networks at once: a mask of ones m multiplies every weight, the networks take a
few differentiable SGD steps from their initialisation, and a weight's score is |dL(w_M) / dm| through those steps
(the meta-gradient), so a weight is judged by how it helps the loss *after* training starts, not at init as SNIP.

As in the paper's setting (and the official sparsest code): 3 inner steps, the training recipe's learning rate and
momentum, no weight decay, a new minibatch per inner step and one more for the meta-loss, all layers scored together.
The official (and the original ProsPr) inner SGD starts its momentum buffer from a *detached* copy of the first
gradient, so the first step's gradient is not differentiated through; ``detach_first_momentum=True`` (default)
does the same (scores equal the official ``ProsPrPrune`` to 1e-7), ``False`` gives the exact meta-gradient.
"""

from __future__ import annotations

import math

import torch

from icml24._validation import check_finite

from .criteria import keep_top
from .masked_mlp import BatchedMaskedMLP


def _forward(weights: list[torch.Tensor], biases: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = x.unsqueeze(0).expand(weights[0].shape[0], *x.shape)
    for layer, (w, b) in enumerate(zip(weights, biases)):
        h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
        if layer < len(weights) - 1:
            h = torch.relu(h)
    return h


def _loss(weights, biases, x, y) -> torch.Tensor:
    """Sum over networks of each network's mean BCE: network k's gradient is its own."""
    logits = _forward(weights, biases, x)
    return torch.nn.functional.binary_cross_entropy_with_logits(
        logits, y.unsqueeze(0).expand_as(logits), reduction="none").mean((1, 2)).sum()


def prospr_scores(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, steps: int = 3, lr: float = 0.1,
                  momentum: float = 0.9, batch_size: int = 128, detach_first_momentum: bool = True
                  ) -> list[torch.Tensor]:
    """|dL(after ``steps`` SGD steps) / dm| per weight, list of [K, out, in] (0 where the model is masked).

    Batch i of (x, y) (in order, cycling) drives inner step i; batch ``steps`` gives the meta-loss. ``steps=0``
    is SNIP: dL/dm at m = 1 is w * dL/dw."""
    check_finite("x", x)
    check_finite("y", y)
    if steps < 0 or batch_size < 1:
        raise ValueError(f"steps must be >= 0 and batch_size >= 1, got steps={steps}, batch_size={batch_size}")
    if not (math.isfinite(lr) and lr > 0 and 0 <= momentum < 1):
        raise ValueError(f"lr must be finite and > 0 and momentum in [0, 1), got lr={lr}, momentum={momentum}")
    batches = max(1, len(x) // batch_size)

    def batch(i):
        j = i % batches
        return x[j * batch_size:(j + 1) * batch_size], y[j * batch_size:(j + 1) * batch_size]

    ones = [torch.ones_like(m).requires_grad_(True) for m in model.masks]
    fast_w = [w.detach() * m * o for w, m, o in zip(model.weights, model.masks, ones)]  # w * m: the masked weights
    fast_b = [(b * bm).detach().requires_grad_(True) for b, bm in zip(model.biases, model.bias_masks)]
    params, buffers = fast_w + fast_b, [None] * (len(fast_w) + len(fast_b))
    for i in range(steps):
        grads = torch.autograd.grad(_loss(params[:len(fast_w)], params[len(fast_w):], *batch(i)), params,
                                    create_graph=True)  # differentiable inner step
        buffers = [(g.detach() if detach_first_momentum else g) if buf is None else momentum * buf + g
                   for g, buf in zip(grads, buffers)]  # SGD momentum, v_0 = g_0
        params = [p - lr * buf for p, buf in zip(params, buffers)]  # theta_{i+1} = theta_i - lr * v_i
    meta = torch.autograd.grad(_loss(params[:len(fast_w)], params[len(fast_w):], *batch(steps)), ones)
    return [(g.abs() * m).detach() for g, m in zip(meta, model.masks)]  # score = |dL(theta_steps) / dm|


def prospr(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz, steps: int = 3, lr: float = 0.1,
           momentum: float = 0.9, batch_size: int = 128, detach_first_momentum: bool = True) -> list[torch.Tensor]:
    """ProsPr masks: the ``nnz`` highest meta-gradient scores per network over all layers (classifier included)."""
    scores = prospr_scores(model, x, y, steps, lr, momentum, batch_size, detach_first_momentum)
    return keep_top(scores, nnz, model.masks)
