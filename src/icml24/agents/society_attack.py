"""The paper's border attack (App. D.2, Alg. 2-3): MI-FGSM on an h-pixel frame, against retriever and responder.

Loss = lam_R * L_R + lam_Q * L_Q + lam_A * L_A with L_R = -mean cos(CLIP_txt(plan), CLIP_img(V)) and L_Q, L_A the NLL
of the HARMFUL token under the question and answer prompts of the ensemble's chat records. Sign steps with momentum
0.95 change only the frame, with no pixel bound (images stay in [0, 1]). Every ``validate_every`` epochs the image is
validated on held-out records: once the jailbreak rate (JSR) reaches 98%, keep the epoch with the highest minimum CLIP
score; before that, the highest JSR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from .._random import RandomState, check_random_state
from .._validation import check_finite
from .society_models import TinyCLIP, TinyResponder, World, plan_tokens, prompt_tokens


@dataclass(frozen=True)
class ChatRecords:
    """Text side of benign chat records: questioner role, planned object, answerer role (one row per chat)."""

    q_roles: np.ndarray
    plan_classes: np.ndarray
    a_roles: np.ndarray

    def __len__(self) -> int:
        return len(self.q_roles)

    def subset(self, idx: np.ndarray) -> ChatRecords:
        return ChatRecords(self.q_roles[idx], self.plan_classes[idx], self.a_roles[idx])


def border_mask(size: int, border: int) -> torch.Tensor:
    """(1, 1, S, S) float mask, 1 on the ``border``-pixel frame and 0 inside."""
    mask = torch.ones(1, 1, size, size)
    if 2 * border < size:
        mask[..., border:size - border, border:size - border] = 0.0
    return mask


def _scores(clip: TinyCLIP, responder: TinyResponder, world: World, image: torch.Tensor,
            records: ChatRecords) -> tuple[float, float]:
    """(JSR over question and answer prompts, minimum plan-image CLIP score) on ``records``."""
    with torch.no_grad():
        sims = clip.encode_text(plan_tokens(world, records.q_roles, records.plan_classes)) @ clip.encode_image(image).T
        ask, answer = prompt_tokens(world, records.q_roles, "ask"), prompt_tokens(world, records.a_roles, "answer")
        prompts = torch.cat([ask, answer])
        out = responder(image.expand(len(prompts), -1, -1, -1), prompts).argmax(1)
    return float((out == world.harmful).float().mean()), float(sims.min())


def craft_border_attack(clip: TinyCLIP, responder: TinyResponder, world: World, image: torch.Tensor,
                        craft: ChatRecords, validate: ChatRecords, random_state: RandomState = None, *,
                        epochs: int = 100,
                        border: int = 1, step: float = 0.5 / 255, momentum: float = 0.95, batch: int = 4,
                        lambdas: tuple[float, float, float] = (1.0, 0.5, 0.5),
                        validate_every: int = 10) -> tuple[torch.Tensor, dict[str, float]]:
    """Return the adversarial image (1, 3, S, S) and its validation numbers (``val_jsr``, ``val_min_clip``...).

    ``random_state`` (None, an int or a numpy Generator) shuffles the crafting records every epoch."""
    check_finite("image", image)
    rng = check_random_state(random_state)
    x = image.detach().clone().reshape(1, 3, world.size, world.size)
    mask = border_mask(world.size, border)
    lam_r, lam_q, lam_a = lambdas
    with torch.no_grad():
        plan_emb = clip.encode_text(plan_tokens(world, craft.q_roles, craft.plan_classes))
    q_prompts = prompt_tokens(world, craft.q_roles, "ask")
    a_prompts = prompt_tokens(world, craft.a_roles, "answer")
    g = torch.zeros_like(x)
    best, best_key, best_epoch = x.clone(), (-1.0, -np.inf, -np.inf), 0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(craft))
        for start in range(0, len(order), batch):
            idx = torch.from_numpy(order[start:start + batch])
            xg = x.clone().requires_grad_(True)
            loss_r = -(plan_emb[idx] @ clip.encode_image(xg).T).mean()
            b = len(idx)
            logits = responder(xg.expand(2 * b, -1, -1, -1), torch.cat([q_prompts[idx], a_prompts[idx]]))
            nll = F.cross_entropy(logits, torch.full((2 * b,), world.harmful), reduction="none")
            loss_q, loss_a = nll[:b].mean(), nll[b:].mean()
            (grad,) = torch.autograd.grad(lam_r * loss_r + lam_q * loss_q + lam_a * loss_a, xg)
            g = momentum * g + grad / grad.abs().mean().clamp_min(1e-12)
            x = (x - step * g.sign() * mask).clamp(0.0, 1.0)
        if epoch % validate_every == 0 or epoch == epochs:
            jsr, min_clip = _scores(clip, responder, world, x, validate)
            key = (1.0, min_clip, 0.0) if jsr >= 0.98 else (0.0, jsr, min_clip)
            if key > best_key:
                best, best_key, best_epoch = x.clone(), key, epoch
    jsr, min_clip = _scores(clip, responder, world, best, validate)
    return best, {"val_jsr": jsr, "val_min_clip": min_clip, "best_epoch": float(best_epoch),
                  "max_pixel_change": float((best - image.reshape(best.shape)).abs().max())}
