"""ACT's offline head filtering: calibrate one head at a time and keep the heads that raise accuracy.

Yu et al. (ICML 2024) observe that not every attention sink hurts: calibrating some heads lowers accuracy.
So ACT first searches, on a small calibration set, for the heads whose calibration alone raises the
accuracy over the uncalibrated model, and at inference calibrates only those.

Algorithm (per candidate head ``(l, h)``)::

    base  <- accuracy(model) on the calibration set
    for (l, h) in candidates:
        acc[l, h] <- accuracy(model with ACT on head (l, h) only)
    selected <- {(l, h) : acc[l, h] > base + min_gain}      (the paper's strict rule: a tie is not a gain)

Two things make it cheap. Calibrating a head of layer ``l`` changes nothing below ``l``, so the hidden states
entering each candidate layer are computed once (one plain forward per batch) and every candidate runs only layers
``l..L-1``. And the candidates of one layer run together: the cached batch is repeated once per head
(``heads_per_pass`` copies) and copy ``k`` calibrates only head ``k``, so one forward scores several heads.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import nn

from icml24._estimator import Estimator
from icml24._progress import check_progress, tracked
from icml24._validation import FittedAttributes, check_finite

from .apply import _STATE, ACT, attention_modules
from .sinks import AttentionCalibration


def _decoder_parts(model: nn.Module):
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else getattr(model, "model", None)
    layers = getattr(decoder, "layers", None)
    norm = getattr(decoder, "norm", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if layers is None or norm is None or head is None:
        raise ValueError(
            f"{type(model).__name__} is not a Llama-style causal LM (decoder.layers, decoder.norm, lm_head expected)"
        )
    return layers, norm, head


class PrefixCache:
    """Hidden states (and layer keyword arguments) entering chosen decoder layers, one entry per batch.

    Built inside an ``ACT(None).attach(model)`` block so that the cached masks fit the ``"act"`` attention.

    Args:
        model: a Llama-style ``...ForCausalLM`` with ACT attached (no heads).
        batches: ``EncodedBatch`` list.
        layers: the layer indices whose inputs to keep.
    """

    def __init__(self, model: nn.Module, batches: list, layers: Iterable[int]):
        self.layers = sorted({int(layer) for layer in layers})
        self.batches = batches
        decoder_layers, _, _ = _decoder_parts(model)
        self.inputs: list[dict[int, tuple[torch.Tensor, dict]]] = []
        store: dict[int, tuple[torch.Tensor, dict]] = {}

        def capture(layer_idx):
            def hook(module, args, kwargs):
                hidden = args[0] if args else kwargs["hidden_states"]
                rest = {k: v for k, v in kwargs.items() if k != "hidden_states"}
                store[layer_idx] = (hidden.detach(), rest)

            return hook

        handles = [decoder_layers[i].register_forward_pre_hook(capture(i), with_kwargs=True) for i in self.layers]
        try:
            with torch.no_grad():
                for b in batches:
                    store = {}
                    model(input_ids=b.input_ids, attention_mask=b.attention_mask, logits_to_keep=1, use_cache=False)
                    self.inputs.append(store)
        finally:
            for handle in handles:
                handle.remove()

    @torch.no_grad()
    def choice_logits(self, model: nn.Module, start_layer: int, replicas: int = 1,
                      before_batch: Callable[[int], None] | None = None) -> tuple[torch.Tensor, np.ndarray]:
        """Label-word logits ``[replicas, items, choices]`` and true choice indices, running only layers
        ``start_layer..`` from the cache.

        ``replicas > 1`` repeats every cached batch that many times along the batch dimension (copy ``k`` holds
        rows ``k * B .. (k + 1) * B - 1``); ``before_batch(B)`` runs before each batch (the search sets which
        head each copy calibrates there).
        """
        if start_layer not in self.layers:
            raise ValueError(f"layer {start_layer} was not cached; cached layers: {self.layers}")
        if replicas < 1:
            raise ValueError(f"replicas must be >= 1, got {replicas}")
        decoder_layers, norm, head = _decoder_parts(model)
        logits, labels = [], []
        for b, store in zip(self.batches, self.inputs):
            hidden, kwargs = store[start_layer]
            size = hidden.shape[0]
            if replicas > 1:
                hidden, kwargs = _repeat_rows(hidden, size, replicas), _repeat_rows(kwargs, size, replicas)
            if before_batch is not None:
                before_batch(size)
            for layer in decoder_layers[start_layer:]:
                out = layer(hidden, **kwargs)
                hidden = out[0] if isinstance(out, tuple) else out
            last = head(norm(hidden[:, -1:]))[:, -1].reshape(replicas, size, -1)
            logits.append(last.gather(2, b.choice_ids.expand(replicas, *b.choice_ids.shape)))
            labels.append(b.labels.numpy())
        return torch.cat(logits, dim=1), np.concatenate(labels)

    def predictions(self, model: nn.Module, start_layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and true choice indices, running only layers ``start_layer..`` from the cache."""
        logits, labels = self.choice_logits(model, start_layer)
        return logits[0].argmax(dim=1).numpy(), labels


def _repeat_rows(obj, size: int, replicas: int):
    """Repeat every tensor whose first dimension is the batch (``size`` rows, 2+ dims) ``replicas`` times."""
    if isinstance(obj, torch.Tensor):
        return obj.repeat(replicas, *([1] * (obj.ndim - 1))) if obj.ndim >= 2 and obj.shape[0] == size else obj
    if isinstance(obj, tuple):
        return tuple(_repeat_rows(o, size, replicas) for o in obj)
    if isinstance(obj, list):
        return [_repeat_rows(o, size, replicas) for o in obj]
    if isinstance(obj, dict):
        return {k: _repeat_rows(v, size, replicas) for k, v in obj.items()}
    return obj


@contextlib.contextmanager
def _row_heads(module: nn.Module, calibration: AttentionCalibration):
    """Within an ``ACT(None).attach`` block: let ``module`` calibrate one head per batch row (set per batch)."""
    state = getattr(module, _STATE)
    saved = state.calibration, state.heads, state.row_heads
    state.calibration, state.heads = calibration, None
    try:
        yield state
    finally:
        state.calibration, state.heads, state.row_heads = saved


def _scores(logits: torch.Tensor, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replica: accuracy and mean log-probability of the right choice (softmax over the choices)."""
    target = torch.as_tensor(labels).expand(logits.shape[0], -1).unsqueeze(-1)
    right = torch.log_softmax(logits.double(), dim=-1).gather(2, target).squeeze(-1)
    correct = logits.argmax(dim=-1) == target.squeeze(-1)
    return correct.double().mean(dim=1).numpy(), right.mean(dim=1).numpy()


class HeadSearch(Estimator, FittedAttributes):
    """Select the attention heads whose ACT calibration alone raises calibration-set accuracy (ACT, Sec. 4.2).

    Args:
        candidates (list | dict | str): ``(layer, head)`` pairs to try, ``{layer: [heads]}``, or ``"all"`` (every
            head). Default: "all".
        threshold (float): ACT sink threshold ``alpha``. Default: 0.1.
        beta (float): ACT sink retention ``beta``. Default: 0.4.
        min_gain (float): keep a head when its accuracy exceeds the baseline by more than this. Default: 0.0.
        tie_break (str): ``"none"`` (default, the paper's rule) keeps strict accuracy gains only, so a search where
            every head ties the baseline selects nothing (reported as an empty selection). ``"likelihood"`` (our
            extension, not the paper's) also keeps a head whose accuracy ties the baseline exactly while it raises
            the mean log-probability of the right choice.
        heads_per_pass (int): candidate heads of one layer scored in one forward (the batch is repeated this many
            times); 1 runs one forward per head. Default: 9.

    Attributes (after ``fit``):
        baseline_accuracy_ (float): calibration accuracy of the plain model (mean over tasks).
        baseline_log_likelihood_ (float): mean log-probability of the right choice, plain model.
        head_accuracy_ (dict[(int, int), float]): accuracy with each candidate calibrated alone.
        head_log_likelihood_ (dict[(int, int), float]): mean log-probability of the right choice, the same way.
        task_accuracy_ (dict[(int, int), list[float]]): the same, per task (``"baseline"`` key for the plain model).
        selected_heads_ (dict[int, list[int]]): ``{layer: heads}`` kept, ready for ``ACT(heads=...)``; it can be
            empty (no head helped), which callers should report as its own outcome.
        num_selected_ (int): number of heads kept.
        seconds_ (float): wall time of the search.
        forward_layers_ (int): decoder-layer passes run, summed over items (the cache build included).
        forward_passes_ (int): batched forwards run over the cached batches (one per layer chunk and batch).

    Reading an attribute above before ``fit`` raises ``NotFittedError``.
    """

    _fit_call = "fit(model, task_batches)"
    TIE_BREAKS = ("likelihood", "none")

    def __init__(self, candidates="all", threshold: float = 0.1, beta: float = 0.4, min_gain: float = 0.0,
                 tie_break: str = "none", heads_per_pass: int = 9):
        self.candidates = candidates
        self.threshold = threshold
        self.beta = beta
        self.min_gain = min_gain
        self.tie_break = tie_break
        self.heads_per_pass = heads_per_pass

    def _check_params(self) -> None:
        ACT(None, threshold=self.threshold, beta=self.beta)  # validates threshold and beta
        check_finite("min_gain", self.min_gain)
        if self.tie_break not in self.TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {self.TIE_BREAKS}, got {self.tie_break!r}")
        if isinstance(self.heads_per_pass, bool) or int(self.heads_per_pass) != self.heads_per_pass \
                or self.heads_per_pass < 1:
            raise ValueError(f"heads_per_pass must be a positive integer, got {self.heads_per_pass!r}")

    def _candidate_pairs(self, model) -> list[tuple[int, int]]:
        selection = ACT(self.candidates, threshold=self.threshold, beta=self.beta).selected_heads(model)
        return sorted((layer, h) for layer, hs in selection.items() for h in hs)

    def fit(self, model: nn.Module, task_batches: list[list],
            progress: Callable[[int, int], None] | None = None) -> HeadSearch:
        """Run the search.

        Args:
            model: a Llama-style transformers causal LM.
            task_batches: one list of ``EncodedBatch`` per calibration task; the score is
                the mean of the per-task accuracies.
            progress: ``progress(done, total)`` called after each chunk of candidates (``icml24._progress``;
                e.g. ``ctx.progress_callback("ACT head search")``).
        """
        self._check_params()
        check_progress(progress)
        if not task_batches or any(not batches for batches in task_batches):
            raise ValueError("task_batches must hold at least one non-empty list of batches per task")
        start = time.perf_counter()
        pairs = self._candidate_pairs(model)
        layers = sorted({layer for layer, _ in pairs})
        modules = attention_modules(model)
        num_layers = len(modules)
        calibration = AttentionCalibration(self.threshold, self.beta)
        items = sum(len(b.labels) for batches in task_batches for b in batches)
        self.head_accuracy_: dict[tuple[int, int], float] = {}
        self.head_log_likelihood_: dict[tuple[int, int], float] = {}
        self.task_accuracy_: dict = {}
        self.forward_layers_ = num_layers * items if layers else 0
        self.forward_passes_ = 0
        with ACT(None).attach(model):
            caches = [PrefixCache(model, batches, layers) for batches in task_batches]
            if layers:
                base = [_scores(*cache.choice_logits(model, layers[0])) for cache in caches]
                self.forward_layers_ += (num_layers - layers[0]) * items
                self.task_accuracy_["baseline"] = [float(acc[0]) for acc, _ in base]
                self.baseline_accuracy_ = float(np.mean([acc[0] for acc, _ in base]))
                self.baseline_log_likelihood_ = float(np.mean([ll[0] for _, ll in base]))
            else:
                self.task_accuracy_["baseline"] = []
                self.baseline_accuracy_ = self.baseline_log_likelihood_ = float("nan")
            per_pass = int(self.heads_per_pass)
            chunks = [(layer, hs[i : i + per_pass])
                      for layer in layers for hs in [[h for la, h in pairs if la == layer]]
                      for i in range(0, len(hs), per_pass)]
            for layer, heads in tracked(chunks, progress):  # progress(done, total) after each chunk
                self._score_chunk(model, modules[layer], layer, heads, caches, calibration)
                self.forward_layers_ += (num_layers - layer) * items * len(heads)
                self.forward_passes_ += sum(len(cache.batches) for cache in caches)
        self.selected_heads_ = self._keep()
        self.num_selected_ = sum(len(hs) for hs in self.selected_heads_.values())
        self.seconds_ = time.perf_counter() - start
        return self

    def _score_chunk(self, model, module, layer: int, heads: list[int], caches, calibration) -> None:
        """One batched forward per cached batch: copy ``k`` of the batch calibrates head ``heads[k]`` alone."""
        head_ids = torch.tensor(heads, dtype=torch.long)
        with _row_heads(module, calibration) as state:
            def before_batch(size: int) -> None:
                state.row_heads = head_ids.repeat_interleave(size)

            scores = [_scores(*cache.choice_logits(model, layer, len(heads), before_batch)) for cache in caches]
        for k, head in enumerate(heads):
            accs = [float(acc[k]) for acc, _ in scores]
            self.task_accuracy_[(layer, head)] = accs
            self.head_accuracy_[(layer, head)] = float(np.mean(accs))
            self.head_log_likelihood_[(layer, head)] = float(np.mean([ll[k] for _, ll in scores]))

    def _keep(self) -> dict[int, list[int]]:
        """The keep rule: a strict accuracy gain, or (``tie_break="likelihood"``) a tie with a likelihood gain."""
        selected: dict[int, list[int]] = {}
        for (layer, head), acc in self.head_accuracy_.items():
            gain = acc - self.baseline_accuracy_
            # the tolerance stops float ties from passing as gains
            keep = gain > self.min_gain + 1e-9
            if self.tie_break == "likelihood" and abs(gain) <= 1e-9 and self.min_gain <= 0:
                keep = keep or self.head_log_likelihood_[(layer, head)] > self.baseline_log_likelihood_ + 1e-9
            if keep:
                selected.setdefault(layer, []).append(head)
        return {layer: sorted(hs) for layer, hs in sorted(selected.items())}

    def __repr__(self) -> str:
        return (f"HeadSearch(candidates={self.candidates!r}, threshold={self.threshold}, beta={self.beta}, "
                f"min_gain={self.min_gain}, tie_break={self.tie_break!r}, heads_per_pass={self.heads_per_pass})")


def _accuracy(preds: np.ndarray, labels: np.ndarray) -> float:
    return float((preds == labels).mean())
