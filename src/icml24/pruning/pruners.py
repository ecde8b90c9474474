"""Pruners on one interface (Zhang & Papyan, ICML 2024, Sec. 4): every method starts from the same initialisation
of a 2 -> w -> w -> w -> 1 MLP per width and ends with exactly ``nnz`` weights (classifier included), trained on
the same recipe. All methods and all widths of one comparison train side by side in one ``BatchedMaskedMLP``:
narrower networks are zero-padded to the widest one (a padded unit has no weights and no bias, so it computes 0
and changes nothing).

Methods: ``magnitude`` (one-shot global magnitude after dense training, then fine-tuning), ``gmp`` (gradual
magnitude, cubic schedule), ``rigl`` (dynamic sparse training), ``imp`` (iterative magnitude with rewinding to
init, the lottery ticket), ``snip``, ``iter_snip``, ``force``, ``grasp``, ``synflow``, ``prospr`` (pruning at
initialisation, then training).
"""

from __future__ import annotations

import torch

from icml24._validation import FittedAttributes, check_finite

from .criteria import force, global_magnitude, grasp, iterative_snip, keep_top, snip, synflow
from .masked_mlp import BatchedMaskedMLP, train_batched
from .prospect import prospr
from .rigl import RigL
from .schedules import GradualMagnitude, geometric_nnz

AT_INIT = ("snip", "iter_snip", "force", "grasp", "synflow", "prospr")
DURING_TRAINING = ("gmp", "rigl")
AFTER_TRAINING = ("magnitude", "imp")
METHODS = AT_INIT + DURING_TRAINING + AFTER_TRAINING


def at_init_masks(method: str, model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int,
                  iterations: int = 100, lr: float = 0.1, batch_size: int = 128) -> list[torch.Tensor]:
    """Masks from a pruning-at-initialisation criterion (``x``, ``y``: the scoring data; ``lr``, ``batch_size``:
    ProsPr's inner steps, the training recipe's)."""
    if method == "snip":
        return snip(model, x, y, nnz)
    if method == "iter_snip":
        return iterative_snip(model, x, y, nnz, iterations=min(iterations, 10))
    if method == "force":
        return force(model, x, y, nnz, iterations=min(iterations, 10))
    if method == "grasp":
        return grasp(model, x, y, nnz)
    if method == "synflow":
        return synflow(model, nnz, iterations=iterations)
    if method == "prospr":
        return prospr(model, x, y, nnz, steps=3, lr=lr, batch_size=batch_size)
    raise ValueError(f"unknown pruning-at-init method {method!r}; choose from {AT_INIT}")


def _pad(rows: list[tuple[dict, list[torch.Tensor]]], width: int) -> BatchedMaskedMLP:
    """One batch of width ``width`` from (snapshot of a K = 1 network, its masks) pairs, zero-padded."""
    batch = BatchedMaskedMLP((2, width, width, width, 1), len(rows))
    masks = [torch.zeros(len(rows), *m.shape[1:]) for m in batch.masks]
    with torch.no_grad():
        for p in list(batch.weights) + list(batch.biases):
            p.zero_()
        for k, (state, row_masks) in enumerate(rows):
            for p, v in zip(list(batch.weights) + list(batch.biases), state["weights"] + state["biases"]):
                p[(k, *(slice(0, n) for n in v.shape[1:]))] = v[0]
            for m, v in zip(masks, row_masks):
                m[k, :v.shape[-2], :v.shape[-1]] = v.reshape(v.shape[-2:])
    batch.set_masks(masks)
    return batch


def _unpad(batch: BatchedMaskedMLP, k: int, width: int) -> tuple[dict, list[torch.Tensor]]:
    """Row k of a padded batch as (snapshot of a width-``width`` K = 1 network, its masks [1, out, in])."""
    d = (2, width, width, width, 1)
    shapes = [(d[l + 1], d[l]) for l in range(4)]
    state = {"weights": [w[k:k + 1, :o, :i].detach().clone() for w, (o, i) in zip(batch.weights, shapes)],
             "biases": [b[k:k + 1, :o].detach().clone() for b, (o, _) in zip(batch.biases, shapes)]}
    return state, [m[k:k + 1, :o, :i].clone() for m, (o, i) in zip(batch.masks, shapes)]


def _chain(hooks: list):
    """One ``on_step`` callback running ``hooks`` in order (None when there are none)."""
    if not hooks:
        return None

    def on_step(model, step, total, **kwargs):
        for hook in hooks:
            hook(model, step, total, **kwargs)
    return on_step


class PrunerComparison(FittedAttributes):
    """Prune one initialisation per width in ``widths`` to ``nnz`` weights with each of ``methods``, then train.

    ``imp_rounds`` training rounds for IMP (the paper: 5 rounds of the full recipe); ``gmp_events`` pruning events
    for GMP (199); ``rigl_delta`` steps between RigL updates (100); ``score_points`` points score the at-init
    criteria. Recipe: ``epochs``, ``batch_size``, ``lr``,
    ``schedule``, momentum 0.9, weight decay 5e-4. The dense network of each width trains alongside (it is IMP's
    first round and magnitude pruning's starting point). ``tries`` independent initialisations per width (all in
    the same batch) give every method as many tries as a search over that many masks; each (method, width) reports
    its best try.

    Learned, keyed by (method, width), ``"dense"`` included: ``accuracy_`` (training accuracy, the paper's
    convention; the best try's), ``masks_`` (list of [out, in]), ``nnz_``, ``try_accuracy_`` (every try's accuracy),
    ``best_try_``; ``inits_`` {width: the first try's K = 1 initial network}, ``try_inits_`` {width: every try's}.
    """

    def __init__(self, widths: tuple[int, ...], nnz: int, methods: tuple[str, ...] = METHODS, epochs: int = 50,
                 batch_size: int = 128, lr: float = 0.1, schedule: str = "cosine", imp_rounds: int = 5,
                 gmp_events: int = 199, synflow_iterations: int = 100, score_points: int = 1024,
                 rigl_delta: int = 100, tries: int = 1):
        unknown = [m for m in methods if m not in METHODS]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; choose from {METHODS}")
        self.widths = tuple(int(w) for w in widths)
        for w in self.widths:
            dense = 2 * w + 2 * w * w + w
            if not 1 <= nnz <= dense:
                raise ValueError(f"nnz must be in [1, {dense}] for width {w}, got {nnz}")
        if imp_rounds < 2:
            raise ValueError(f"imp_rounds must be >= 2 (prune between rounds), got {imp_rounds}")
        self.nnz, self.methods = int(nnz), tuple(methods)
        self.recipe = {"epochs": int(epochs), "batch_size": int(batch_size), "lr": float(lr), "schedule": schedule}
        self.imp_rounds, self.gmp_events = int(imp_rounds), int(gmp_events)
        self.synflow_iterations, self.score_points = int(synflow_iterations), int(score_points)
        self.rigl_delta = int(rigl_delta)
        if int(tries) < 1:
            raise ValueError(f"tries must be >= 1, got {tries}")
        self.tries = int(tries)

    def fit(self, x: torch.Tensor, y: torch.Tensor, generator: torch.Generator | None = None,
            inits: dict[int, BatchedMaskedMLP] | None = None) -> PrunerComparison:
        """Train every (method, width) from ``inits[width]`` (K = 1 networks, or a list of ``tries`` of them;
        default: fresh ones from ``generator``) on (x, y), measuring accuracy on (x, y)."""
        check_finite("x", x)
        check_finite("y", y)
        given = dict(inits or {})
        self.try_inits_ = {}
        for w in self.widths:
            nets = given.get(w)
            nets = list(nets) if isinstance(nets, (list, tuple)) else [nets] * self.tries if nets is not None else [
                BatchedMaskedMLP((2, w, w, w, 1), 1, generator=generator) for _ in range(self.tries)]
            if len(nets) != self.tries or any(n.num_networks != 1 or n.widths != (2, w, w, w, 1) for n in nets):
                raise ValueError(f"inits[{w}] must be one network (or {self.tries}) of widths (2, {w}, {w}, {w}, 1)")
            self.try_inits_[w] = nets
        self.inits_ = {w: nets[0] for w, nets in self.try_inits_.items()}
        idx = torch.randperm(len(x), generator=generator)[:self.score_points]
        xs, ys = x[idx], y[idx]
        first = [m for m in self.methods if m in AT_INIT + DURING_TRAINING] + ["dense"]
        rows, keys = [], []
        for w, k in ((w, k) for w in self.widths for k in range(self.tries)):
            net = self.try_inits_[w][k]
            for method in first:
                masks = net.masks
                if method in AT_INIT:
                    probe = BatchedMaskedMLP(net.widths, 1)
                    probe.load_snapshot(net.snapshot())
                    masks = at_init_masks(method, probe, xs, ys, self.nnz, self.synflow_iterations,
                                          self.recipe["lr"], self.recipe["batch_size"])
                rows.append((net.snapshot(), masks))
                keys.append((method, w, k))
        batch = _pad(rows, max(self.widths))
        hooks = []
        for method, hook in (("gmp", lambda r: GradualMagnitude(self.nnz, self.gmp_events, r)),
                             ("rigl", lambda r: RigL(self.nnz, r, delta=self.rigl_delta, generator=generator))):
            rows_of = [i for i, (m, _, _) in enumerate(keys) if m == method]
            if rows_of:
                hooks.append(hook(rows_of))
        train_batched(batch, x, y, generator=generator, on_step=_chain(hooks), **self.recipe)
        self.accuracy_, self.masks_, self.nnz_, self.try_accuracy_, self.best_try_ = {}, {}, {}, {}, {}
        self._record(batch, keys, x, y)
        later = [m for m in ("magnitude", "imp") if m in self.methods]
        if later:
            self._after_dense(batch, keys, later, x, y, generator)
        return self

    def _record(self, batch: BatchedMaskedMLP, keys: list[tuple[str, int, int]], x, y) -> None:
        acc = batch.accuracy(x, y)
        for method, w, _ in keys:  # a later record (IMP's next round) replaces an earlier one
            self.accuracy_.pop((method, w), None)
        for i, (method, w, k) in enumerate(keys):
            tried = self.try_accuracy_.setdefault((method, w), [None] * self.tries)
            tried[k] = float(acc[i])
            if (method, w) in self.accuracy_ and float(acc[i]) <= self.accuracy_[(method, w)]:
                continue  # each (method, width) keeps its best try (the first of equals)
            state, masks = _unpad(batch, i, w)
            live = [(m * (v != 0)).reshape(m.shape[-2:]) for m, v in zip(masks, state["weights"])]
            self.accuracy_[(method, w)], self.best_try_[(method, w)] = float(acc[i]), k
            self.masks_[(method, w)] = live
            self.nnz_[(method, w)] = int(sum(m.sum() for m in live))

    def _after_dense(self, batch, keys, later, x, y, generator) -> None:
        """One-shot magnitude (prune the trained dense network, fine-tune) and IMP rounds 2..R (prune the last
        round's result to the geometric schedule, rewind to init, retrain)."""
        rows, new_keys, totals = [], [], {}
        for w, k in ((w, k) for w in self.widths for k in range(self.tries)):
            state, masks = _unpad(batch, keys.index(("dense", w, k)), w)
            trained = [v * m for v, m in zip(state["weights"], masks)]
            totals[w] = int(sum(m.sum() for m in masks))
            for method in later:
                keep = self.nnz if method == "magnitude" else geometric_nnz(1, self.imp_rounds, totals[w], self.nnz)
                pruned = keep_top([t.abs() for t in trained], max(self.nnz, keep), masks)
                start = state if method == "magnitude" else self.try_inits_[w][k].snapshot()  # IMP rewinds to init
                rows.append((start, pruned))
                new_keys.append((method, w, k))
        nxt = _pad(rows, max(self.widths))
        train_batched(nxt, x, y, generator=generator, **self.recipe)
        self._record(nxt, new_keys, x, y)
        if "imp" not in later:
            return
        for r in range(2, self.imp_rounds):
            imp_rows, imp_keys = [], []
            for w, k in ((w, k) for w in self.widths for k in range(self.tries)):
                i = new_keys.index(("imp", w, k))
                probe = BatchedMaskedMLP(nxt.widths, 1)
                probe.load_snapshot({k: [v[i:i + 1].detach() for v in getattr(nxt, k)] for k in ("weights", "biases")})
                probe.set_masks([m[i:i + 1] for m in nxt.masks])
                keep = max(self.nnz, geometric_nnz(r, self.imp_rounds, totals[w], self.nnz))
                pruned = [m[:, :o, :c] for m, (o, c) in zip(global_magnitude(probe, keep),
                                                             [(w, 2), (w, w), (w, w), (1, w)])]
                imp_rows.append((self.try_inits_[w][k].snapshot(), pruned))  # rewind, new mask
                imp_keys.append(("imp", w, k))
            nxt = _pad(imp_rows, max(self.widths))
            new_keys = imp_keys
            train_batched(nxt, x, y, generator=generator, **self.recipe)
            self._record(nxt, imp_keys, x, y)
