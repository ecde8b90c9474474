"""Restructuring the landscape with limited human feedback (Sec. "fading" failures).

1. A feedback function picks failure modes from an explored landscape: ``OracleFeedback`` (a simulated human
   who knows the exhaustive failure rates; deterministic) or ``PromptFeedback`` (a person at a terminal).
2. ``LastLayerFinetuner`` replaces the model's final layer and trains only it (features frozen), applying the
   chosen perturbation to each training image with probability 0.5; SGD, lr 1e-3, momentum 0.9 (the official
   ``finetune NUT.py``).
3. The caller re-explores and compares the landscapes (``landscape_distance``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from icml24._estimator import Estimator
from icml24._random import torch_generator
from icml24._validation import FittedAttributes, check_finite, check_positive, check_positive_int

from .concepts import ConceptGrid
from .inputs import check_pool
from .landscape import FailureLandscape


class OracleFeedback:
    """Of the landscape's top ``candidates`` actions, pick the ``modes`` with the highest true failure rate (ties:
    lower action index). The same landscape and rates always give the same choice."""

    KIND = "component"  # icml24._contract

    def __init__(self, true_rates: np.ndarray, candidates: int = 10, modes: int = 1):
        self.true_rates = np.asarray(check_finite("true_rates", np.asarray(true_rates, dtype=float)))
        if candidates < 1 or modes < 1 or modes > candidates:
            raise ValueError(f"need 1 <= modes <= candidates, got modes={modes}, candidates={candidates}")
        self.candidates, self.modes = int(candidates), int(modes)

    def __call__(self, landscape: FailureLandscape) -> list[int]:
        if len(self.true_rates) != landscape.grid.num_actions:
            raise ValueError(f"true_rates has {len(self.true_rates)} entries for {landscape.grid.num_actions} actions")
        shown = np.sort(landscape.top_actions(self.candidates))
        order = np.lexsort((shown, -self.true_rates[shown]))
        return [int(a) for a in shown[order][: self.modes]]


class PromptFeedback:
    """Show the landscape's top ``candidates`` actions and ask a person which to fade (``input_fn`` reads a line:
    comma-separated ranks, e.g. ``"1"`` or ``"1,3"``; an empty line takes the first)."""

    def __init__(self, candidates: int = 10, input_fn: Callable[[str], str] = input,
                 print_fn: Callable[[str], None] = print):
        self.candidates, self.input_fn, self.print_fn = int(candidates), input_fn, print_fn

    def __call__(self, landscape: FailureLandscape) -> list[int]:
        top = landscape.top_actions(self.candidates)
        for rank, a in enumerate(top, start=1):
            self.print_fn(f"{rank:2d}. action {a:3d} ({landscape.grid.describe(a)}): "
                          f"{landscape.failure_counts_[a]:.0f} failures / {landscape.counts_[a]:.0f} queries")
        answer = self.input_fn(f"failure modes to fade (ranks 1-{len(top)}, comma separated): ").strip() or "1"
        try:
            ranks = [int(part) for part in answer.split(",") if part.strip()]
        except ValueError as err:
            raise ValueError(f"answer with ranks such as '1' or '1,3', got {answer!r}") from err
        if not ranks or any(not 1 <= r <= len(top) for r in ranks):
            raise ValueError(f"ranks must lie in 1..{len(top)}, got {answer!r}")
        return [int(top[r - 1]) for r in ranks]


class LastLayerFinetuner(FittedAttributes, Estimator):
    """Fine-tune a fresh last layer (``model.head``, an ``nn.Linear``) on data where each image gets one of the
    chosen perturbations with probability ``probability``; ``model_`` is the restructured copy."""

    def __init__(self, probability: float = 0.5, lr: float = 1e-3, momentum: float = 0.9, epochs: int = 20,
                 batch_size: int = 32, reinitialize: bool = True, random_state=None):
        self.probability, self.lr, self.momentum = probability, lr, momentum
        self.epochs, self.batch_size, self.reinitialize = epochs, batch_size, reinitialize
        self.random_state = random_state

    def _check_params(self) -> None:
        if not 0 <= self.probability <= 1:
            raise ValueError(f"probability must lie in [0, 1], got {self.probability}")
        check_positive_int("epochs", self.epochs)
        check_positive_int("batch_size", self.batch_size)
        check_positive("lr", self.lr)
        check_finite("momentum", self.momentum)
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum}")

    def fit(self, model: nn.Module, images: np.ndarray, labels: np.ndarray, grid: ConceptGrid,
            actions: list[int]) -> LastLayerFinetuner:
        self._check_params()
        generator = torch_generator(self.random_state)
        head = getattr(model, "head", None)
        if not isinstance(head, nn.Linear) or not hasattr(model, "features"):
            raise TypeError("restructuring fine-tunes the last layer: the model must be a torch nn.Module with a "
                            "`features` module and a final nn.Linear `head` (DigitClassifier has both); got "
                            f"{type(model).__name__}")
        x, labels = check_pool(images, labels)
        if labels.max() >= head.out_features:
            raise ValueError(f"labels reach class {int(labels.max())} but the head has {head.out_features} outputs")
        actions = [int(a) for a in actions]
        if not actions or any(not 0 <= a < grid.num_actions for a in actions):
            raise ValueError(f"actions must be non-empty indices in [0, {grid.num_actions}), got {actions}")
        tuned = copy.deepcopy(model)
        for p in tuned.features.parameters():
            p.requires_grad_(False)
        if self.reinitialize:
            fresh = nn.Linear(head.in_features, head.out_features)
            with torch.no_grad():
                bound = 1.0 / np.sqrt(head.in_features)
                fresh.weight.uniform_(-bound, bound, generator=generator)
                fresh.bias.uniform_(-bound, bound, generator=generator)
            tuned.head = fresh
        y = torch.from_numpy(labels)
        chosen = torch.as_tensor(actions)
        optimizer = torch.optim.SGD(tuned.head.parameters(), lr=self.lr, momentum=self.momentum)
        tuned.train()
        losses = []
        for _ in range(self.epochs):
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), self.batch_size):
                idx = order[start:start + self.batch_size]
                apply = torch.rand(len(idx), generator=generator) < self.probability
                picks = chosen[torch.randint(len(chosen), (len(idx),), generator=generator)]
                batch = x[idx].clone()
                if apply.any():
                    batch[apply] = grid.perturb_actions(batch[apply], picks[apply].numpy())
                with torch.no_grad():
                    feats = tuned.features(batch)
                loss = nn.functional.cross_entropy(tuned.head(feats), y[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
        self.model_ = tuned.eval()
        self.actions_ = actions
        self.losses_ = np.asarray(losses)
        return self
