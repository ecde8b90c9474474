"""Module replacement: ``nn.Linear`` -> ``QuantLinear`` (fake-quantized weight and/or input), and back."""

from __future__ import annotations

import torch
from torch import nn


class QuantLinear(nn.Module):
    """A linear layer computing ``Q_a(x) @ Q_w(W).T + b`` with block formats along the input (reduction) dimension.

    The weight is fake-quantized once, here; the input at every forward. Either format may be ``None`` (kept in
    float32). Wraps, never copies, modelling code: the original layer is kept as ``self.original``.
    """

    def __init__(self, linear: nn.Linear, weight_format=None, act_format=None):
        super().__init__()
        if not isinstance(linear, nn.Linear):
            raise TypeError(f"QuantLinear wraps an nn.Linear, got {type(linear).__name__}")
        for name, fmt in (("weight_format", weight_format), ("act_format", act_format)):
            if fmt is not None and linear.in_features % fmt.block_size:
                raise ValueError(f"{name} block_size={fmt.block_size} does not divide in_features="
                                 f"{linear.in_features}; choose a block size that divides it")
        self.original = [linear]  # a list: not registered as a submodule (state_dict stays the original's)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight_format, self.act_format = weight_format, act_format
        w = linear.weight.detach()
        self.register_buffer("weight", weight_format.quantize(w) if weight_format is not None else w,
                             persistent=False)
        self.bias = linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.act_format is not None:
            x = self.act_format.quantize(x)
        return nn.functional.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, weight={self.weight_format!r}, "
                f"act={self.act_format!r}")


def _parent(model: nn.Module, name: str) -> tuple[nn.Module, str]:
    parent_name, _, child = name.rpartition(".")
    return (model.get_submodule(parent_name) if parent_name else model), child


def replace_linears(model: nn.Module, make: dict) -> dict[str, nn.Module]:
    """Put ``make[name]`` (a module) in place of each named submodule; return the originals, for ``restore``."""
    originals = {}
    for name, new in make.items():
        parent, child = _parent(model, name)
        originals[name] = getattr(parent, child)
        setattr(parent, child, new)
    return originals


def restore(model: nn.Module, originals: dict[str, nn.Module]) -> None:
    """Undo ``replace_linears``."""
    for name, module in originals.items():
        parent, child = _parent(model, name)
        setattr(parent, child, module)
