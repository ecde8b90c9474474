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


class FixedConditionScore:
    """``ScoreTransformer.forward`` specialised for sampling: one condition mask and one attention mask for every
    row, one diffusion time per call. The same numbers as ``forward`` up to float rounding, at a lower cost:

    - what the sampler never changes is built once: the tokens' id and condition parts, the additive attention mask;
    - every row shares ``t``, so the time embedding and each block's ``GELU(Linear(t_emb))`` are computed once per
      call instead of once per row;
    - attention is two batched matrix products (``baddbmm`` adds the mask), cheaper on CPU for tokens this short
      than ``scaled_dot_product_attention``;
    - with ``free_only``, the last block computes queries, MLP and head for the free tokens only: the observed tokens'
      outputs are multiplied by ``1 - M_C = 0`` in every sampler, so their scores are returned as 0.

    Args:
        network: a trained ``ScoreTransformer``.
        condition_mask: ``[n]`` bool, ``True`` = observed.
        attention_mask: ``None`` (dense) or ``[n, n]`` bool, row attends to column.
        free_only: skip the observed tokens in the last block (their score is returned as 0).
    """

    def __init__(self, network: ScoreTransformer, condition_mask: Tensor, attention_mask: Tensor | None = None,
                 free_only: bool = True):
        n, device = network.num_nodes, network.node_embedding.device
        mask = torch.as_tensor(condition_mask, device=device).reshape(-1).bool()
        if mask.shape[0] != n:
            raise ValueError(f"condition_mask needs {n} entries, got {mask.shape[0]}")
        self.network, self.free_only = network, free_only
        dtype = network.node_embedding.dtype
        id_dim, condition_dim = network.node_embedding.shape[1], network.condition_embedding.shape[0]
        with torch.no_grad():
            condition = mask[:, None].to(dtype) * network.condition_embedding
            self.fixed = torch.cat([network.node_embedding, torch.zeros(n, network.value_dim, dtype=dtype,
                                                                        device=device), condition], dim=-1)
        # token = fixed + x * value_slots: exact (the value slots of `fixed` are 0, the other slots are multiplied by 0)
        self.value_slots = torch.cat([torch.zeros(id_dim), torch.ones(network.value_dim),
                                      torch.zeros(condition_dim)]).to(dtype=dtype, device=device)
        self.free = torch.nonzero(~mask).reshape(-1)
        self.additive = None
        if attention_mask is not None:
            allowed = torch.as_tensor(attention_mask, device=device).reshape(n, n).bool()
            self.additive = torch.zeros(n, n, dtype=dtype, device=device).masked_fill(~allowed, float("-inf"))

    def __call__(self, x_t: Tensor, t: Tensor, std: Tensor) -> Tensor:
        """Score ``[batch, n]`` at ``x_t: [batch, n]``, times ``t`` (one value, or ``[batch]`` all equal) and the
        marginal std ``sigma(t)`` (same shapes)."""
        network, batch = self.network, x_t.shape[0]
        t_one, std_one = t.reshape(-1)[:1], std.reshape(-1)[:1]
        h = self.fixed + x_t[..., None] * self.value_slots
        time_embedding = network.time_embedding(t_one)  # [1, time_dim]: every row shares t
        last = len(network.blocks) - 1
        for index, block in enumerate(network.blocks):
            rows = self.free if self.free_only and index == last else None
            h = _fixed_block(block, h, F.gelu(block.time(time_embedding)), self.additive, rows)
        out = network.head(network.norm(h)).squeeze(-1) / torch.clamp(std_one, min=network.min_output_scale)
        if not self.free_only:
            return out
        score = torch.zeros(batch, network.num_nodes, dtype=out.dtype, device=out.device)
        score[:, self.free] = out
        return score


def _fixed_block(block: SimformerBlock, h: Tensor, time_bias: Tensor, additive: Tensor | None,
                 rows: Tensor | None) -> Tensor:
    """One ``SimformerBlock`` with a shared time bias ``[1, d]``; ``rows``: compute only these tokens' outputs."""
    batch, nodes, _ = h.shape
    heads, size = block.num_heads, block.head_dim
    qkv = block.qkv(block.norm_attention(h)).view(batch, nodes, 3, heads, size)
    if rows is not None:
        h, queries, additive = h[:, rows], qkv[:, rows, 0], None if additive is None else additive[rows]
    else:
        queries = qkv[:, :, 0]
    count = queries.shape[1]
    q = queries.transpose(1, 2).reshape(batch * heads, count, size)
    k = qkv[:, :, 1].transpose(1, 2).reshape(batch * heads, nodes, size)
    v = qkv[:, :, 2].transpose(1, 2).reshape(batch * heads, nodes, size)
    scale = size**-0.5
    if additive is None:
        logits = torch.bmm(q, k.transpose(1, 2)).mul_(scale)
    else:
        logits = torch.baddbmm(additive, q, k.transpose(1, 2), alpha=scale)
    attended = torch.bmm(torch.softmax(logits, dim=-1), v).view(batch, heads, count, size).transpose(1, 2)
    h = h + block.out(attended.reshape(batch, count, heads * size))
    return h + block.mlp(block.norm_mlp(h)) + time_bias
