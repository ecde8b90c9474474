"""RigL, dynamic sparse training (Evci et al., "Rigging the Lottery: Making All Tickets Winners", ICML 2020), for
some networks of a ``BatchedMaskedMLP`` batch: the networks are sparse from the first step (a random mask with the
Erdos-Renyi-Kernel layer distribution), and every ``delta`` steps until ``end_fraction`` of training each layer
drops its smallest-magnitude active weights and grows as many inactive ones with the largest dense gradient; the
dropped fraction follows a cosine decay. Every layer keeps its count, so the network ends at exactly ``nnz``.

The paper's setting (the official sparsest code): ERK, T_end = 0.75 of the iterations, delta T = 100, alpha = 0.3,
grown weights start at zero with zero momentum.
"""

from __future__ import annotations

import math

import torch

from icml24._random import RandomState, torch_generator

from .criteria import _mask_gradients, keep_top
from .masked_mlp import BatchedMaskedMLP


def erk_counts(shapes: list[tuple[int, int]], nnz: int) -> list[int]:
    """Weights per layer summing to exactly ``nnz``: density of layer l proportional to (n_in + n_out) /
    (n_in * n_out) (Erdos-Renyi-Kernel for dense layers, RigL Sec. 3), a layer that would pass density 1 kept dense
    and the rest re-solved; rounded by largest remainder, each layer keeping at least one weight."""
    sizes = [o * i for o, i in shapes]
    if not len(shapes) <= nnz <= sum(sizes):
        raise ValueError(f"nnz must be in [{len(shapes)}, {sum(sizes)}] (one weight per layer .. dense), got {nnz}")
    raw = [(o + i) / (o * i) for o, i in shapes]
    dense: set[int] = set()
    while True:
        free = [l for l in range(len(shapes)) if l not in dense]
        eps = (nnz - sum(sizes[l] for l in dense)) / sum(raw[l] * sizes[l] for l in free)  # ERK: density = eps * raw
        over = [l for l in free if eps * raw[l] > 1]
        if not over:
            break
        dense.update(l for l in over if raw[l] == max(raw[j] for j in over))
    want = [float(sizes[l]) if l in dense else eps * raw[l] * sizes[l] for l in range(len(shapes))]
    counts = [min(sizes[l], max(1, math.floor(w))) for l, w in enumerate(want)]
    order = sorted(range(len(shapes)), key=lambda l: (want[l] - math.floor(want[l]), -l), reverse=True)
    while sum(counts) != nnz:  # largest remainder first; take back from the fullest layer if the minimum of 1 overshot
        if sum(counts) < nnz:
            l = next(l for l in order if counts[l] < sizes[l])
            counts[l] += 1
            order.remove(l)
            order.append(l)
        else:
            l = max((l for l in range(len(shapes)) if counts[l] > 1), key=lambda j: counts[j] - want[j])
            counts[l] -= 1
    return counts


def drop_fraction(step: int, alpha: float, end: int) -> float:
    """Cosine update schedule (RigL Eq. 1): f(t) = alpha / 2 (1 + cos(pi t / T_end)).

    ``end`` (``T_end``, the last update step) must be > 0 and ``step`` >= 0."""
    if not (math.isfinite(end) and end > 0):
        raise ValueError(f"end must be a number of steps > 0 (T_end, the last update step), got {end}")
    if not (math.isfinite(step) and step >= 0):
        raise ValueError(f"step must be >= 0, got {step}")
    return alpha / 2 * (1 + math.cos(math.pi * step / end))


def rigl_update(weights: list[torch.Tensor], masks: list[torch.Tensor], grads: list[torch.Tensor],
                support: list[torch.Tensor], fraction: float) -> list[torch.Tensor]:
    """One drop-and-grow step per layer and network (all [K, out, in]): drop floor(fraction * active) active
    weights of smallest |w|, then grow as many positions of ``support`` outside the kept ones with the largest
    |grad| (a just-dropped weight may come back). Each layer's count is unchanged."""
    new = []
    for w, m, g, s in zip(weights, masks, grads, support):
        active = m.sum((1, 2))
        drop = torch.floor(active * fraction)
        kept = keep_top([w.abs()], active - drop, [m])[0]  # drop the smallest magnitudes
        grown = keep_top([g.abs()], drop, [s * (1 - kept)])[0]  # grow the largest dense gradients
        new.append(kept + grown)
    return new


class RigL:
    """``on_step`` callback for ``train_batched`` that trains networks ``networks`` (indices into the batch; all by
    default) with RigL at ``nnz`` weights each. At step 0 each network gets a random ERK mask inside its current
    mask (its support: padding stays out); then every ``delta`` steps before ``end_fraction`` of the run, a
    drop-and-grow update with the dense gradient of the step's minibatch. ``random_state`` draws the initial masks
    (``icml24._random.torch_generator``, at each run's step 0: a torch Generator is drawn from as is, advancing it;
    an int seeds a fresh one, so every run the callback serves starts from the same masks)."""

    def __init__(self, nnz: int, networks: list[int] | None = None, delta: int = 100, alpha: float = 0.3,
                 end_fraction: float = 0.75, random_state: RandomState = None):
        if delta < 1 or not 0 < alpha <= 1 or not 0 < end_fraction <= 1 or nnz < 1:
            raise ValueError(f"need nnz >= 1, delta >= 1, alpha in (0, 1], end_fraction in (0, 1]; got nnz={nnz}, "
                             f"delta={delta}, alpha={alpha}, end_fraction={end_fraction}")
        self.nnz, self.networks, self.delta = int(nnz), networks, int(delta)
        self.alpha, self.end_fraction, self.random_state = float(alpha), float(end_fraction), random_state
        self.updates_ = 0

    def _idx(self, model: BatchedMaskedMLP) -> torch.Tensor:
        return torch.arange(model.num_networks) if self.networks is None else torch.as_tensor(self.networks)

    def _start(self, model: BatchedMaskedMLP, idx: torch.Tensor) -> list[torch.Tensor]:
        """Random ERK masks [len(idx), out, in] inside each network's support."""
        generator = torch_generator(self.random_state)
        self.support_ = [m[idx].clone() for m in model.masks]
        counts = []
        for k in range(len(idx)):
            shapes = [(int((s[k].sum(1) > 0).sum()), int((s[k].sum(0) > 0).sum())) for s in self.support_]
            counts.append(erk_counts(shapes, self.nnz))
        counts = torch.tensor(counts)  # [networks, layers]
        return [keep_top([torch.rand(s.shape, generator=generator)], counts[:, l], [s])[0]
                for l, s in enumerate(self.support_)]

    def __call__(self, model: BatchedMaskedMLP, step: int, total: int, batch=None, optimizer=None, **_) -> None:
        idx = self._idx(model)
        end = int(self.end_fraction * total)
        if step == 0:
            chosen = self._start(model, idx)
        elif step % self.delta == 0 and step < end and batch is not None:
            grads = [g[idx] for g in _mask_gradients(model, *batch)]  # dL/d(w m) at every position, masked or not
            chosen = rigl_update([w[idx] for w in model.effective_weights()], [m[idx] for m in model.masks], grads,
                                 self.support_, drop_fraction(step, self.alpha, end))
            self.updates_ += 1
        else:
            return
        masks = [m.clone() for m in model.masks]
        for m, c in zip(masks, chosen):
            m[idx] = c
        model.set_masks(masks)  # grown weights were masked, hence zero: they start at 0
        if optimizer is not None:  # and with zero momentum, like the official scheduler's reset
            for p, m in zip(list(model.weights) + list(model.biases), model.masks + model.bias_masks):
                buf = optimizer.state.get(p, {}).get("momentum_buffer")
                if buf is not None:
                    buf[idx] *= m[idx]
