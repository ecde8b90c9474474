"""The Simformer's score network: a transformer over one token per variable (Gloeckler et al., ICML 2024, Sec. 3).

Token of node ``i`` (the "concat" tokenizer): ``[node_embedding(i) (id_dim) | value_i repeated value_dim times |
condition_embedding * M_C,i (condition_dim)]``. Diffusion time enters every MLP block as ``GELU(Linear(fourier(t)))``.
Pre-LayerNorm blocks ``h += MHA(LN(h), attention_mask)``, ``h += MLP(LN(h)) + GELU(Linear(t_emb))``, a final
LayerNorm and ``Linear(1)`` per token; the output is divided by ``sigma(t)`` (clipped at ``min_output_scale``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class GaussianFourierEmbedding(nn.Module):
    """Fixed random Fourier features of time: ``[cos(2 pi t B), sin(2 pi t B)]`` with ``B ~ N(0, 1)`` (not trained)."""

    def __init__(self, dim: int = 128):
        super().__init__()
        self.register_buffer("frequencies", torch.randn(dim // 2))

    def forward(self, t: Tensor) -> Tensor:  # t: [batch] -> [batch, dim]
        angles = 2 * math.pi * t[:, None] * self.frequencies[None, :]
        return torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1)


class SimformerBlock(nn.Module):
    """One pre-LayerNorm transformer block with masked multi-head attention and a time-conditioned MLP."""

    def __init__(self, model_dim: int, num_heads: int, head_dim: int, widening_factor: int, time_dim: int):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, head_dim
        self.norm_attention = nn.LayerNorm(model_dim)
        self.qkv = nn.Linear(model_dim, 3 * num_heads * head_dim)
        self.out = nn.Linear(num_heads * head_dim, model_dim)
        self.norm_mlp = nn.LayerNorm(model_dim)
        self.mlp = nn.Sequential(nn.Linear(model_dim, widening_factor * model_dim), nn.GELU(),
                                 nn.Linear(widening_factor * model_dim, model_dim))
        self.time = nn.Linear(time_dim, model_dim)

    def forward(self, h: Tensor, time_embedding: Tensor, mask: Tensor | None) -> Tensor:
        batch, nodes, _ = h.shape
        q, k, v = self.qkv(self.norm_attention(h)).view(batch, nodes, 3, self.num_heads, self.head_dim).unbind(2)
        attended = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                  attn_mask=mask)  # mask: [batch or 1, 1, nodes, nodes], True=attend
        h = h + self.out(attended.transpose(1, 2).reshape(batch, nodes, -1))
        return h + self.mlp(self.norm_mlp(h)) + F.gelu(self.time(time_embedding))[:, None, :]


class ScoreTransformer(nn.Module):
    """Score network ``s(x_t, t, M_C, M_E) -> [batch, num_nodes]``.

    Args:
        num_nodes (int): number of scalar variables (tokens).
        id_dim (int): node-id embedding size (default 20).
        value_dim (int): times the value is repeated in the token (default 20).
        condition_dim (int): condition embedding size (default 10, initialised ``N(0, 0.1^2)``).
        num_layers (int): transformer blocks (default 6, the paper's "small" model).
        num_heads (int): attention heads (default 4).
        head_dim (int): key/query/value size per head (default 10).
        widening_factor (int): MLP hidden width / model width (default 3).
        time_dim (int): Fourier time-embedding size (default 128).
        min_output_scale (float): lower clip of ``sigma(t)`` in the output scaling (default ``1e-3``).
    """

    def __init__(self, num_nodes: int, id_dim: int = 20, value_dim: int = 20, condition_dim: int = 10,
                 num_layers: int = 6, num_heads: int = 4, head_dim: int = 10, widening_factor: int = 3,
                 time_dim: int = 128, min_output_scale: float = 1e-3):
        super().__init__()
        self.num_nodes, self.value_dim, self.min_output_scale = num_nodes, value_dim, min_output_scale
        model_dim = id_dim + value_dim + condition_dim
        self.node_embedding = nn.Parameter(torch.randn(num_nodes, id_dim))
        self.condition_embedding = nn.Parameter(0.1 * torch.randn(condition_dim))
        self.time_embedding = GaussianFourierEmbedding(time_dim)
        self.blocks = nn.ModuleList(
            SimformerBlock(model_dim, num_heads, head_dim, widening_factor, time_dim) for _ in range(num_layers))
        self.norm = nn.LayerNorm(model_dim)
        self.head = nn.Linear(model_dim, 1)

    def tokens(self, x_t: Tensor, condition_mask: Tensor) -> Tensor:
        """Token matrix ``[batch, num_nodes, model_dim]``."""
        batch = x_t.shape[0]
        node = self.node_embedding[None].expand(batch, -1, -1)
        value = x_t[..., None].expand(-1, -1, self.value_dim)
        condition = condition_mask[..., None].to(x_t.dtype) * self.condition_embedding
        return torch.cat([node, value, condition], dim=-1)

    def forward(self, x_t: Tensor, t: Tensor, condition_mask: Tensor, std: Tensor,
                attention_mask: Tensor | None = None) -> Tensor:
        """Score estimate ``[batch, num_nodes]``.

        Args:
            x_t: ``[batch, num_nodes]`` noisy values (observed nodes hold their clean values).
            t: ``[batch]`` diffusion times.
            condition_mask: ``[batch, num_nodes]`` bool, ``True`` = observed.
            std: ``[batch]`` marginal std ``sigma(t)`` of the SDE (the output is divided by it).
            attention_mask: ``None`` (dense), ``[n, n]`` or ``[batch, n, n]`` bool, row attends to column.
        """
        if attention_mask is not None:
            attention_mask = attention_mask.reshape(-1, 1, self.num_nodes, self.num_nodes)
        time_embedding = self.time_embedding(t)
        h = self.tokens(x_t, condition_mask)
        for block in self.blocks:
            h = block(h, time_embedding, attention_mask)
        out = self.head(self.norm(h)).squeeze(-1)
        return out / torch.clamp(std, min=self.min_output_scale)[:, None]
