"""Which linear layers a model has, and the inputs they see on calibration tokens (forward pre-hooks)."""

from __future__ import annotations

import torch
from torch import nn

from icml24._validation import check_finite


def linear_layers(model: nn.Module, exclude: tuple[str, ...] = ("lm_head",)) -> dict[str, nn.Linear]:
    """Every ``nn.Linear`` of ``model`` by qualified name, except names containing one of ``exclude``."""
    return {name: m for name, m in model.named_modules()
            if isinstance(m, nn.Linear) and not any(part in name for part in exclude)}


@torch.no_grad()
def collect_linear_inputs(model: nn.Module, input_ids: torch.Tensor, names: list[str] | None = None,
                          batch_size: int = 8) -> dict[str, torch.Tensor]:
    """The inputs of each linear layer on ``input_ids`` ([sequences, tokens]), flattened to ``[tokens, in_features]``.

    Args:
        model: any module whose ``forward(input_ids)`` runs its linear layers (a Hugging Face causal LM).
        input_ids (LongTensor): calibration token ids, one row per sequence.
        names (list[str] | None): which layers (default: ``linear_layers``).
        batch_size (int): sequences per forward.

    Returns:
        dict name -> float32 tensor ``[sequences * tokens, in_features]``.
    """
    if input_ids.dim() != 2 or input_ids.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"input_ids must be a 2-D integer tensor [sequences, tokens], got {tuple(input_ids.shape)} "
                         f"{input_ids.dtype}")
    modules = linear_layers(model) if names is None else {n: dict(model.named_modules())[n] for n in names}
    seen: dict[str, list[torch.Tensor]] = {n: [] for n in modules}
    hooks = [m.register_forward_pre_hook(lambda _m, args, n=n: seen[n].append(args[0].detach().float()
                                                                            .reshape(-1, args[0].shape[-1])))
             for n, m in modules.items()]
    try:
        for start in range(0, input_ids.shape[0], batch_size):
            model(input_ids[start:start + batch_size])
    finally:
        for h in hooks:
            h.remove()
    out = {n: torch.cat(chunks) for n, chunks in seen.items() if chunks}
    for n, x in out.items():
        check_finite(f"the calibration inputs of {n}", x)
    return out
