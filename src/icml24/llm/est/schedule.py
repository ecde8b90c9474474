"""The evolving schedule and the per-step subnetwork sampler (EST, Li et al., ICML 2024, Sec. 3 and Fig. 1).

Fig. 1's three stages: (1) some layers, and inside them some heads and MLP units; (2) all layers, still sampled
heads and units; (3) the complete model. The paper's rates and boundaries are not public; the default table is
ours (``docs``: shared/papers/est.md) and every number is configurable.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from icml24._random import torch_generator
from icml24._validation import check_finite

from .model import GPTConfig, Subnetwork


@dataclass(frozen=True)
class Stage:
    """One stage: it lasts until ``end`` (a fraction of the run's steps) and keeps the fractions p_L, p_H, p_M."""

    end: float
    p_layers: float = 1.0
    p_heads: float = 1.0
    p_mlp: float = 1.0

    def __post_init__(self):
        for name in ("end", "p_layers", "p_heads", "p_mlp"):
            value = getattr(self, name)
            check_finite(f"Stage.{name}", value)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"Stage.{name} must lie in (0, 1], got {value}")


class EvolvingSubnetworkSchedule:
    """Piecewise-constant sampling rates over training: ``stages`` ordered by ``end``, the last ending at 1.0.

    ``EvolvingSubnetworkSchedule.default()`` is the three-stage table 20% / 30% / 50% with p = 0.5 / (1, 0.5, 0.5)
    / 1; ``EvolvingSubnetworkSchedule.full()`` trains the complete model at every step (the baseline).
    """

    KIND = "component"  # icml24._contract

    def __init__(self, stages: list[Stage] | list[tuple[float, float, float, float]]):
        stages = [s if isinstance(s, Stage) else Stage(*s) for s in stages]
        if not stages:
            raise ValueError("give at least one Stage(end=1.0, ...)")
        ends = [s.end for s in stages]
        if ends != sorted(ends) or len(set(ends)) != len(ends) or ends[-1] != 1.0:
            raise ValueError(f"stage ends must increase strictly and the last must be 1.0, got {ends}")
        self.stages = tuple(stages)

    @classmethod
    def default(cls) -> EvolvingSubnetworkSchedule:
        return cls([Stage(0.2, 0.5, 0.5, 0.5), Stage(0.5, 1.0, 0.5, 0.5), Stage(1.0, 1.0, 1.0, 1.0)])

    @classmethod
    def full(cls) -> EvolvingSubnetworkSchedule:
        return cls([Stage(1.0)])

    def stage_index(self, step: int, total_steps: int) -> int:
        """The stage that step ``step`` (0-based) of ``total_steps`` falls in: the first with step < end * total."""
        if total_steps < 1 or not 0 <= step < total_steps:
            raise ValueError(f"need 0 <= step < total_steps, got step={step}, total_steps={total_steps}")
        for index, stage in enumerate(self.stages):
            if step < round(stage.end * total_steps):
                return index
        return len(self.stages) - 1

    def stage(self, step: int, total_steps: int) -> Stage:
        return self.stages[self.stage_index(step, total_steps)]

    def is_full(self) -> bool:
        return all(s.p_layers == s.p_heads == s.p_mlp == 1.0 for s in self.stages)

    def __repr__(self) -> str:
        return f"EvolvingSubnetworkSchedule({list(self.stages)!r})"


def _count(p: float, total: int) -> int:
    return max(1, min(total, round(p * total)))


class SubnetworkSampler:
    """Draws a fresh subnetwork at every step (Sec. 3): round(p_L n_layer) layers, and in each active layer
    round(p_H n_head) heads and round(p_M n_mlp) MLP units, uniformly without replacement from ``random_state``
    (None, an int, a numpy or torch Generator).

    The 1/p rescaling uses the realised fraction (k / N), so it is exact when p N is not an integer.
    """

    KIND = "component"  # icml24._contract

    def __init__(self, config: GPTConfig, schedule: EvolvingSubnetworkSchedule,
                 random_state=None):
        self.config = config
        self.schedule = schedule
        self.generator = torch_generator(random_state)

    def shape(self, stage: Stage) -> tuple[int, int, int]:
        """(active layers, heads per active layer, MLP units per active layer) of a stage."""
        cfg = self.config
        return (_count(stage.p_layers, cfg.n_layer), _count(stage.p_heads, cfg.n_head),
                _count(stage.p_mlp, cfg.n_mlp))

    def _subset(self, k: int, n: int) -> torch.Tensor:
        return torch.randperm(n, generator=self.generator)[:k].sort().values

    def sample(self, step: int, total_steps: int) -> Subnetwork:
        cfg = self.config
        n_layers, n_heads, n_mlp = self.shape(self.schedule.stage(step, total_steps))
        layers = tuple(range(cfg.n_layer)) if n_layers == cfg.n_layer else \
            tuple(self._subset(n_layers, cfg.n_layer).tolist())  # I_L
        heads: list[torch.Tensor | None] = [None] * cfg.n_layer
        mlp: list[torch.Tensor | None] = [None] * cfg.n_layer
        for layer in layers:
            if n_heads < cfg.n_head:
                heads[layer] = self._subset(n_heads, cfg.n_head)  # I_H
            if n_mlp < cfg.n_mlp:
                mlp[layer] = self._subset(n_mlp, cfg.n_mlp)  # I_M
        return Subnetwork(layers, tuple(heads), tuple(mlp))

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
