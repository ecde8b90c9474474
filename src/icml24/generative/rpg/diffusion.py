"""A small pixel-space text-to-image DDPM (Ho et al., 2020) with DDIM sampling and classifier-free guidance.

The local base model RPG is applied to. Training: eps-prediction on the cosine schedule, captions dropped with
probability ``cond_drop`` (the empty prompt is the unconditional one), an EMA of the weights for sampling.
Sampling: deterministic DDIM (eta = 0) over ``steps`` of the ``timesteps``; ``keep``/``known`` turn it into masked
re-diffusion (the kept pixels are re-noised from the known image at every step; RePaint without resampling).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
import torch.nn.functional as F

from icml24._estimator import Estimator
from icml24._random import torch_generator
from icml24._validation import FittedAttributes, check_finite, check_fitted, check_positive

from .scenes import MAX_TOKENS, VOCAB, tokenize
from .unet import TinyTextUNet


def cosine_alpha_bar(timesteps: int) -> torch.Tensor:
    """alpha_bar_t of Nichol & Dhariwal's cosine schedule for t = 1..T (index 0 is t = 1)."""
    s = 0.008
    t = torch.arange(timesteps + 1, dtype=torch.float64) / timesteps
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    betas = (1 - f[1:] / f[:-1]).clamp(max=0.999)
    return torch.cumprod(1 - betas, 0).float()


class TextDiffusion(FittedAttributes, Estimator):
    """Text-conditioned DDPM on 16 x 16 canvases.

    Args:
        channels: UNet width (first level; the lower levels have twice as many).
        text_dim: token embedding size.
        timesteps: diffusion steps T.
        train_steps: optimisation steps.
        batch_size: canvases per step.
        lr: learning rate.
        cond_drop: probability of training on the empty prompt (for classifier-free guidance).
        ema: EMA decay of the sampling weights.
        random_state (None | int | Generator): a numpy or torch Generator is used as is; initialization and
            training noise.
    """

    chunk_len = MAX_TOKENS  # tokens per prompt chunk

    def __init__(self, channels: int = 32, text_dim: int = 64, timesteps: int = 100, train_steps: int = 3000,
                 batch_size: int = 64, lr: float = 2e-3, cond_drop: float = 0.1, ema: float = 0.995,
                 random_state=None):
        self.channels, self.text_dim, self.timesteps = channels, text_dim, timesteps
        self.train_steps, self.batch_size, self.lr = train_steps, batch_size, lr
        self.cond_drop, self.ema, self.random_state = cond_drop, ema, random_state

    @property
    def alpha_bar(self) -> torch.Tensor:
        """alpha_bar_t of the cosine schedule for this ``timesteps``."""
        return cosine_alpha_bar(self.timesteps)

    def _new_model(self) -> TinyTextUNet:
        return TinyTextUNet(len(VOCAB), MAX_TOKENS, self.channels, self.text_dim)

    def fit(self, images, tokens) -> TextDiffusion:
        """Train on ``images`` (n, 3, 16, 16) in [-1, 1] with caption ``tokens`` (n, 12)."""
        images = torch.as_tensor(check_finite("images", np.asarray(images)), dtype=torch.float32)
        tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long)
        if images.ndim != 4 or images.shape[1:] != (3, 16, 16) or len(tokens) != len(images):
            raise ValueError(f"images must be (n, 3, 16, 16) with one token row each; got {tuple(images.shape)} "
                             f"and {tuple(tokens.shape)}")
        check_positive("train_steps", self.train_steps)
        generator, alpha_bar = torch_generator(self.random_state), self.alpha_bar
        with torch.random.fork_rng():
            torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
            model = self._new_model()
        ema = copy.deepcopy(model).requires_grad_(False)
        opt = torch.optim.AdamW(model.parameters(), lr=self.lr, weight_decay=0.0)
        warm, total = max(1, self.train_steps // 20), self.train_steps
        sched = torch.optim.lr_scheduler.LambdaLR(  # linear warm-up, cosine decay
            opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * s / total)))
        self.loss_history_ = []
        for _ in range(self.train_steps):
            idx = torch.randint(0, len(images), (self.batch_size,), generator=generator)
            x0, tok = images[idx], tokens[idx].clone()
            tok[torch.rand(len(idx), generator=generator) < self.cond_drop] = 0  # empty prompt
            t = torch.randint(0, self.timesteps, (len(idx),), generator=generator)
            eps = torch.randn(x0.shape, generator=generator)
            ab = alpha_bar[t][:, None, None, None]
            xt = ab.sqrt() * x0 + (1 - ab).sqrt() * eps  # forward process q(x_t | x_0)
            loss = F.mse_loss(model(xt, t, model.encode(tok)), eps)  # the simple eps loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.lerp_(pm, 1 - self.ema)
            self.loss_history_.append(float(loss.detach()))
        self.model_ = ema.eval()
        return self

    def state(self) -> dict:
        """Tensors and numbers to cache (``from_state`` rebuilds the fitted estimator)."""
        return {"config": {"channels": self.channels, "text_dim": self.text_dim, "timesteps": self.timesteps,
                           "train_steps": self.train_steps, "batch_size": self.batch_size, "lr": self.lr,
                           "cond_drop": self.cond_drop, "ema": self.ema},
                "weights": self.model_.state_dict(), "loss_history": torch.tensor(self.loss_history_)}

    @classmethod
    def from_state(cls, state: dict) -> TextDiffusion:
        est = cls(**state["config"])
        model = est._new_model()
        model.load_state_dict(state["weights"])
        est.model_ = model.eval().requires_grad_(False)
        est.loss_history_ = [float(v) for v in state["loss_history"]]
        return est

    @torch.no_grad()
    def encode(self, chunks: list[list[str]]) -> torch.Tensor:
        """Encode each sample's prompt chunks separately (each its own token window) and concatenate them:
        (B, n_chunks * 12, text_dim). ``[[prompt]]`` is the plain full-prompt context."""
        n = {len(c) for c in chunks}
        if len(n) != 1:
            raise ValueError("every sample needs the same number of chunks (base + regions)")
        flat = [p for c in chunks for p in c]
        tokens = torch.as_tensor(tokenize(flat, self.chunk_len))
        encoded = self.model_.encode(tokens)
        return encoded.reshape(len(chunks), -1, encoded.shape[-1])

    @torch.no_grad()
    def sample(self, context: torch.Tensor, random_state=None, steps: int = 20, guidance: float = 3.0,
               noise: torch.Tensor | None = None, known: torch.Tensor | None = None,
               keep: torch.Tensor | None = None) -> torch.Tensor:
        """DDIM samples (B, 3, 16, 16) for ``context``; the unconditional context is the empty prompt in as many
        chunks. With ``known`` images and a ``keep`` mask (B, 1, 16, 16) only the other pixels are regenerated.
        ``random_state``: None, an int, a numpy or torch Generator (used as is)."""
        check_fitted(self, "model_")
        generator, alpha_bar = torch_generator(random_state), self.alpha_bar
        if isinstance(steps, bool) or int(steps) != steps or not 1 <= steps <= self.timesteps:
            raise ValueError(f"steps must be an integer in [1, {self.timesteps}] (DDIM steps of the {self.timesteps}"
                             f"-step schedule), got {steps!r}; steps=0 would return the input noise unchanged")
        if not math.isfinite(float(guidance)):
            raise ValueError(f"guidance must be a finite classifier-free guidance scale (e.g. 3.0), got {guidance!r}")
        check_finite("context", context)
        if noise is not None:
            check_finite("noise", noise)
        model = self.model_
        b, n_tokens = context.shape[0], context.shape[1]
        empty = self.encode([[""] * (n_tokens // self.chunk_len)])
        uncond = empty.expand(b, -1, -1)
        x = noise.clone() if noise is not None else torch.randn((b, 3, 16, 16), generator=generator)
        if known is not None:
            fixed_eps = torch.randn(x.shape, generator=generator)
        times = np.linspace(self.timesteps - 1, 0, int(steps)).round().astype(int)
        for k, t in enumerate(times):
            ab = alpha_bar[t]
            if known is not None:  # masked re-diffusion: kept pixels follow the known image's forward process
                x = torch.where(keep, ab.sqrt() * known + (1 - ab).sqrt() * fixed_eps, x)
            tt = torch.full((2 * b,), int(t))
            eps_c, eps_u = model(torch.cat([x, x]), tt, torch.cat([context, uncond])).chunk(2)
            eps = eps_u + guidance * (eps_c - eps_u)  # classifier-free guidance
            x0 = ((x - (1 - ab).sqrt() * eps) / ab.sqrt()).clamp(-1, 1)
            ab_prev = alpha_bar[times[k + 1]] if k + 1 < len(times) else torch.tensor(1.0)
            eps = (x - ab.sqrt() * x0) / (1 - ab).sqrt()
            x = ab_prev.sqrt() * x0 + (1 - ab_prev).sqrt() * eps  # DDIM, eta = 0
        if known is not None:
            x = torch.where(keep, known, x)
        return x
