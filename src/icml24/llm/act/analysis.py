"""Where attention sinks occur: per-head statistics over prompts, and attention-map figures (ACT, Fig. 1 style)."""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch import nn

from icml24._validation import check_positive

from .sinks import causal_allowed, detect_sinks, sink_scores


@contextlib.contextmanager
def _eager(model: nn.Module):
    previous = model.config._attn_implementation
    if previous != "eager":
        model.set_attn_implementation("eager")
    try:
        yield model
    finally:
        if previous != "eager":
            model.set_attn_implementation(previous)


@torch.no_grad()
def attention_maps(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
    """Post-softmax attention of every layer: a tuple of ``[B, H, L, L]`` tensors (eager attention, restored after)."""
    with _eager(model):
        out = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True, logits_to_keep=1,
                    use_cache=False)
    return tuple(a.float() for a in out.attentions)


def hidden_sinks(attn: torch.Tensor, threshold: float = 0.1, allowed: torch.Tensor | None = None,
                 min_viewers: int = 1, min_uniform_ratio: float = 0.0) -> torch.Tensor:
    """Sinks *beyond the first token* (paper finding 1): ``col_j > threshold`` at a key after the first real token.

    Two optional filters make the count robust on short prompts: ``min_viewers`` ignores keys that fewer
    queries can see (the last tokens, whose ``col_j`` averages few rows), and ``min_uniform_ratio`` asks
    ``col_j`` to be at least that multiple of what a head attending uniformly would give the key (on a
    20-token prompt uniform attention alone gives the second token ``col_1`` ~ 0.14 > 0.1).
    Returns bool ``[..., Lk]``.
    """
    if allowed is None:
        allowed = causal_allowed(*attn.shape[-2:])
    allowed = allowed.to(attn.device)
    sinks = detect_sinks(attn, threshold, allowed, keep_first=False)
    seen = allowed.any(dim=-2)
    first_real = seen & (seen.long().cumsum(dim=-1) == 1)
    viewers = allowed.sum(dim=-2)
    sinks = sinks & ~first_real & (viewers >= min_viewers)
    if min_uniform_ratio > 0:
        uniform = allowed.to(attn.dtype) / allowed.sum(dim=-1, keepdim=True).clamp_min(1).to(attn.dtype)
        sinks = sinks & (sink_scores(attn, allowed) >= min_uniform_ratio * sink_scores(uniform, allowed))
    return sinks


@torch.no_grad()
def hidden_sink_frequency(model: nn.Module, batches: list, threshold: float = 0.1, min_viewers: int = 1,
                          min_uniform_ratio: float = 0.0, filters: dict[str, dict] | None = None):
    """For each (layer, head), the fraction of prompts whose map has at least one sink beyond the first token.

    Args:
        model: a transformers causal LM (run with eager attention for this call).
        batches: ``EncodedBatch`` list.
        threshold, min_viewers, min_uniform_ratio: as in ``hidden_sinks``.
        filters (dict, optional): several settings at once from one forward pass, e.g.
            ``{"official": {}, "robust": {"min_viewers": 5, "min_uniform_ratio": 2.0}}``.

    Returns:
        np.ndarray ``[num_layers, num_heads]`` in [0, 1]; with ``filters``, a dict of them by name.
    """
    check_positive("threshold", threshold)
    settings = filters if filters is not None else {"": {"min_viewers": min_viewers,
                                                         "min_uniform_ratio": min_uniform_ratio}}
    counts: dict[str, np.ndarray] = {}
    total = 0
    for b in batches:
        maps = attention_maps(model, b.input_ids, b.attention_mask)
        allowed = causal_allowed(b.input_ids.shape[1], b.input_ids.shape[1], b.attention_mask)
        for name, kwargs in settings.items():
            has = torch.stack([hidden_sinks(a, threshold, allowed, **kwargs).any(dim=-1) for a in maps])  # [L, B, H]
            counts[name] = counts.get(name, 0) + has.sum(dim=1).numpy()
        total += b.input_ids.shape[0]
    if total == 0:
        raise ValueError("batches is empty")
    freq = {name: c / total for name, c in counts.items()}
    return freq if filters is not None else freq[""]


def plot_attention_sinks(maps: torch.Tensor, titles: list[str], threshold: float = 0.1, tokens: list[str] | None = None,
                         ncols: int = 4):
    """Figure: attention maps ``[n, L, L]`` (one per panel) with the detected sinks marked under their columns.

    Red triangles mark sinks beyond the first token (ACT calibrates these), the grey one the initial sink.
    """
    import matplotlib.pyplot as plt

    maps = maps.detach().float().cpu()
    if maps.ndim != 3:
        raise ValueError(f"maps must be [n, L, L], got {tuple(maps.shape)}")
    n, length = maps.shape[0], maps.shape[-1]
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.2 * nrows), squeeze=False)
    scores = sink_scores(maps)
    for k, ax in enumerate(axes.ravel()):
        if k >= n:
            ax.axis("off")
            continue
        ax.imshow(maps[k].numpy() ** 0.5, cmap="viridis", vmin=0, vmax=1)  # sqrt to show small weights
        sink_cols = np.flatnonzero((scores[k] > threshold).numpy())
        for j in sink_cols:
            ax.plot(j, length - 0.5 + 0.9, marker="^", color="grey" if j == sink_cols[0] else "red", ms=6,
                    clip_on=False)
        ax.set_title(titles[k] if k < len(titles) else "", fontsize=9)
        if tokens is not None and len(tokens) == length:
            ax.set_xticks(range(length))
            ax.set_xticklabels(tokens, rotation=90, fontsize=5)
            ax.set_yticks([])
        else:
            ax.set_xticks([])
            ax.set_yticks([])
    fig.suptitle(f"attention maps; triangles: sinks (col_j > {threshold}), red = calibrated by ACT", fontsize=10)
    fig.tight_layout()
    return fig
