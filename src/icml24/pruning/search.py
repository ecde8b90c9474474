"""The two-phase combinatorial search for the sparsest network (Zhang & Papyan, ICML 2024, Sec. 3.2, Alg. 1).

Phase 1 masks whole neurons of a width-16 network and finds the smallest widths (d1, d2, d3) that reach the target
accuracy. Phase 2 fixes those widths and, for increasing total nonzero count, trains every eligible weight mask of
W1, W2 and W3 (the classifier stays dense) from random initialisation, stopping at the first count where some mask
reaches the target. Both phases train their candidates side by side in one ``BatchedMaskedMLP``.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import torch

from icml24._estimator import Estimator
from icml24._progress import Progress, check_progress
from icml24._random import RandomState, torch_generator
from icml24._validation import FittedAttributes, check_positive, check_positive_int

from .masked_mlp import BatchedMaskedMLP, check_data, lr_at, train_batched
from .masks import count_eligible, eligible_masks


def _recipe(epochs, batch_size, lr, schedule):
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "schedule": schedule}


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def neuron_masks(widths: tuple[int, int, int], max_width: int, num_in: int = 2) -> list[torch.Tensor]:
    """Weight masks [out, in] of a width-``max_width`` MLP that keep the first d1, d2, d3 neurons (phase 1)."""
    keep = [num_in, *widths, 1]
    full = [num_in, max_width, max_width, max_width, 1]
    masks = []
    for l in range(4):
        m = torch.zeros(full[l + 1], full[l])
        m[:keep[l + 1], :keep[l]] = 1
        masks.append(m)
    return masks


def minimal_widths(x: torch.Tensor, y: torch.Tensor, target: float, grid: list[int], max_width: int = 16,
                   epochs: int = 50, batch_size: int = 128, lr: float = 0.1, schedule: str = "cosine",
                   inits: int = 1, random_state: RandomState = None) -> dict:
    """Phase 1: train the neuron-masked width-``max_width`` networks for every (d1, d2, d3) in grid^3 at once.

    Returns ``{"widths": best (d1, d2, d3) or None, "accuracy": {widths: best accuracy over inits}}``; the best
    widths reach ``target`` with the fewest dense weights (ties: smaller d1 + d2 + d3). ``random_state``
    (``icml24._random.torch_generator``: an int seeds one torch Generator, one is used as is) draws the
    initialisations, then the minibatch order."""
    if not grid or any(not 1 <= int(g) <= max_width for g in grid):
        raise ValueError(f"grid must list widths in [1, max_width={max_width}], got {list(grid)}")
    if not math.isfinite(target) or inits < 1:
        raise ValueError(f"target must be a finite accuracy and inits >= 1, got {target}, {inits}")
    check_data(x, y, 2)
    generator = torch_generator(random_state)
    combos = list(product(grid, repeat=3))
    layered = [neuron_masks(c, max_width) for c in combos for _ in range(inits)]
    masks = [torch.stack([m[l] for m in layered]) for l in range(4)]
    model = BatchedMaskedMLP((2, max_width, max_width, max_width, 1), len(layered), masks, random_state=generator)
    train_batched(model, x, y, random_state=generator, **_recipe(epochs, batch_size, lr, schedule))
    acc = model.accuracy(x, y).view(len(combos), inits).max(1).values
    table = {c: float(a) for c, a in zip(combos, acc)}
    ok = [c for c in combos if table[c] >= target]
    size = lambda c: (2 * c[0] + c[0] * c[1] + c[1] * c[2] + c[2], sum(c))  # noqa: E731
    return {"widths": min(ok, key=size) if ok else None, "accuracy": table}


def candidate_masks(widths: tuple[int, int, int], hidden_nnz: int) -> list[torch.Tensor]:
    """Every eligible (W1, W2, W3) mask triple with W1 + W2 + W3 nonzeros = hidden_nnz: 3 tensors [M, out, in]."""
    d = (2, *widths)
    triples = []
    for n1 in range(max(d[0], d[1]), d[0] * d[1] + 1):
        for n2 in range(max(d[1], d[2]), d[1] * d[2] + 1):
            n3 = hidden_nnz - n1 - n2
            if max(d[2], d[3]) <= n3 <= d[2] * d[3]:
                triples.append((n1, n2, n3))
    if not triples:
        return [torch.zeros(0, d[l + 1], d[l]) for l in range(3)]
    layers = [[], [], []]
    for n1, n2, n3 in triples:
        m1, m2, m3 = (eligible_masks(d[l], d[l + 1], n) for l, n in enumerate((n1, n2, n3)))
        i1, i2, i3 = torch.meshgrid(torch.arange(len(m1)), torch.arange(len(m2)), torch.arange(len(m3)),
                                    indexing="ij")
        for layer, (m, i) in enumerate(((m1, i1), (m2, i2), (m3, i3))):
            layers[layer].append(m[i.flatten()])
    return [torch.cat(layer) for layer in layers]


def search_space_size(widths: tuple[int, int, int]) -> int:
    """Number of mask triples over all nonzero counts (25,992 for (3, 3, 3), as in the paper's configs)."""
    d = (2, *widths)
    total = 1
    for l in range(3):
        total *= sum(count_eligible(d[l], d[l + 1], n) for n in range(1, d[l] * d[l + 1] + 1))
    return total


class CombinatorialSearch(FittedAttributes, Estimator):
    """Phase 2 of the search: the smallest total nonzero count (classifier included) whose best eligible mask
    reaches ``target`` training accuracy at widths (d1, d2, d3).

    Each mask trains ``inits`` times from random initialisations of a width-``init_width`` network (the official
    search masks a width-16 network), ``chunk`` networks per batched run. ``max_nnz`` bounds the sweep.

    Learned: ``reached_`` (whether some mask reached the target), ``nnz_`` (first succeeding total nonzeros; if
    none succeeded, the nnz of the most accurate mask), ``accuracy_`` (its accuracy), ``masks_`` (its mask list
    [out, in], classifier included), ``best_by_nnz_`` {total nnz: best accuracy}, ``masks_evaluated_``
    (distinct masks trained), ``networks_trained_`` (masks x inits), ``init_`` (the winning network's dense
    initialisation as a K = 1 ``BatchedMaskedMLP``, the paper's "fixed init"), ``level_accuracy_`` {total nnz:
    accuracies of every mask tried}. ``max_masks_per_nnz`` trains a random subset of each level (a budget cut,
    not the paper's exhaustive search). ``levels_per_run`` consecutive nonzero levels train in one batched run
    (cheaper per mask on a CPU; the answer is the same, more masks are trained past the first success).

    The parameters are stored as given (scikit-learn's estimator contract: ``clone``, ``get_params``/``set_params``)
    and checked at the start of ``fit``, before any mask is enumerated or trained.
    """

    def __init__(self, widths: tuple[int, int, int] = (3, 3, 3), target: float = 0.95, init_width: int = 16,
                 epochs: int = 50, batch_size: int = 128, lr: float = 0.1, schedule: str = "cosine",
                 inits: int = 1, chunk: int = 4096, max_nnz: int | None = None, max_masks_per_nnz: int | None = None,
                 levels_per_run: int = 1):
        self.widths, self.target, self.init_width = widths, target, init_width
        self.epochs, self.batch_size, self.lr, self.schedule = epochs, batch_size, lr, schedule
        self.inits, self.chunk, self.max_nnz = inits, chunk, max_nnz
        self.max_masks_per_nnz, self.levels_per_run = max_masks_per_nnz, levels_per_run

    def _check_params(self) -> None:
        """Check the parameters, at the start of fit (``__init__`` stores them as given)."""
        for name in ("init_width", "epochs", "batch_size", "inits", "chunk", "levels_per_run"):
            check_positive_int(name, getattr(self, name))
        for name in ("max_nnz", "max_masks_per_nnz"):
            value = getattr(self, name)
            if value is not None and (not _is_int(value) or value < 1):
                raise ValueError(f"{name} must be an integer >= 1 or None (no bound), got {value!r}")
        widths = self.widths
        if (isinstance(widths, str) or not hasattr(widths, "__len__") or len(widths) != 3
                or not all(_is_int(w) and 1 <= w <= self.init_width for w in widths)):
            raise ValueError(f"widths must be 3 integer sizes in [1, init_width={self.init_width}], got {widths!r}")
        target = self.target
        if isinstance(target, bool) or not isinstance(target, (int, float, np.number)) or not 0 < target <= 1:
            raise ValueError(f"target is an accuracy in (0, 1], got {target!r}")  # also refuses NaN
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float, np.number)):
            raise ValueError(f"lr must be a number > 0, got {self.lr!r}")
        check_positive("lr", self.lr)
        lr_at(0, 1, 1.0, self.schedule)  # an unknown schedule fails here

    def _train(self, masks, x, y, generator) -> tuple[torch.Tensor, dict]:
        d = (2, *self.widths, 1)
        init = (2, self.init_width, self.init_width, self.init_width, 1)
        clf = torch.ones(len(masks[0]), 1, d[3])
        model = BatchedMaskedMLP(d, len(masks[0]), None, init_widths=init, random_state=generator)
        state = model.snapshot()  # the dense initialisation, before masking
        model.set_masks([*masks, clf])
        train_batched(model, x, y, random_state=generator,
                      **_recipe(self.epochs, self.batch_size, self.lr, self.schedule))
        return model.accuracy(x, y), state

    def _level(self, hidden, masks, level, states, offset) -> bool:
        """Record one nonzero level (accuracies [masks, inits]); True when it reaches the target."""
        count, per_mask = len(level), level.max(1).values
        best = int(per_mask.argmax())
        total = hidden + self.widths[2]  # the dense classifier's weights count too
        self.level_accuracy_[total] = per_mask.tolist()
        self.best_by_nnz_[total] = float(per_mask[best])
        self.masks_evaluated_ += count
        self.networks_trained_ += count * self.inits
        reached = bool(per_mask[best] >= self.target)
        if reached or self.accuracy_ is None or per_mask[best] > self.accuracy_:  # the best network so far
            self.nnz_, self.accuracy_ = total, float(per_mask[best])
            self.masks_ = [m[best] for m in masks] + [torch.ones(1, self.widths[2])]
            self.init_ = self._network(states, offset + best * self.inits + int(level[best].argmax()))
        self.reached_ = reached
        return reached

    def _network(self, states: list[dict], flat: int) -> BatchedMaskedMLP:
        """Network ``flat`` (index over masks x inits across chunks) as a dense K = 1 network at its init."""
        chunk, row = divmod(flat, self.chunk)
        net = BatchedMaskedMLP((2, *self.widths, 1), 1)
        net.load_snapshot({k: [v[row:row + 1] for v in states[chunk][k]] for k in ("weights", "biases")})
        return net

    def fit(self, x: torch.Tensor, y: torch.Tensor, random_state: RandomState = None,
            progress: Progress | None = None) -> CombinatorialSearch:
        """Sweep the nonzero levels upward on (x, y) until a mask reaches ``target``. ``random_state``
        (``icml24._random.torch_generator``: an int seeds one torch Generator, one is used as is) draws the masks
        kept under ``max_masks_per_nnz``, the initialisations and the minibatch order; ``progress(done, total)``
        (``icml24._progress``) is called after each nonzero level, ``total`` the levels planned (a success stops
        sooner); the levels' masks and accuracies are in ``level_accuracy_``."""
        self._check_params()
        check_progress(progress)
        check_data(x, y, 2)
        generator = torch_generator(random_state)
        d = (2, *self.widths)
        lo = sum(max(d[l], d[l + 1]) for l in range(3))
        hi = sum(d[l] * d[l + 1] for l in range(3))
        if self.max_nnz is not None:
            hi = min(hi, int(self.max_nnz) - d[3])
        self.best_by_nnz_, self.masks_evaluated_, self.networks_trained_ = {}, 0, 0
        self.nnz_, self.accuracy_, self.masks_, self.init_, self.level_accuracy_ = None, None, None, None, {}
        self.reached_ = False
        levels = []
        for hidden in range(lo, hi + 1):
            masks = candidate_masks(self.widths, hidden)
            count = len(masks[0])
            if count == 0:
                continue
            if self.max_masks_per_nnz is not None and count > self.max_masks_per_nnz:
                pick = torch.randperm(count, generator=generator)[:int(self.max_masks_per_nnz)]
                masks = [m[pick] for m in masks]
            levels.append((hidden, masks))
        done = 0
        for g in range(0, len(levels), self.levels_per_run):
            group = levels[g:g + self.levels_per_run]  # consecutive levels trained in one batched run
            rep = [torch.cat([m[layer].repeat_interleave(self.inits, 0) for _, m in group]) for layer in range(3)]
            accs, states = [], []
            for s in range(0, len(rep[0]), self.chunk):
                acc, state = self._train([m[s:s + self.chunk] for m in rep], x, y, generator)
                accs.append(acc)
                states.append(state)
            acc, offset = torch.cat(accs), 0
            for hidden, masks in group:  # read the levels in increasing nnz: the first success stops the search
                count = len(masks[0])
                level = acc[offset:offset + count * self.inits].view(count, self.inits)
                reached = self._level(hidden, masks, level, states, offset)
                done += 1
                if progress is not None:
                    progress(done, len(levels))
                if reached:
                    return self
                offset += count * self.inits
        return self
