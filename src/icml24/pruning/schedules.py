"""Pruning during training (Zhang & Papyan, ICML 2024, Sec. 4): gradual magnitude pruning on the cubic schedule
(Zhu & Gupta, 2018) and the geometric per-round schedule of iterative magnitude pruning with rewinding (IMP / LTH,
Frankle & Carbin, 2019)."""

from __future__ import annotations

import torch

from .criteria import keep_top
from .masked_mlp import BatchedMaskedMLP


def cubic_nnz(step: int, total_events: int, interval: int, start: int, final: int) -> int:
    """Weights kept after pruning event at ``step``: final + (start - final)(1 - step / (events * interval))^3."""
    if total_events < 1 or interval < 1:
        raise ValueError(f"total_events and interval must be >= 1, got {total_events}, {interval}")
    frac = min(1.0, step / (total_events * interval))
    return int(final + (start - final) * (1 - frac) ** 3)  # cubic schedule


def geometric_nnz(round_index: int, rounds: int, start: int, final: int) -> int:
    """IMP's kept weights after round r of ``rounds`` (it prunes after rounds 1 .. R-1):
    start (final / start)^(r / (R - 1))."""
    if rounds < 2 or start < 1 or final < 1:
        raise ValueError(f"rounds must be >= 2 and start, final >= 1, got {rounds}, {start}, {final}")
    return int(start * (final / start) ** (round_index / (rounds - 1)))


class GradualMagnitude:
    """``on_step`` callback for ``train_batched``: every ``interval`` steps the networks ``networks`` (indices into
    the batch) are magnitude-pruned globally to the cubic schedule's count, reaching ``nnz`` after ``events``
    events (the official loop: 199 events, interval = total steps // 200)."""

    def __init__(self, nnz: int, events: int = 199, networks: list[int] | None = None):
        if events < 1 or nnz < 1:
            raise ValueError(f"events and nnz must be >= 1, got events={events}, nnz={nnz}")
        self.nnz, self.events, self.networks = int(nnz), int(events), networks

    def __call__(self, model: BatchedMaskedMLP, step: int, total: int, **_) -> None:
        interval = max(1, total // (self.events + 1))
        events = min(self.events, (total - 1) // interval)  # short runs: fewer events, still ending at nnz
        if step == 0 or step % interval or step > events * interval:
            return
        idx = torch.arange(model.num_networks) if self.networks is None else torch.as_tensor(self.networks)
        if not hasattr(self, "start_nnz_"):  # each network's weights before the first event
            self.start_nnz_ = sum(m[idx].sum((1, 2)) for m in model.masks)
        frac = min(1.0, step / (events * interval))
        keep = (self.nnz + (self.start_nnz_ - self.nnz) * (1 - frac) ** 3).long().clamp(min=self.nnz)  # cubic
        eff = model.effective_weights()
        chosen = keep_top([w[idx].abs() for w in eff], keep, [m[idx] for m in model.masks])
        masks = [m.clone() for m in model.masks]
        for m, c in zip(masks, chosen):
            m[idx] = c
        model.set_masks(masks)


def rewind_and_mask(model: BatchedMaskedMLP, init_state: dict, masks: list[torch.Tensor]) -> None:
    """IMP's rewind: weights back to initialisation, then the new mask."""
    model.load_snapshot(init_state)
    model.set_masks(masks)
