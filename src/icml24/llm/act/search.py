"""ACT's offline head filtering: calibrate one head at a time and keep the heads that raise accuracy.

Yu et al. (ICML 2024) observe that not every attention sink hurts: calibrating some heads lowers accuracy.
So ACT first searches, on a small calibration set, for the heads whose calibration alone raises the
accuracy over the uncalibrated model, and at inference calibrates only those.

Algorithm (per candidate head ``(l, h)``)::

    base  <- accuracy(model) on the calibration set
    for (l, h) in candidates:
        acc[l, h] <- accuracy(model with ACT on head (l, h) only)
    selected <- {(l, h) : acc[l, h] > base + min_gain}

Calibrating a head of layer ``l`` changes nothing below ``l``, so the hidden states entering each candidate
layer are computed once (one plain forward per batch) and every candidate runs only layers ``l..L-1``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import nn

from icml24._validation import FittedAttributes, check_finite

from .apply import ACT, attention_modules


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
        batches: :class:`~icml24.llm.tasks.EncodedBatch` list.
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
    def predictions(self, model: nn.Module, start_layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and true choice indices, running only layers ``start_layer..`` from the cache."""
        if start_layer not in self.layers:
            raise ValueError(f"layer {start_layer} was not cached; cached layers: {self.layers}")
        decoder_layers, norm, head = _decoder_parts(model)
        preds, labels = [], []
        for b, store in zip(self.batches, self.inputs):
            hidden, kwargs = store[start_layer]
            for layer in decoder_layers[start_layer:]:
                out = layer(hidden, **kwargs)
                hidden = out[0] if isinstance(out, tuple) else out
            logits = head(norm(hidden[:, -1:]))[:, -1]
            preds.append(logits.gather(1, b.choice_ids).argmax(dim=1).numpy())
            labels.append(b.labels.numpy())
        return np.concatenate(preds), np.concatenate(labels)


class HeadSearch(FittedAttributes):
    """Select the attention heads whose ACT calibration alone raises calibration-set accuracy (ACT, Sec. 4.2).

    Args:
        candidates: ``(layer, head)`` pairs to try, ``{layer: [heads]}``, or ``"all"`` (every head). Default: "all".
        threshold (float): ACT sink threshold ``alpha``. Default: 0.1.
        beta (float): ACT sink retention ``beta``. Default: 0.4.
        min_gain (float): keep a head when its accuracy exceeds the baseline by more than this. Default: 0.0.

    Attributes (after :meth:`fit`):
        baseline_accuracy_ (float): calibration accuracy of the plain model (mean over tasks).
        head_accuracy_ (dict[(int, int), float]): accuracy with each candidate calibrated alone.
        task_accuracy_ (dict[(int, int), list[float]]): the same, per task (``"baseline"`` key for the plain model).
        selected_heads_ (dict[int, list[int]]): ``{layer: heads}`` kept, ready for ``ACT(heads=...)``.
        seconds_ (float): wall time of the search.
        forward_layers_ (int): decoder-layer passes run, summed over items (the cache build included).

    Reading an attribute above before :meth:`fit` raises ``NotFittedError``.
    """

    _fit_call = "fit(model, task_batches)"

    def __init__(self, candidates="all", threshold: float = 0.1, beta: float = 0.4, min_gain: float = 0.0):
        ACT(None, threshold=threshold, beta=beta)  # validates threshold and beta now, not at fit
        check_finite("min_gain", min_gain)
        self.candidates = candidates
        self.threshold = threshold
        self.beta = beta
        self.min_gain = min_gain

    def _candidate_pairs(self, model) -> list[tuple[int, int]]:
        selection = ACT(self.candidates, threshold=self.threshold, beta=self.beta).selected_heads(model)
        return sorted((layer, h) for layer, hs in selection.items() for h in hs)

    def fit(self, model: nn.Module, task_batches: list[list], progress: Callable | None = None) -> HeadSearch:
        """Run the search.

        Args:
            model: a Llama-style transformers causal LM.
            task_batches: one list of :class:`~icml24.llm.tasks.EncodedBatch` per calibration task; the score is
                the mean of the per-task accuracies.
            progress: optional wrapper for the loop over candidates (e.g. a progress bar).
        """
        if not task_batches or any(not batches for batches in task_batches):
            raise ValueError("task_batches must hold at least one non-empty list of batches per task")
        start = time.perf_counter()
        pairs = self._candidate_pairs(model)
        layers = sorted({layer for layer, _ in pairs})
        num_layers = len(attention_modules(model))
        with ACT(None).attach(model):
            caches = [PrefixCache(model, batches, layers) for batches in task_batches]
        base = [_accuracy(*cache.predictions(model, layers[0])) for cache in caches] if layers else []
        self.task_accuracy_: dict = {"baseline": base}
        self.baseline_accuracy_ = float(np.mean(base)) if base else float("nan")
        self.head_accuracy_: dict[tuple[int, int], float] = {}
        items = sum(len(b.labels) for batches in task_batches for b in batches)
        self.forward_layers_ = num_layers * items + (num_layers - layers[0]) * items if layers else 0
        iterator = progress(pairs) if progress is not None else pairs
        for layer, head in iterator:
            with ACT({layer: [head]}, threshold=self.threshold, beta=self.beta).attach(model):
                accs = [_accuracy(*cache.predictions(model, layer)) for cache in caches]
            self.task_accuracy_[(layer, head)] = accs
            self.head_accuracy_[(layer, head)] = float(np.mean(accs))
            self.forward_layers_ += (num_layers - layer) * items
        selected: dict[int, list[int]] = {}
        for (layer, head), acc in self.head_accuracy_.items():
            # keep heads whose calibration helps on its own (the tolerance stops float ties from passing)
            if acc > self.baseline_accuracy_ + self.min_gain + 1e-9:
                selected.setdefault(layer, []).append(head)
        self.selected_heads_ = {layer: sorted(hs) for layer, hs in sorted(selected.items())}
        self.seconds_ = time.perf_counter() - start
        return self

    def __repr__(self) -> str:
        return (f"HeadSearch(candidates={self.candidates!r}, threshold={self.threshold}, beta={self.beta}, "
                f"min_gain={self.min_gain})")


def _accuracy(preds: np.ndarray, labels: np.ndarray) -> float:
    return float((preds == labels).mean())
