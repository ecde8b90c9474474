"""Analytic training FLOPs of a subnetwork step, and a measured count to check it against.

Our accounting (the paper's exact formula is not public): matmul FLOPs only (2 per multiply-add), the causal
attention counted as the full T x T square (what the kernels and ``torch.utils.flop_counter`` count), and a
training step = forward + backward = 3 x forward. Embedding lookups, LayerNorm, softmax and GELU are left out.
"""

from __future__ import annotations

import torch

from .model import GPT, GPTConfig, Subnetwork
from .schedule import EvolvingSubnetworkSchedule, SubnetworkSampler


def layer_forward_flops(config: GPTConfig, heads: int, mlp_units: int, length: int) -> int:
    """Forward FLOPs per token of one block with ``heads`` heads and ``mlp_units`` hidden units at context
    ``length``: QKV 2*d*3*h*dh, output 2*h*dh*d, scores and mixing 2 * 2*T*h*dh, MLP 2 * 2*d*m."""
    d, inner = config.n_embd, heads * config.head_dim
    attention = 2 * d * 3 * inner + 2 * inner * d + 2 * 2 * length * inner
    return attention + 2 * 2 * d * mlp_units


def subnetwork_flops(config: GPTConfig, subnetwork: Subnetwork | None, batch: int, length: int,
                     backward: bool = True) -> int:
    """FLOPs of one step on ``batch`` sequences of ``length`` tokens (x3 with ``backward``): the active blocks
    plus the tied output head (2*d*V per token)."""
    subnetwork = subnetwork if subnetwork is not None else Subnetwork.full(config)
    per_token = 2 * config.n_embd * config.vocab_size
    for layer in subnetwork.layers:
        per_token += layer_forward_flops(config, subnetwork.num_heads(layer, config),
                                         subnetwork.num_mlp(layer, config), length)
    return per_token * batch * length * (3 if backward else 1)


def schedule_flops(config: GPTConfig, schedule: EvolvingSubnetworkSchedule, steps: int, batch: int,
                   length: int) -> int:
    """Total training FLOPs of ``steps`` steps under ``schedule`` (every step of a stage has the same shape)."""
    sampler = SubnetworkSampler(config, schedule)
    total = 0
    for step in range(steps):
        n_layers, n_heads, n_mlp = sampler.shape(schedule.stage(step, steps))
        per_token = 2 * config.n_embd * config.vocab_size + n_layers * layer_forward_flops(
            config, n_heads, n_mlp, length)
        total += per_token * batch * length * 3
    return total


def measured_flops(model: GPT, idx: torch.Tensor, targets: torch.Tensor, subnetwork: Subnetwork | None = None,
                   backward: bool = True) -> int:
    """FLOPs that ``torch.utils.flop_counter`` counts for one forward (and backward) pass; on CPU it only sees
    attention written as matmuls, so build the model with ``GPTConfig(attention="math")``."""
    from torch.utils.flop_counter import FlopCounterMode

    if model.config.attention != "math":
        raise ValueError("flop_counter cannot see CPU scaled_dot_product_attention; use GPTConfig(attention='math')")
    with FlopCounterMode(display=False) as counter:
        _, loss = model(idx, targets, subnetwork=subnetwork)
        if backward:
            loss.backward()
    model.zero_grad(set_to_none=True)
    return int(counter.get_total_flops())
