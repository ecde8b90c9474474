"""Pruners on one interface (Zhang & Papyan, ICML 2024, Sec. 4): every method starts from the same initialisation
of a 2 -> w -> w -> w -> 1 MLP per width and ends with exactly ``nnz`` weights (classifier included), trained on
each setting of a grid (the official one: lr {0.05, 0.1, 0.2} x cosine / step / constant schedule). All methods,
tries and settings of one width train side by side in one ``BatchedMaskedMLP``; each (method, try) keeps the
setting with the best accuracy on validation points, never on the points its accuracy is reported on.

Methods: ``magnitude`` (one-shot global magnitude after dense training, then fine-tuning), ``gmp`` (gradual
magnitude, cubic schedule), ``rigl`` (dynamic sparse training), ``imp`` (iterative magnitude with rewinding to
init, the lottery ticket), ``snip``, ``iter_snip``, ``force``, ``grasp``, ``synflow``, ``prospr`` (pruning at
initialisation, then training).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml24._estimator import Estimator
from icml24._random import RandomState, torch_generator
from icml24._validation import FittedAttributes, check_positive_int

from .criteria import force, global_magnitude, grasp, iterative_snip, keep_top, per_class, snip, synflow
from .masked_mlp import BatchedMaskedMLP, check_data, lr_at, train_batched
from .prospect import prospr
from .rigl import RigL
from .schedules import GradualMagnitude, geometric_nnz

AT_INIT = ("snip", "iter_snip", "force", "grasp", "synflow", "prospr")
DURING_TRAINING = ("gmp", "rigl")
AFTER_TRAINING = ("magnitude", "imp")
METHODS = AT_INIT + DURING_TRAINING + AFTER_TRAINING
REDRAWN = ("snip", "grasp")  # the official random-init runs re-draw these networks' weights (Xavier normal) first
OFFICIAL_GRID = tuple((lr, schedule) for lr in (0.05, 0.1, 0.2) for schedule in ("cosine", "step", "constant"))


def at_init_masks(method: str, model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, nnz: int,
                  iterations: int = 100, lr: float = 0.1, batch_size: int = 128) -> list[torch.Tensor]:
    """Masks from a pruning-at-initialisation criterion for every network of ``model`` (``x``, ``y``: the scoring
    data, shuffled; SNIP scores one minibatch of it and GraSP 25 points per class, as the official code; ``lr``,
    ``batch_size``: ProsPr's inner steps, the training setting's)."""
    if method == "snip":
        return snip(model, x[:batch_size], y[:batch_size], nnz)
    if method == "iter_snip":
        return iterative_snip(model, x, y, nnz, iterations=min(iterations, 10))
    if method == "force":
        return force(model, x, y, nnz, iterations=min(iterations, 10))
    if method == "grasp":
        return grasp(model, *per_class(x, y, 25), nnz)
    if method == "synflow":
        return synflow(model, nnz, iterations=iterations)
    if method == "prospr":
        return prospr(model, x, y, nnz, steps=3, lr=lr, batch_size=batch_size)
    raise ValueError(f"unknown pruning-at-init method {method!r}; choose from {AT_INIT}")


def _stack(rows: list[tuple[dict, list[torch.Tensor]]], widths: tuple[int, ...]) -> BatchedMaskedMLP:
    """One batch from (snapshot of a K = 1 network, its masks [1, out, in]) rows."""
    batch = BatchedMaskedMLP(widths, len(rows))
    batch.load_snapshot({k: [torch.cat([r[0][k][l] for r in rows]) for l in range(len(batch.shapes))]
                         for k in ("weights", "biases")})
    batch.set_masks([torch.cat([r[1][l] for r in rows]) for l in range(len(batch.shapes))])
    return batch


def _row(batch: BatchedMaskedMLP, i: int) -> tuple[dict, list[torch.Tensor]]:
    """Row i of a batch as (snapshot of a K = 1 network, its masks [1, out, in])."""
    state = {k: [v[i:i + 1].detach().clone() for v in getattr(batch, k)] for k in ("weights", "biases")}
    return state, [m[i:i + 1].clone() for m in batch.masks]


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _chain(hooks: list):
    """One ``on_step`` callback running ``hooks`` in order (None when there are none)."""
    if not hooks:
        return None

    def on_step(model, step, total, **kwargs):
        for hook in hooks:
            hook(model, step, total, **kwargs)
    return on_step


class PrunerComparison(FittedAttributes, Estimator):
    """Prune ``tries`` initialisations per width in ``widths`` to ``nnz`` weights with each of ``methods``, then
    train each on every (lr, schedule) of ``settings`` (default: the recipe's one; ``OFFICIAL_GRID``: the paper's 9).

    ``imp_rounds`` training rounds for IMP (the paper: 5 rounds of the full recipe); ``gmp_events`` pruning events
    for GMP (199); ``rigl_delta`` steps between RigL updates (100); ``score_points`` shuffled points score the at-init
    criteria. Recipe: ``epochs``, ``batch_size``, momentum 0.9, weight decay 5e-4. The dense network of each width
    trains alongside (it is IMP's first round and magnitude pruning's starting point); ``dense=False`` leaves it out
    where neither needs it (every other network trains as it would beside it). With ``redraw`` (default), a
    fresh initialisation's weights are re-drawn Xavier normal before SNIP and GraSP score it and the network trains
    from them, as the official random-init runs do; given ``inits`` (the fixed-init study) are used as they are.
    With several settings, each (method, try) keeps the setting of best accuracy on ``validation`` points (required);
    each (method, width) then reports its best try (by accuracy, the search's rule for its masks).

    Learned, keyed by (method, width), ``"dense"`` included: ``accuracy_`` (accuracy on (x, y), the paper's
    convention; the best try's), ``masks_`` (list of [out, in]), ``nnz_``, ``try_accuracy_`` (every try's accuracy
    at its chosen setting), ``setting_`` (every try's chosen (lr, schedule)), ``validation_accuracy_`` (every try's,
    at it), ``best_try_``; ``inits_`` {width: the first try's K = 1 initial network}, ``try_inits_`` {width: every
    try's}; ``settings_`` (the (lr, schedule) settings trained, as floats and names).

    The parameters are stored as given (scikit-learn's estimator contract: ``clone``, ``get_params``/``set_params``)
    and checked at the start of ``fit``, before any network is drawn or trained. ``nnz`` has no default value:
    fit refuses None (pass the search's ``nnz_``, the budget every pruner ends at); ``widths`` defaults to the
    paper's comparison widths (3, 8, 32).
    """

    def __init__(self, widths: tuple[int, ...] = (3, 8, 32), nnz: int | None = None,
                 methods: tuple[str, ...] = METHODS, epochs: int = 50, batch_size: int = 128, lr: float = 0.1,
                 schedule: str = "cosine", imp_rounds: int = 5, gmp_events: int = 199, synflow_iterations: int = 100,
                 score_points: int = 1024, rigl_delta: int = 100, tries: int = 1, settings=None, redraw: bool = True,
                 dense: bool = True):
        self.widths, self.nnz, self.methods = widths, nnz, methods
        self.epochs, self.batch_size, self.lr, self.schedule = epochs, batch_size, lr, schedule
        self.imp_rounds, self.gmp_events, self.synflow_iterations = imp_rounds, gmp_events, synflow_iterations
        self.score_points, self.rigl_delta, self.tries = score_points, rigl_delta, tries
        self.settings, self.redraw, self.dense = settings, redraw, dense

    def _check_params(self) -> None:
        """Check the parameters, at the start of fit (``__init__`` stores them as given), and set ``settings_``."""
        if isinstance(self.methods, str):
            raise ValueError(f"methods must be a sequence of method names, got the string {self.methods!r}; "
                             f"choose from {METHODS}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; choose from {METHODS}")
        widths = self.widths
        if isinstance(widths, str) or not hasattr(widths, "__len__") or not widths or not all(
                _is_int(w) and w >= 1 for w in widths):
            raise ValueError(f"widths must be positive integers (the hidden width of each network), got {widths!r}")
        if self.nnz is None:
            raise ValueError("nnz is required: the nonzero weights every pruner ends at (e.g. the search's nnz_)")
        check_positive_int("nnz", self.nnz)
        for w in widths:
            weights = 2 * w + 2 * w * w + w
            if not 1 <= self.nnz <= weights:
                raise ValueError(f"nnz must be in [1, {weights}] for width {w}, got {self.nnz}")
        if not _is_int(self.imp_rounds) or self.imp_rounds < 2:
            raise ValueError(f"imp_rounds must be an integer >= 2 (prune between rounds), got {self.imp_rounds!r}")
        for name in ("epochs", "batch_size", "score_points", "gmp_events", "synflow_iterations", "rigl_delta",
                     "tries"):
            check_positive_int(name, getattr(self, name))
        settings = list(self.settings) if self.settings is not None else [(self.lr, self.schedule)]
        if not settings or any(isinstance(s, str) or not hasattr(s, "__len__") or len(s) != 2 for s in settings):
            raise ValueError(f"settings must be (lr, schedule) pairs such as OFFICIAL_GRID, got {self.settings!r}")
        for a, b in settings:
            if isinstance(a, bool) or not isinstance(a, (int, float, np.number)) or not (math.isfinite(a) and a > 0):
                raise ValueError(f"every setting's lr must be finite and > 0, got {a!r}")
            lr_at(0, 1, 1.0, b)  # an unknown schedule fails here
        self.settings_ = tuple((float(a), str(b)) for a, b in settings)

    def fit(self, x: torch.Tensor, y: torch.Tensor, random_state: RandomState = None,
            inits: dict[int, BatchedMaskedMLP] | None = None, validation=None) -> PrunerComparison:
        """Train every (method, width) from ``inits[width]`` (K = 1 networks, or a list of ``tries`` of them;
        default: fresh ones drawn from ``random_state``) on (x, y), measuring accuracy on (x, y); ``validation`` =
        (x_val, y_val) picks each try's setting. ``random_state`` (``icml24._random.torch_generator``: an int seeds
        one torch Generator, one is used as is) draws the fresh initialisations, the scoring points, the
        re-drawn weights, RigL's masks and the minibatch order, in that one stream."""
        self._check_params()
        check_data(x, y, 2)
        if validation is None and len(self.settings_) > 1:
            raise ValueError("several settings need validation=(x_val, y_val) to choose among them")
        if validation is not None:
            check_data(*validation, 2, name="validation")
        generator = torch_generator(random_state)
        given = dict(inits or {})
        self.try_inits_ = {}
        for w in self.widths:
            nets = given.get(w)
            nets = list(nets) if isinstance(nets, (list, tuple)) else [nets] * self.tries if nets is not None else [
                BatchedMaskedMLP((2, w, w, w, 1), 1, random_state=generator) for _ in range(self.tries)]
            if len(nets) != self.tries or any(n.num_networks != 1 or n.widths != (2, w, w, w, 1) for n in nets):
                raise ValueError(f"inits[{w}] must be one network (or {self.tries}) of widths (2, {w}, {w}, {w}, 1)")
            self.try_inits_[w] = nets
        self.inits_ = {w: nets[0] for w, nets in self.try_inits_.items()}
        idx = torch.randperm(len(x), generator=generator)[:self.score_points]
        self._score = (x[idx], y[idx])
        self._validation = validation if validation is not None else (x, y)
        self.results_ = {}  # (method, width, try, setting) -> (accuracy, validation accuracy, batch, row)
        for w in self.widths:
            self._fit_width(w, x, y, generator, redraw=bool(self.redraw) and w not in given)
        self._choose()
        del self._score, self._validation
        return self

    def _starts(self, w: int, method: str, redraw: bool, generator) -> list[dict]:
        """Each try's starting weights for ``method`` (SNIP and GraSP re-draw them in random-init runs)."""
        nets = self.try_inits_[w]
        if not (redraw and method in REDRAWN):
            return [n.snapshot() for n in nets]
        out = []
        for n in nets:
            fresh = BatchedMaskedMLP(n.widths, 1)
            fresh.load_snapshot(n.snapshot())
            out.append(fresh.xavier_normal_(generator).snapshot())
        return out

    def _fit_width(self, w: int, x, y, generator, redraw: bool) -> None:
        widths, tries, settings = (2, w, w, w, 1), range(self.tries), range(len(self.settings_))
        later = [m for m in ("magnitude", "imp") if m in self.methods]
        dense = bool(self.dense) or bool(later)
        first = [m for m in self.methods if m in AT_INIT + DURING_TRAINING] + ["dense"] * dense
        rows, keys = [], []
        for method in first:
            starts = self._starts(w, method, redraw, generator)
            masks = {s: [m.clone() for m in self.try_inits_[w][0].masks] for s in settings}  # dense: all ones
            masks = {s: [m.expand(self.tries, *m.shape[1:]) for m in masks[s]] for s in settings}
            if method in AT_INIT:
                probe = _stack([(st, [m[:1] for m in masks[0]]) for st in starts], widths)
                by_lr = {}
                for s in settings:  # only ProsPr's masks depend on the setting (its inner steps' lr)
                    lr = self.settings_[s][0] if method == "prospr" else None
                    if lr not in by_lr:
                        by_lr[lr] = at_init_masks(method, probe, *self._score, self.nnz, self.synflow_iterations,
                                                  lr or self.settings_[0][0], self.batch_size)
                    masks[s] = by_lr[lr]
            for k in tries:
                for s in settings:
                    rows.append((starts[k], [m[k:k + 1] for m in masks[s]]))
                    keys.append((method, k, s))
        if not rows:
            return
        batch = _stack(rows, widths)
        hooks = []
        for method, hook in (("gmp", lambda r: GradualMagnitude(self.nnz, self.gmp_events, r)),
                             ("rigl", lambda r: RigL(self.nnz, r, delta=self.rigl_delta, random_state=generator))):
            rows_of = [i for i, (m, _, _) in enumerate(keys) if m == method]
            if rows_of:
                hooks.append(hook(rows_of))
        self._train(batch, keys, x, y, generator, _chain(hooks))
        self._record(batch, keys, w, x, y)
        if later:
            self._after_dense(batch, keys, later, w, x, y, generator)

    def _train(self, batch, keys, x, y, generator, on_step=None) -> None:
        lrs = [self.settings_[s][0] for _, _, s in keys]
        schedules = [self.settings_[s][1] for _, _, s in keys]
        train_batched(batch, x, y, random_state=generator, on_step=on_step, lr=lrs, schedule=schedules,
                      epochs=self.epochs, batch_size=self.batch_size)

    def _record(self, batch: BatchedMaskedMLP, keys: list[tuple[str, int, int]], w: int, x, y) -> None:
        acc, val = batch.accuracy(x, y), batch.accuracy(*self._validation)
        for i, (method, k, s) in enumerate(keys):  # a later record (IMP's next round) replaces an earlier one
            self.results_[(method, w, k, s)] = (float(acc[i]), float(val[i]), batch, i)

    def _choose(self) -> None:
        """Each (method, width, try): the setting of best validation accuracy; each (method, width): its best try."""
        self.accuracy_, self.masks_, self.nnz_, self.try_accuracy_, self.best_try_ = {}, {}, {}, {}, {}
        self.setting_, self.validation_accuracy_ = {}, {}
        pairs = dict.fromkeys((m, w) for m, w, _, _ in self.results_)
        for method, w in pairs:
            chosen = []
            for k in range(self.tries):
                runs = [self.results_[(method, w, k, s)] for s in range(len(self.settings_))]
                s = max(range(len(runs)), key=lambda j: (runs[j][1], -j))  # best validation, first of equals
                chosen.append((runs[s], s))
            self.try_accuracy_[(method, w)] = [r[0] for r, _ in chosen]
            self.validation_accuracy_[(method, w)] = [r[1] for r, _ in chosen]
            self.setting_[(method, w)] = [self.settings_[s] for _, s in chosen]
            best = max(range(self.tries), key=lambda k: (chosen[k][0][0], -k))  # best try, first of equals
            (acc, _, batch, i), _ = chosen[best]
            state, masks = _row(batch, i)
            live = [(m * (v != 0)).reshape(m.shape[-2:]) for m, v in zip(masks, state["weights"])]
            self.accuracy_[(method, w)], self.best_try_[(method, w)] = acc, best
            self.masks_[(method, w)] = live
            self.nnz_[(method, w)] = int(sum(m.sum() for m in live))

    def _after_dense(self, batch, keys, later, w, x, y, generator) -> None:
        """One-shot magnitude (prune the trained dense network, fine-tune) and IMP rounds 2..R (prune the last
        round's result to the geometric schedule, rewind to init, retrain), each on its dense row's setting."""
        widths = (2, w, w, w, 1)
        rows, new_keys = [], []
        total = 2 * w + 2 * w * w + w
        for k, s in ((k, s) for k in range(self.tries) for s in range(len(self.settings_))):
            state, masks = _row(batch, keys.index(("dense", k, s)))
            trained = [v * m for v, m in zip(state["weights"], masks)]
            for method in later:
                keep = self.nnz if method == "magnitude" else geometric_nnz(1, self.imp_rounds, total, self.nnz)
                pruned = keep_top([t.abs() for t in trained], max(self.nnz, keep), masks)
                start = state if method == "magnitude" else self.try_inits_[w][k].snapshot()  # IMP rewinds to init
                rows.append((start, pruned))
                new_keys.append((method, k, s))
        nxt = _stack(rows, widths)
        self._train(nxt, new_keys, x, y, generator)
        self._record(nxt, new_keys, w, x, y)
        if "imp" not in later:
            return
        for r in range(2, self.imp_rounds):
            imp_keys = [key for key in new_keys if key[0] == "imp"]
            last = _stack([_row(nxt, new_keys.index(key)) for key in imp_keys], widths)
            keep = max(self.nnz, geometric_nnz(r, self.imp_rounds, total, self.nnz))
            pruned = global_magnitude(last, keep)
            imp_rows = [(self.try_inits_[w][k].snapshot(), [m[j:j + 1] for m in pruned])  # rewind, new mask
                        for j, (_, k, _) in enumerate(imp_keys)]
            nxt, new_keys = _stack(imp_rows, widths), imp_keys
            self._train(nxt, imp_keys, x, y, generator)
            self._record(nxt, imp_keys, w, x, y)
