"""A tiny text-conditioned UNet with cross-attention (the local stand-in for Stable Diffusion's UNet).

Text: word + position embeddings and one transformer layer (so padding tokens carry the prompt, as CLIP's do).
Image: a three-level conv UNet (16 -> 8 -> 4) with a cross-attention layer after every residual block but the first
(four layers: 8 x 8 down, 4 x 4 middle, 8 x 8 and 16 x 16 up); each
cross-attention module exposes diffusers' processor interface (``processor``, ``set_processor``), so the regional
hook attaches to it exactly as to a diffusers ``attn2``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class AttnProcessor:
    """Plain multi-head scaled dot-product attention of ``hidden_states`` over ``encoder_hidden_states``."""

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, **kwargs):
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        b, n, _ = hidden_states.shape
        q = attn.to_q(hidden_states).reshape(b, n, attn.heads, -1).transpose(1, 2)
        k = attn.to_k(context).reshape(b, context.shape[1], attn.heads, -1).transpose(1, 2)
        v = attn.to_v(context).reshape(b, context.shape[1], attn.heads, -1).transpose(1, 2)
        weights = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5  # plain softmax(QK^T / sqrt(d)) V: faster
        if attention_mask is not None:  # than the CPU flash kernel at these sizes
            weights = weights + attention_mask
        out = weights.softmax(-1) @ v
        return attn.to_out(out.transpose(1, 2).reshape(b, n, -1))


class CrossAttention(nn.Module):
    is_cross_attention = True

    def __init__(self, dim: int, context_dim: int, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(context_dim, dim, bias=False)
        self.to_v = nn.Linear(context_dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.processor = AttnProcessor()

    def set_processor(self, processor) -> None:
        self.processor = processor

    def forward(self, hidden_states, encoder_hidden_states):
        return self.processor(self, hidden_states, encoder_hidden_states)


class TextEncoder(nn.Module):
    def __init__(self, vocab_size: int, length: int, dim: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, dim)
        self.positions = nn.Parameter(torch.randn(length, dim) * 0.02)
        self.layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=2 * dim, dropout=0.0,
                                                batch_first=True, norm_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.norm(self.layer(self.tokens(tokens) + self.positions[: tokens.shape[1]]))


class ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, t_dim: int):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, c_in), nn.Conv2d(c_in, c_out, 3, padding=1)
        self.time = nn.Linear(t_dim, c_out)
        self.norm2, self.conv2 = nn.GroupNorm(8, c_out), nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x))) + self.time(t)[:, :, None, None]
        return self.skip(x) + self.conv2(F.silu(self.norm2(h)))


class CrossAttentionBlock(nn.Module):
    """x + CrossAttn(norm(x) + position, text): a learned 2-D position lets full prompts route words to places."""

    def __init__(self, channels: int, context_dim: int, size: int):
        super().__init__()
        self.norm = nn.GroupNorm(8, channels)
        self.position = nn.Parameter(torch.randn(size * size, channels) * 0.02)
        self.attn2 = CrossAttention(channels, context_dim)

    def forward(self, x, context):
        b, c, h, w = x.shape
        q = self.norm(x).flatten(2).transpose(1, 2) + self.position
        return x + self.attn2(q, context).transpose(1, 2).reshape(b, c, h, w)


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class TinyTextUNet(nn.Module):
    """eps_theta(x_t, t, c) on 16 x 16 RGB canvases; ``context`` is the encoded text (B, tokens, text_dim)."""

    def __init__(self, vocab_size: int, length: int, channels: int = 32, text_dim: int = 64, size: int = 16):
        super().__init__()
        c1, c2, t_dim = channels, 2 * channels, 4 * channels
        self.text = TextEncoder(vocab_size, length, text_dim)
        self.t_dim = t_dim
        self.time = nn.Sequential(nn.Linear(t_dim, t_dim), nn.SiLU(), nn.Linear(t_dim, t_dim))
        self.conv_in = nn.Conv2d(3, c1, 3, padding=1)
        self.down1 = ResBlock(c1, c1, t_dim)
        self.down2, self.attn_d2 = ResBlock(c1, c2, t_dim), CrossAttentionBlock(c2, text_dim, size // 2)
        self.mid, self.attn_mid = ResBlock(c2, c2, t_dim), CrossAttentionBlock(c2, text_dim, size // 4)
        self.up2, self.attn_u2 = ResBlock(2 * c2, c2, t_dim), CrossAttentionBlock(c2, text_dim, size // 2)
        self.up1, self.attn_u1 = ResBlock(c2 + c1, c1, t_dim), CrossAttentionBlock(c1, text_dim, size)
        self.out = nn.Sequential(nn.GroupNorm(8, c1), nn.SiLU(), nn.Conv2d(c1, 3, 3, padding=1))

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.text(tokens)

    def forward(self, x: torch.Tensor, t: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        temb = self.time(timestep_embedding(t, self.t_dim))
        h1 = self.down1(self.conv_in(x), temb)  # 16 x 16
        h2 = self.attn_d2(self.down2(F.avg_pool2d(h1, 2), temb), context)  # 8 x 8
        h = self.attn_mid(self.mid(F.avg_pool2d(h2, 2), temb), context)  # 4 x 4
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = self.attn_u2(self.up2(torch.cat([h, h2], 1), temb), context)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = self.attn_u1(self.up1(torch.cat([h, h1], 1), temb), context)
        return self.out(h)
