"""A small GPT whose forward runs a sampled subnetwork (Li et al., ICML 2024, Evolving Subnetwork Training, Fig. 1).

The subnetwork is realised by slicing weights and skipping blocks, so a smaller subnetwork really costs fewer
FLOPs; ``mode="mask"`` runs the full computation and zeroes the dropped heads/neurons instead (same output, no
saving), as a reference for tests and the benchmark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from icml24._random import torch_generator


@dataclass(frozen=True)
class GPTConfig:
    """Architecture of the byte/char-level GPT (nanoGPT layout, pre-LayerNorm, no biases in linear layers).

    ``attention="math"`` computes attention with explicit matmuls (what ``torch.utils.flop_counter`` can see on
    CPU); ``"sdpa"`` uses ``F.scaled_dot_product_attention`` (faster, same result)."""

    vocab_size: int = 256
    block_size: int = 128
    n_layer: int = 6
    n_head: int = 8
    n_embd: int = 256
    mlp_ratio: int = 4
    attention: str = "sdpa"

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "mlp_ratio"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive int, got {getattr(self, name)}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")
        if self.attention not in ("sdpa", "math"):
            raise ValueError(f"attention must be 'sdpa' or 'math', got {self.attention!r}")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_mlp(self) -> int:
        return self.mlp_ratio * self.n_embd


@dataclass
class Subnetwork:
    """Which parts of the model one step trains.

    Attributes:
        layers: active block indices (ascending); a skipped block is the identity on the residual stream.
        heads: per block (length ``n_layer``), a LongTensor of active head indices, or ``None`` for all heads.
        mlp: per block, a LongTensor of active hidden-unit indices, or ``None`` for the whole MLP.
    """

    layers: tuple[int, ...]
    heads: tuple[torch.Tensor | None, ...]
    mlp: tuple[torch.Tensor | None, ...]

    @classmethod
    def full(cls, config: GPTConfig) -> Subnetwork:
        """The complete model (stage 3 of the schedule)."""
        return cls(tuple(range(config.n_layer)), (None,) * config.n_layer, (None,) * config.n_layer)

    def validate(self, config: GPTConfig) -> Subnetwork:
        """Raise ValueError naming the fix if the subnetwork does not fit ``config``; return self."""
        if len(self.heads) != config.n_layer or len(self.mlp) != config.n_layer:
            raise ValueError(f"heads and mlp need one entry per layer ({config.n_layer}); got "
                             f"{len(self.heads)} and {len(self.mlp)}")
        if not self.layers:
            raise ValueError("layers is empty: a subnetwork needs at least one active layer (the paper keeps the "
                             "first and last blocks)")
        if any(isinstance(i, bool) or not isinstance(i, int) for i in self.layers):
            raise ValueError(f"layers must be ints, got {self.layers}")
        if list(self.layers) != sorted(set(self.layers)):
            raise ValueError(f"layers must be ascending and distinct (sort them, drop repeats), got {self.layers}")
        if self.layers[0] < 0 or self.layers[-1] >= config.n_layer:
            raise ValueError(f"layer indices must lie in [0, {config.n_layer}), got {self.layers}")
        for what, entries, size in (("heads", self.heads, config.n_head), ("mlp", self.mlp, config.n_mlp)):
            for layer, idx in enumerate(entries):
                if idx is None:
                    continue
                if not torch.is_tensor(idx) or idx.dtype not in (torch.int64, torch.int32) or idx.ndim != 1:
                    raise ValueError(f"{what}[{layer}] must be a 1-d integer (long) index tensor or None")
                if idx.numel() == 0 or int(idx.min()) < 0 or int(idx.max()) >= size:
                    raise ValueError(f"{what}[{layer}] must be a non-empty 1-d index tensor into [0, {size})")
                if int(idx.unique().numel()) != int(idx.numel()):  # a repeat would count twice in output and FLOPs
                    raise ValueError(f"{what}[{layer}] repeats an index ({idx.tolist()}); each may appear once")
        return self

    def num_heads(self, layer: int, config: GPTConfig) -> int:
        idx = self.heads[layer]
        return config.n_head if idx is None else int(idx.numel())

    def num_mlp(self, layer: int, config: GPTConfig) -> int:
        idx = self.mlp[layer]
        return config.n_mlp if idx is None else int(idx.numel())


def _head_rows(heads: torch.Tensor, head_dim: int) -> torch.Tensor:
    """Row indices of the chosen heads inside a (n_head * head_dim)-sized projection."""
    return (heads[:, None] * head_dim + torch.arange(head_dim, device=heads.device)).reshape(-1)


class Block(nn.Module):
    """Pre-LN transformer block: x + (1/p_H) MHA_I_H(LN x), then x + (1/p_M) MLP_I_M(LN x)."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        d = config.n_embd
        self.ln_1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, config.n_mlp, bias=False)
        self.out = nn.Linear(config.n_mlp, d, bias=False)

    def attention(self, x: torch.Tensor, heads: torch.Tensor | None, mode: str) -> torch.Tensor:
        cfg = self.config
        batch, length, d = x.shape
        w_qkv, w_o, n_active, scale = self.qkv.weight, self.proj.weight, cfg.n_head, 1.0
        if heads is not None and mode == "slice":
            rows = _head_rows(heads, cfg.head_dim)
            w_qkv = w_qkv.index_select(0, torch.cat([rows, rows + d, rows + 2 * d]))  # W_Q, W_K, W_V of I_H
            w_o = w_o.index_select(1, rows)  # W_O of I_H
            n_active = int(heads.numel())
        if heads is not None:
            scale = cfg.n_head / int(heads.numel())  # 1 / p_H
        q, k, v = F.linear(x, w_qkv).split(n_active * cfg.head_dim, dim=2)
        q, k, v = (t.view(batch, length, n_active, cfg.head_dim).transpose(1, 2) for t in (q, k, v))
        if cfg.attention == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(cfg.head_dim)
            causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
            y = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1) @ v
        if heads is not None and mode == "mask":
            keep = torch.zeros(cfg.n_head, dtype=y.dtype, device=y.device).index_fill(0, heads, 1.0)
            y = y * keep.view(1, -1, 1, 1)
        y = y.transpose(1, 2).reshape(batch, length, n_active * cfg.head_dim)
        out = F.linear(y, w_o)
        return out * scale if scale != 1.0 else out  # MHA equation: (1/p_H) sum_{i in I_H} head_i W_O^i

    def mlp(self, x: torch.Tensor, units: torch.Tensor | None, mode: str) -> torch.Tensor:
        w1, w2 = self.fc.weight, self.out.weight
        if units is None:
            return F.linear(F.gelu(F.linear(x, w1)), w2)
        scale = self.config.n_mlp / int(units.numel())  # 1 / p_M
        if mode == "slice":
            hidden = F.gelu(F.linear(x, w1.index_select(0, units)))  # sigma(X W1[:, I_M])
            return F.linear(hidden, w2.index_select(1, units)) * scale  # MLP equation: (1/p_M) ... W2[I_M, :]
        keep = torch.zeros(self.config.n_mlp, dtype=x.dtype, device=x.device).index_fill(0, units, 1.0)
        return F.linear(F.gelu(F.linear(x, w1)) * keep, w2) * scale

    def forward(self, x: torch.Tensor, heads: torch.Tensor | None = None, units: torch.Tensor | None = None,
                mode: str = "slice") -> torch.Tensor:
        x = x + self.attention(self.ln_1(x), heads, mode)
        return x + self.mlp(self.ln_2(x), units, mode)


class GPT(nn.Module):
    """Decoder-only transformer with tied input/output embeddings; ``forward(idx, subnetwork=...)`` trains a part.

    Initialisation follows GPT-2 (normal(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)) and draws
    only from ``random_state`` (None, an int, a numpy or torch Generator), never from torch's global stream.
    """

    def __init__(self, config: GPTConfig, random_state=None):
        super().__init__()
        self.config = config
        with torch.random.fork_rng(devices=[]):  # torch's default init draws globally; ours replaces it below
            self.wte = nn.Embedding(config.vocab_size, config.n_embd)
            self.wpe = nn.Embedding(config.block_size, config.n_embd)
            self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
            self.ln_f = nn.LayerNorm(config.n_embd)
        generator = torch_generator(random_state)
        residual_std = 0.02 / math.sqrt(2 * config.n_layer)
        for name, param in self.named_parameters():
            if param.ndim == 2:
                std = residual_std if name.endswith(("proj.weight", "out.weight")) else 0.02
                nn.init.normal_(param, 0.0, std, generator=generator)

    def num_params(self, embeddings: bool = True) -> int:
        total = sum(p.numel() for p in self.parameters())
        return total if embeddings else total - self.wte.weight.numel() - self.wpe.weight.numel()

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, subnetwork: Subnetwork | None = None,
                mode: str = "slice") -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits (batch, length, vocab) and, with ``targets``, the mean cross-entropy in nats/token.

        ``subnetwork=None`` is the plain full model; ``mode`` is ``"slice"`` (real saving) or ``"mask"``.
        """
        if mode not in ("slice", "mask"):
            raise ValueError(f"mode must be 'slice' or 'mask', got {mode!r}")
        if idx.ndim != 2 or idx.shape[1] > self.config.block_size:
            raise ValueError(f"idx must be (batch, length <= {self.config.block_size}), got {tuple(idx.shape)}")
        if subnetwork is not None:
            if not isinstance(subnetwork, Subnetwork):
                raise ValueError(f"subnetwork must be a Subnetwork or None, got {type(subnetwork).__name__}")
            subnetwork.validate(self.config)  # unsorted/empty layers, repeated heads or units: a clear error
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        if subnetwork is None:
            for block in self.blocks:
                x = block(x)
        elif mode == "slice":
            for layer in subnetwork.layers:  # layers outside I_L: identity on the residual stream (skipped)
                x = self.blocks[layer](x, subnetwork.heads[layer], subnetwork.mlp[layer], mode)
        else:  # zero-masking: every block is computed, an inactive block's update is multiplied by 0
            active = set(subnetwork.layers)
            for layer, block in enumerate(self.blocks):
                y = block(x, subnetwork.heads[layer], subnetwork.mlp[layer], mode)
                x = y if layer in active else x + (y - x) * 0.0
        logits = F.linear(self.ln_f(x), self.wte.weight)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
