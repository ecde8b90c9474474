"""Complementary regional diffusion as a cross-attention hook (RPG, Sec. 3.3; the released ``cross_attention.py``).

The prompt is ``base BREAK p0 BREAK p1 ...``; each chunk is encoded alone into ``chunk_len`` tokens and the chunks
are concatenated into the cross-attention context. In every cross-attention layer, for region i:

    h_i = Attn(Q(x), K(c_i), V(c_i)) cropped to region i,            (Eq. 4, per-region attention)
    h_i <- (1 - beta) h_i + beta h_base|region i,                     (Eq. 5, base blend with ratio beta)

and the cells are put back in place (cells along the width, rows along the height). The computation is per batch
element, so the conditional and unconditional halves of classifier-free guidance each get their own regions.
With beta = 1 it returns the base attention unchanged: the plain full-prompt model, bit for bit.

The hook is a diffusers-style attention processor (``processor(attn, hidden_states, encoder_hidden_states)``):
it wraps the module's own processor, so it runs on a diffusers ``UNet2DConditionModel`` and on the local model alike.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch

from .layout import RegionLayout, latent_grid


class RegionalAttnProcessor:
    """Regional cross-attention around an inner processor.

    Args:
        inner: the module's original processor; it is called on query subsets and context chunks.
        layout: the planned regions (row-major order = the order of the regional chunks).
        canvas: ``(height, width)`` of the sample the model denoises (latent size for a latent model); each
            layer's feature grid is found by halving it.
        chunk_len: tokens per encoded chunk.
        base_ratio: beta; ``None`` means no base prompt (the context holds only the regional chunks).
    """

    def __init__(self, inner, layout: RegionLayout, canvas: tuple[int, int], chunk_len: int,
                 base_ratio: float | None = 0.5):
        if base_ratio is not None and not (0.0 <= base_ratio <= 1.0 and math.isfinite(base_ratio)):
            raise ValueError(f"base_ratio must lie in [0, 1] (or be None for no base prompt), got {base_ratio}")
        if chunk_len < 1:
            raise ValueError(f"chunk_len must be >= 1, got {chunk_len}")
        self.inner, self.layout, self.canvas = inner, layout, tuple(canvas)
        self.chunk_len, self.base_ratio = int(chunk_len), base_ratio

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, **kwargs):
        if encoder_hidden_states is None:  # a self-attention layer: leave it alone
            return self.inner(attn, hidden_states, None, attention_mask, temb, **kwargs)
        use_base = self.base_ratio is not None
        n_chunks = self.layout.num_regions + int(use_base)
        if encoder_hidden_states.shape[1] != n_chunks * self.chunk_len:
            raise ValueError(f"context has {encoder_hidden_states.shape[1]} tokens, expected {n_chunks} chunks of "
                             f"{self.chunk_len} (base prompt {'+ ' if use_base else 'absent, '}"
                             f"{self.layout.num_regions} regions); concatenate the encoded chunks (regional_context)")
        chunks = encoder_hidden_states.split(self.chunk_len, dim=1)
        batch, tokens, _ = hidden_states.shape
        h, w = latent_grid(tokens, *self.canvas)
        grid = hidden_states.reshape(batch, h, w, -1)
        base = None
        if use_base:
            base = self.inner(attn, hidden_states, chunks[0], attention_mask, temb, **kwargs)
            base = base.reshape(batch, h, w, -1)
        beta = self.base_ratio if use_base else 0.0
        boxes, rows, k = self.layout.boxes(h, w), [], 0
        for widths in self.layout.cell_widths:
            cells = []
            for _ in widths:
                top, bottom, left, right = boxes[k]
                context = chunks[k + int(use_base)]
                k += 1
                if bottom == top or right == left:
                    continue
                query = grid[:, top:bottom, left:right].reshape(batch, (bottom - top) * (right - left), -1)
                out = self.inner(attn, query, context, attention_mask, temb, **kwargs)  # Eq. 4, cropped queries
                out = out.reshape(batch, bottom - top, right - left, -1)
                if base is not None:
                    out = out * (1.0 - beta) + base[:, top:bottom, left:right] * beta  # Eq. 5
                cells.append(out)
            if cells:
                rows.append(torch.cat(cells, dim=2))  # cells along the width
        return torch.cat(rows, dim=1).reshape(batch, tokens, -1)  # rows along the height


def cross_attention_modules(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """The cross-attention modules a hook attaches to: diffusers' ``attn2`` layers or any module flagged
    ``is_cross_attention`` that has ``set_processor``."""
    found = []
    for name, module in model.named_modules():
        if not hasattr(module, "set_processor"):
            continue
        if name.endswith("attn2") or getattr(module, "is_cross_attention", False):
            found.append((name, module))
    return found


@contextlib.contextmanager
def regional_hook(model: torch.nn.Module, layout: RegionLayout, canvas: tuple[int, int], chunk_len: int,
                  base_ratio: float | None = 0.5) -> Iterator[torch.nn.Module]:
    """Inside the block, every cross-attention layer of ``model`` computes regional attention; the original
    processors come back on exit."""
    modules = cross_attention_modules(model)
    if not modules:
        raise ValueError("model has no cross-attention layer (diffusers 'attn2' or is_cross_attention modules)")
    saved = [(m, m.processor) for _, m in modules]
    try:
        for module, inner in saved:
            module.set_processor(RegionalAttnProcessor(inner, layout, canvas, chunk_len, base_ratio))
        yield model
    finally:
        for module, inner in saved:
            module.set_processor(inner)
