"""Apply ACT to a transformers model through the attention-function registry (no modelling code copied).

``ACT(heads).attach(model)`` registers an ``"act"`` implementation in transformers' ``AttentionInterface``
(and an eager-style mask for it in ``AttentionMaskInterface``), switches the model to it, and marks the
attention modules of the chosen layers. A marked layer computes eager attention, calibrates the chosen heads
after the softmax (``AttentionCalibration``) and multiplies by the values; every
other layer calls the model's own implementation (``sdpa`` or ``eager``), so switching calibration off leaves
the logits as the model's. Works for any model whose attention modules call ``ALL_ATTENTION_FUNCTIONS``
with ``module.layer_idx`` set (Llama, Mistral, Qwen2, SmolLM2, ...).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator, Mapping

import torch
from torch import nn

from .sinks import AttentionCalibration, causal_allowed

ACT_IMPLEMENTATION = "act"
_STATE = "_act_state"


class _LayerState:
    """What the registered function needs on one attention module: heads to calibrate and the fallback.

    ``heads`` calibrates the same heads in every batch row; ``row_heads`` (used by the batched head search) gives
    one head per batch row instead (``-1``: none), so one forward evaluates many single-head calibrations.
    """

    def __init__(self, calibration: AttentionCalibration | None, heads: torch.Tensor | None, fallback,
                 row_heads: torch.Tensor | None = None):
        self.calibration = calibration
        self.heads = heads
        self.fallback = fallback
        self.row_heads = row_heads


def normalize_heads(heads, num_layers: int, num_heads: int) -> dict[int, list[int]]:
    """Turn a head selection into ``{layer: sorted heads}``.

    Accepts ``None`` (no head), ``"all"``, a mapping ``{layer: [heads]}`` (a value ``"all"`` means every head of
    that layer) or an iterable of ``(layer, head)`` pairs.
    """
    if heads is None:
        return {}
    if isinstance(heads, str):
        if heads != "all":
            raise ValueError(f"heads must be 'all', a {{layer: [heads]}} mapping or (layer, head) pairs, got {heads!r}")
        return {layer: list(range(num_heads)) for layer in range(num_layers)}
    pairs: list[tuple[int, int]] = []
    if isinstance(heads, Mapping):
        for layer, layer_heads in heads.items():
            layer_heads = range(num_heads) if isinstance(layer_heads, str) and layer_heads == "all" else layer_heads
            pairs.extend((int(layer), int(h)) for h in layer_heads)
    else:
        pairs = [(int(layer), int(h)) for layer, h in heads]
    selection: dict[int, set[int]] = {}
    for layer, head in pairs:
        if not (0 <= layer < num_layers and 0 <= head < num_heads):
            raise ValueError(f"head ({layer}, {head}) is outside the model's {num_layers} layers x {num_heads} heads")
        selection.setdefault(layer, set()).add(head)
    return {layer: sorted(hs) for layer, hs in sorted(selection.items())}


def attention_modules(model: nn.Module) -> dict[int, nn.Module]:
    """The self-attention modules of a transformers decoder, by ``layer_idx``."""
    found: dict[int, nn.Module] = {}
    for module in model.modules():
        if hasattr(module, "layer_idx") and hasattr(module, "num_key_value_groups") and hasattr(module, "scaling"):
            found[int(module.layer_idx)] = module
    if not found:
        raise ValueError(
            f"{type(model).__name__} has no attention modules with layer_idx/num_key_value_groups/scaling; "
            "ACT supports transformers decoders that use the AttentionInterface (Llama-style models)"
        )
    return dict(sorted(found.items()))


def _allowed_from_mask(mask: torch.Tensor | None, num_queries: int, num_keys: int) -> torch.Tensor | None:
    if mask is None:
        return None  # plain causal: the calibration's fast path
    mask = mask[..., :num_keys]
    if mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2  # additive masks hold 0 where allowed, dtype-min where not


def _repeat_kv(states: torch.Tensor, groups: int) -> torch.Tensor:
    if groups == 1:
        return states
    batch, kv_heads, length, dim = states.shape
    expanded = states[:, :, None].expand(batch, kv_heads, groups, length, dim)
    return expanded.reshape(batch, kv_heads * groups, length, dim)


def act_attention_forward(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                          attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                          **kwargs):
    """The ``"act"`` attention function: eager attention with ACT on the marked heads of this layer.

    Shapes follow transformers: query ``[B, H, Lq, D]``, key/value ``[B, H_kv, Lk, D]``; returns
    ``(output [B, Lq, H, D], attention [B, H, Lq, Lk] or None)``.
    """
    state: _LayerState | None = getattr(module, _STATE, None)
    if state is None:
        raise RuntimeError("the 'act' attention ran on a module ACT is not attached to; use ACT(...).attach(model)")
    if state.calibration is None or (state.heads is None and state.row_heads is None):
        return state.fallback(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    key_states = _repeat_kv(key, module.num_key_value_groups)
    value_states = _repeat_kv(value, module.num_key_value_groups)
    scores = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    num_queries, num_keys = scores.shape[-2:]
    if attention_mask is not None:
        mask = attention_mask[..., :num_keys]
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min) if mask.dtype == torch.bool else scores + mask
    else:
        scores = scores.masked_fill(~causal_allowed(num_queries, num_keys).to(scores.device),
                                    torch.finfo(scores.dtype).min)
    attn = torch.softmax(scores, dim=-1, dtype=torch.float32)  # a fresh tensor: calibrated in place below
    allowed = _allowed_from_mask(attention_mask, num_queries, num_keys)
    if state.row_heads is not None:
        _calibrate_row_heads(state, attn, allowed)
    elif len(state.heads) == attn.shape[1]:
        state.calibration(attn, allowed, inplace=True, normalized=True)
    else:  # ACT on the chosen heads only: calibrate a copy of them, write it back
        heads = state.heads.to(attn.device)
        attn[:, heads] = state.calibration(attn[:, heads], allowed, inplace=True, normalized=True)
    attn = attn.to(query.dtype)
    attn = nn.functional.dropout(attn, p=dropout, training=module.training)
    output = torch.matmul(attn, value_states).transpose(1, 2).contiguous()
    return output, attn


def _calibrate_row_heads(state: _LayerState, attn: torch.Tensor, allowed: torch.Tensor | None) -> None:
    """Calibrate head ``row_heads[b]`` of batch row ``b`` (none where it is -1), in place."""
    row_heads = state.row_heads.to(attn.device)
    if row_heads.shape != attn.shape[:1]:
        raise ValueError(f"row_heads has {tuple(row_heads.shape)} entries for a batch of {attn.shape[0]} rows")
    rows = torch.nonzero(row_heads >= 0).flatten()
    heads = row_heads[rows]
    if allowed is not None and allowed.ndim == 4:
        allowed = allowed[rows if allowed.shape[0] == attn.shape[0] else 0, 0]
    attn[rows, heads] = state.calibration(attn[rows, heads], allowed, inplace=True, normalized=True)


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(ACT_IMPLEMENTATION, act_attention_forward)
    AttentionMaskInterface.register(ACT_IMPLEMENTATION, eager_mask)


def _fallback_for(module: nn.Module, implementation: str):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if implementation == "eager" or implementation not in ALL_ATTENTION_FUNCTIONS:
        eager = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
        if eager is None:
            raise ValueError(f"cannot find the eager attention of {type(module).__name__}")
        return eager
    return ALL_ATTENTION_FUNCTIONS[implementation]


class ACT:
    """Attention Calibration Technique (Yu et al., ICML 2024) on chosen heads of a transformers model.

    During every forward, each chosen head's post-softmax attention map is recalibrated on the fly
    (input-adaptive): sinks beyond the first (``col_j > threshold``) keep ``beta`` of their attention and the
    rest goes back to the other tokens of the row in proportion.

    Args:
        heads (dict | list | str | None): the heads to calibrate: ``{layer: [heads]}``, ``(layer, head)`` pairs,
            ``"all"`` or ``None`` (calibration off). Default: None.
        threshold (float): sink threshold ``alpha``. Default: 0.1.
        beta (float): share of attention a sink keeps. Default: 0.4.
        keep_first (bool): never calibrate the first sink. Default: True.

    Example:
        >>> act = ACT(heads={3: [0, 5], 7: [2]}, threshold=0.1, beta=0.4)
        >>> with act.attach(model):
        ...     logits = model(**batch).logits
    """

    KIND = "component"  # icml24._contract

    def __init__(self, heads=None, threshold: float = 0.1, beta: float = 0.4, keep_first: bool = True):
        self.heads = heads
        self.calibration = AttentionCalibration(threshold=threshold, beta=beta, keep_first=keep_first)

    @contextlib.contextmanager
    def attach(self, model: nn.Module) -> Iterator[nn.Module]:
        """Context manager: within it ``model`` runs with ACT; on exit the model is restored exactly."""
        modules = attention_modules(model)
        num_heads = int(next(iter(modules.values())).config.num_attention_heads)
        selection = normalize_heads(self.heads, max(modules) + 1, num_heads)
        previous = model.config._attn_implementation
        if previous == ACT_IMPLEMENTATION:
            raise RuntimeError("ACT is already attached to this model; leave the other attach() block first")
        _register()
        for layer, module in modules.items():
            heads = torch.tensor(selection[layer], dtype=torch.long) if layer in selection else None
            setattr(module, _STATE, _LayerState(self.calibration if heads is not None else None, heads,
                                                _fallback_for(module, previous)))
        model.set_attn_implementation(ACT_IMPLEMENTATION)
        try:
            yield model
        finally:
            model.set_attn_implementation(previous)
            for module in modules.values():
                if hasattr(module, _STATE):
                    delattr(module, _STATE)

    def selected_heads(self, model: nn.Module) -> dict[int, list[int]]:
        """The ``{layer: heads}`` this ACT calibrates on ``model``."""
        modules = attention_modules(model)
        num_heads = int(next(iter(modules.values())).config.num_attention_heads)
        return normalize_heads(self.heads, max(modules) + 1, num_heads)

    def __repr__(self) -> str:
        c = self.calibration
        return f"ACT(heads={self.heads!r}, threshold={c.threshold}, beta={c.beta}, keep_first={c.keep_first})"


def layer_heads_pairs(selection: dict[int, Iterable[int]]) -> list[tuple[int, int]]:
    """``{layer: heads}`` -> sorted ``(layer, head)`` pairs."""
    return sorted((int(layer), int(h)) for layer, hs in selection.items() for h in hs)
