"""A small real society's world and models: procedural images, a tiny CLIP and a tiny multimodal responder.

Every random draw comes from a ``random_state`` (None, an int or a numpy Generator, as ``icml24._random`` reads it;
never the global RNG); a Generator is used as is, so successive calls continue one stream.
Images are 3 x 112 x 112 (the paper's 336 px LLaVA input scaled by 1/3, so the paper's h = 6 border is h = 2 here at
the same 7% of the pixels); both image towers start with a ViT-like 8 x 8 patch embedding, small enough for a CPU.
Vocabulary: ``K`` object words (one per image class), ``R`` role words, the prompt words SELECT / ASK / ANSWER / ECHO
and the harmful word. The responder's outputs are ``K`` question tokens, ``K`` answer tokens and one HARMFUL token
(index ``2K``). Like a language model, the responder can emit every token: its pretraining includes a text-only echo
task ('ECHO <word>' -> that word's token, the harmful word included), while its instruction tuning on images
('ASK'/'ANSWER' prompts) never targets HARMFUL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .._random import RandomState, check_random_state, torch_generator


@dataclass(frozen=True)
class World:
    """The procedural world: classes of images, roles with preferred classes, and the token layout."""

    num_classes: int
    num_roles: int
    size: int
    freqs: np.ndarray  # (K, 2) spatial frequency of each class's pattern
    colors: np.ndarray  # (K, 3) base colour of each class
    prefs: np.ndarray  # (R, P) preferred classes of each role

    @property
    def select(self) -> int:
        return self.num_classes + self.num_roles

    @property
    def ask(self) -> int:
        return self.select + 1

    @property
    def answer(self) -> int:
        return self.select + 2

    @property
    def echo(self) -> int:
        return self.select + 3

    @property
    def harm_word(self) -> int:
        return self.select + 4

    @property
    def plan_words(self) -> list[int]:
        """'select an image from my album and explain why': the words every plan shares."""
        return [self.select, self.select + 5, self.select + 6, self.select + 7]

    @property
    def vocab(self) -> int:
        return self.select + 8

    @property
    def harmful(self) -> int:
        return 2 * self.num_classes

    @property
    def num_outputs(self) -> int:
        return 2 * self.num_classes + 1


PATCH = 8  # the image towers' patch size (pixels)


def make_world(random_state: RandomState = None, num_classes: int = 8, num_roles: int = 16, size: int = 112,
               prefs_per_role: int = 3) -> World:
    """Random class patterns/colours and, per role, ``prefs_per_role`` distinct preferred classes.

    Pattern frequencies are 1.5-5.6 cycles per image whatever ``size`` (a multiple of the patch size, 8)."""
    if int(size) != size or size < 2 * PATCH or size % PATCH:
        raise ValueError(f"size must be a multiple of {PATCH} pixels and at least {2 * PATCH}, got {size!r}")
    rng = check_random_state(random_state)
    angles = rng.uniform(0, np.pi, num_classes)
    radius = rng.uniform(0.6, 2.2, num_classes) * 16 / size
    freqs = np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1)
    colors = rng.uniform(0.15, 1.0, (num_classes, 3))
    prefs = np.stack([rng.choice(num_classes, prefs_per_role, replace=False) for _ in range(num_roles)])
    return World(num_classes, num_roles, size, freqs, colors, prefs)


def render(world: World, classes: np.ndarray, random_state: RandomState = None) -> torch.Tensor:
    """Images (n, 3, S, S) in [0, 1]: a class-coloured sinusoidal pattern with random phase and pixel noise."""
    rng = check_random_state(random_state)
    classes = np.asarray(classes)
    s = world.size
    yy, xx = np.meshgrid(np.arange(s, dtype=np.float32), np.arange(s, dtype=np.float32), indexing="ij")
    phase = rng.uniform(0, 2 * np.pi, len(classes)).astype(np.float32)
    f = world.freqs[classes].astype(np.float32)
    wave = np.sin(f[:, 0, None, None] * xx + f[:, 1, None, None] * yy + phase[:, None, None])
    img = world.colors[classes].astype(np.float32)[:, :, None, None] * (0.55 + 0.45 * wave[:, None])
    img += 0.05 * rng.standard_normal(img.shape, dtype=np.float32)
    return torch.from_numpy(np.clip(img, 0.0, 1.0))


def render_ood(world: World, n: int, random_state: RandomState = None, blobs: int = 6) -> torch.Tensor:
    """Images (n, 3, S, S) of another kind than the album's (as the paper's V_adv starts from an ArtBench painting):
    a sum of ``blobs`` coloured Gaussian blobs on a random background, with the same pixel noise."""
    rng = check_random_state(random_state)
    s = world.size
    yy, xx = np.meshgrid(np.linspace(0, 1, s), np.linspace(0, 1, s), indexing="ij")
    img = rng.uniform(0.0, 1.0, (n, 3, 1, 1)) * np.ones((n, 3, s, s))
    for _ in range(blobs):
        cy, cx = rng.uniform(0, 1, (2, n, 1, 1, 1))
        width = rng.uniform(0.05, 0.25, (n, 1, 1, 1))
        bump = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * width**2))
        img = img * (1 - bump) + rng.uniform(0.0, 1.0, (n, 3, 1, 1)) * bump
    img = img + 0.05 * rng.standard_normal(img.shape)
    return torch.from_numpy(np.clip(img, 0.0, 1.0)).float()


def _pool(world: World, rng: np.random.Generator, size: int) -> tuple[np.ndarray, torch.Tensor]:
    """A training pool of ``size`` rendered images (classes, images), rendered once and sampled per step."""
    classes = rng.integers(0, world.num_classes, size)
    return classes, render(world, classes, rng)


class Patches(nn.Module):
    """Split (n, 3, S, S) images into non-overlapping 8 x 8 patches, flattened: (n, (S/8)^2, 3 * 64)."""

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        n, c, s, _ = images.shape
        g = s // PATCH
        return images.reshape(n, c, g, PATCH, g, PATCH).permute(0, 2, 4, 1, 3, 5).reshape(n, g * g, c * PATCH**2)


def _patch_tower(world: World, hidden: int, channels: int = 16) -> nn.Sequential:
    """A ViT-like patch embedding (a linear map of each 8 x 8 patch) followed by a linear layer over the grid."""
    grid = world.size // PATCH
    return nn.Sequential(Patches(), nn.Linear(3 * PATCH**2, channels), nn.ReLU(), nn.Flatten(),
                         nn.Linear(channels * grid * grid, hidden))


def init_weights(module: nn.Module, random_state: RandomState = None) -> nn.Module:
    """Seeded re-initialisation in place: linear weights ~ N(0, 1/fan_in), biases 0, word embeddings ~ N(0, 1).

    ``random_state`` becomes a torch Generator (``icml24._random.torch_generator``: a torch Generator is used as is,
    so initialising two models from one continues its stream)."""
    gen = torch_generator(random_state)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, m.in_features**-0.5, generator=gen)
                m.bias.zero_()
            elif isinstance(m, nn.EmbeddingBag):
                m.weight.normal_(0.0, 1.0, generator=gen)
    return module


class TinyCLIP(nn.Module):
    """Dual encoder: an MLP image tower and a bag-of-words text tower, both onto the unit sphere."""

    def __init__(self, world: World, dim: int = 32, hidden: int = 128):
        super().__init__()
        self.image = nn.Sequential(_patch_tower(world, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.words = nn.EmbeddingBag(world.vocab, hidden, mode="mean")
        self.text_head = nn.Linear(hidden, dim)
        self.log_scale = nn.Parameter(torch.tensor(np.log(10.0), dtype=torch.float32))

    def encode_image(self, images: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.image(images), dim=-1)

    def encode_text(self, tokens: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.text_head(torch.relu(self.words(tokens))), dim=-1)


class TinyResponder(nn.Module):
    """A multimodal 'MLLM': image features gated by the prompt's bag of words -> next response token."""

    def __init__(self, world: World, hidden: int = 128):
        super().__init__()
        self.image = nn.Sequential(_patch_tower(world, hidden), nn.ReLU())
        self.words = nn.EmbeddingBag(world.vocab, hidden, mode="mean")
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, world.num_outputs))

    def forward(self, images: torch.Tensor, prompts: torch.Tensor) -> torch.Tensor:
        return self.head(self.image(images) + self.words(prompts))

    def respond(self, images: torch.Tensor, prompts: torch.Tensor) -> torch.Tensor:
        """Logits (n_images, n_prompts, outputs) of every image under every prompt, the images encoded once."""
        return self.head(self.image(images)[:, None] + self.words(prompts)[None])


def plan_tokens(world: World, roles: np.ndarray, classes: np.ndarray) -> torch.Tensor:
    """A plan 'SELECT ALBUM EXPLAIN WHY <role> <object>': select an image of ``object`` and explain why."""
    shared = np.broadcast_to(np.array(world.plan_words), (len(roles), len(world.plan_words)))
    cols = [shared, world.num_classes + np.asarray(roles)[:, None], np.asarray(classes)[:, None]]
    return torch.from_numpy(np.concatenate(cols, 1)).long()


def prompt_tokens(world: World, roles: np.ndarray, mode: str) -> torch.Tensor:
    """A question ('ASK <role>') or answer ('ANSWER <role>') prompt."""
    word = world.ask if mode == "ask" else world.answer
    return torch.from_numpy(np.stack([np.full(len(roles), word), world.num_classes + np.asarray(roles)], 1)).long()


def _initialised(model: nn.Module | None, build, rng: np.random.Generator) -> nn.Module:
    """``model`` as given, or ``build()`` initialised from a torch stream seeded by one draw of ``rng``."""
    return init_weights(build(), torch_generator(rng)) if model is None else model


def train_clip(world: World, random_state: RandomState = None, steps: int = 300, batch: int = 128, pool: int = 512,
               *, model: TinyCLIP | None = None) -> TinyCLIP:
    """Contrastive training on (image, one-word caption) pairs; captions of the same class are positives.

    Like CLIP's alt-text captions, the training captions are short: the shared plan words and the role words are
    never seen in training, so plans (longer, out-of-distribution text) share a large common component.

    ``random_state`` draws the training pool and the minibatches; ``model`` is the initialised model to train (see
    ``init_weights``), by default a new one initialised from a torch stream seeded by a first draw of
    ``random_state``."""
    rng = check_random_state(random_state)
    model = _initialised(model, lambda: TinyCLIP(world), rng)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    pool_classes, pool_images = _pool(world, rng, pool)
    for _ in range(steps):
        pick = rng.integers(0, pool, batch)
        cls, images = pool_classes[pick], pool_images[pick]
        text = torch.from_numpy(cls[:, None]).long()
        logits = model.log_scale.exp() * model.encode_image(images) @ model.encode_text(text).T
        same = torch.from_numpy(cls[:, None] == cls[None, :]).float()
        target = same / same.sum(1, keepdim=True)
        to_text = -(target * logits.log_softmax(1)).sum(1).mean()
        to_image = -(target.T * logits.log_softmax(0)).sum(0).mean()
        loss = 0.5 * (to_text + to_image)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval().requires_grad_(False)


def train_responder(world: World, random_state: RandomState = None, steps: int = 300, batch: int = 128,
                    echo_fraction: float = 0.25, pool: int = 512, *,
                    model: TinyResponder | None = None) -> TinyResponder:
    """Echo pretraining mixed with benign image instruction tuning (ASK -> question token, ANSWER -> answer token).

    ``random_state`` and ``model`` as in ``train_clip``."""
    rng = check_random_state(random_state)
    model = _initialised(model, lambda: TinyResponder(world), rng)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    k = world.num_classes
    pool_classes, pool_images = _pool(world, rng, pool)
    for _ in range(steps):
        pick = rng.integers(0, pool, batch)
        cls = pool_classes[pick]
        roles = rng.integers(0, world.num_roles, batch)
        ask = rng.random(batch) < 0.5
        prompts = torch.where(torch.from_numpy(ask)[:, None], prompt_tokens(world, roles, "ask"),
                              prompt_tokens(world, roles, "answer"))
        labels = np.where(ask, cls, cls + k)
        echo = rng.random(batch) < echo_fraction
        harm = rng.random(batch) < 1.0 / (k + 1)
        word = np.where(harm, world.harm_word, cls)
        echo_prompts = torch.from_numpy(np.stack([np.full(batch, world.echo), word], 1)).long()
        prompts = torch.where(torch.from_numpy(echo)[:, None], echo_prompts, prompts)
        labels = torch.from_numpy(np.where(echo, np.where(harm, world.harmful, cls + k), labels)).long()
        loss = F.cross_entropy(model(pool_images[pick], prompts), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval().requires_grad_(False)
