"""Actionable concepts: input perturbations with discrete levels, applied to a batch of images in one pass.

Sagar, Taparia & Senanayake (ICML 2024) explore a model under test over combinations of "actionable concepts"
(rotation, darkening, saturation on ImageNet; Sec. 3). A ``ConceptGrid`` is the product of the concepts' levels:
action ``a`` is one combination (the macroscopic action space, ``5 x 5 x 5 = 125`` in the paper). ``perturb`` takes
per-sample concept values, so one call transforms every (image, action) pair of a batch: the exhaustive ground truth
and the environment share this one code path.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from icml24._validation import check_finite

#: Concept kinds ``perturb`` knows; each is the identity at value 0.
KINDS: tuple[str, ...] = ("rotation", "shift", "darken", "blur")


@dataclass(frozen=True)
class Concept:
    """One actionable concept: ``kind`` in ``KINDS``, its discrete ``levels`` (degrees for rotation, pixels for
    shift, the darkening factor f of brightness ``1 - f``, the Gaussian sigma in pixels for blur) and the
    ``micro_step`` the microscopic mode adds per step.

    A user's own transformation: any other ``kind`` name with ``fn(images [n, H, W], values [n]) -> images [n, H, W]``
    (torch tensors; ``values[i]`` is the level applied to image ``i``), e.g.
    ``Concept("contrast", (1.0, 0.8, 0.6), fn=lambda x, v: (x - 0.5) * v[:, None, None] + 0.5)``. Built-in kinds
    run first (geometry, blur, darkening), then user concepts in the grid's order; the result is clipped to [0, 1].
    """

    kind: str
    levels: tuple[float, ...]
    micro_step: float = 0.05
    fn: Callable | None = None

    def __post_init__(self):
        if self.fn is not None and not callable(self.fn):
            raise TypeError(f"fn of concept {self.kind!r} must be callable(images [n, H, W], values [n]) -> images")
        if self.fn is None and self.kind not in KINDS:
            raise ValueError(f"unknown concept kind {self.kind!r}; use one of {KINDS}, or give your own "
                             "transformation as fn=callable(images [n, H, W], values [n]) -> images [n, H, W]")
        if self.fn is not None and self.kind in KINDS:
            raise ValueError(f"{self.kind!r} is a built-in kind; give your own transformation another name")
        if len(self.levels) < 1:
            raise ValueError(f"concept {self.kind!r} needs at least one level")
        check_finite(f"levels of {self.kind}", np.asarray(self.levels, dtype=float))
        if not self.micro_step > 0:
            raise ValueError(f"micro_step of {self.kind!r} must be > 0, got {self.micro_step}")


class ConceptGrid:
    """The macroscopic action space: every combination of the concepts' levels, first concept slowest.

    ``values[a]`` is the concept-value vector of action ``a``; ``coordinates[a]`` its level indices (the axes of
    the paper's 3-D landscape plot).
    """

    def __init__(self, concepts: list[Concept] | tuple[Concept, ...]):
        concepts = tuple(concepts)
        if not concepts:
            raise ValueError("a ConceptGrid needs at least one Concept")
        kinds = [c.kind for c in concepts]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"each concept kind may appear once, got {kinds}")
        self.concepts = concepts
        self.shape = tuple(len(c.levels) for c in concepts)
        self.coordinates = np.array(list(itertools.product(*[range(n) for n in self.shape])), dtype=np.int64)
        self.values = np.array([[c.levels[i] for c, i in zip(concepts, row)] for row in self.coordinates],
                               dtype=np.float32)

    @property
    def num_actions(self) -> int:
        return int(len(self.values))

    @property
    def num_concepts(self) -> int:
        return len(self.concepts)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.kind for c in self.concepts)

    @property
    def micro_steps(self) -> np.ndarray:
        return np.array([c.micro_step for c in self.concepts], dtype=np.float32)

    def action_of(self, coordinate: tuple[int, ...]) -> int:
        """The action index of a tuple of level indices (``(4, 0, 1)`` in the paper's notation)."""
        if len(coordinate) != self.num_concepts or any(not 0 <= c < n for c, n in zip(coordinate, self.shape)):
            raise ValueError(f"coordinate {coordinate} is outside the grid of shape {self.shape}")
        return int(np.ravel_multi_index(tuple(coordinate), self.shape))

    def describe(self, action: int) -> str:
        return ", ".join(f"{c.kind}={v:g}" for c, v in zip(self.concepts, self.values[action]))

    def perturb(self, images: torch.Tensor, values: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Apply per-sample concept ``values [n, num_concepts]`` to ``images [n, H, W]`` in ``[0, 1]``.

        Order: geometry (rotation and shift, one bilinear resampling), then blur, then darkening; clipped to
        ``[0, 1]``.
        """
        if images.ndim != 3:
            raise ValueError(f"images must be [n, H, W], got shape {tuple(images.shape)}")
        values = torch.as_tensor(values, dtype=images.dtype)
        if values.shape != (images.shape[0], self.num_concepts):
            raise ValueError(f"values must be [n={images.shape[0]}, {self.num_concepts}], got {tuple(values.shape)}")
        column = {c.kind: values[:, j] for j, c in enumerate(self.concepts)}
        out = images
        if "rotation" in column or "shift" in column:
            zero = torch.zeros(len(images), dtype=images.dtype)
            out = _affine(out, column.get("rotation", zero), column.get("shift", zero))
        if "blur" in column:
            out = _gaussian_blur(out, column["blur"])
        if "darken" in column:
            out = out * (1.0 - column["darken"])[:, None, None]  # brightness 1 - f, as the official darken_image
        for j, c in enumerate(self.concepts):
            if c.fn is not None:
                out = _user_transform(c, out, values[:, j])
        return out.clamp(0.0, 1.0)

    def perturb_actions(self, images: torch.Tensor, actions: np.ndarray | torch.Tensor) -> torch.Tensor:
        """``perturb`` with the values of macroscopic ``actions [n]``."""
        actions = np.asarray(actions, dtype=np.int64)
        if actions.size and (actions.min() < 0 or actions.max() >= self.num_actions):
            raise ValueError(f"actions must lie in [0, {self.num_actions}), got range "
                             f"[{actions.min()}, {actions.max()}]")
        return self.perturb(images, torch.from_numpy(self.values[actions]))

    def __repr__(self) -> str:
        inner = ", ".join(f"{c.kind}{list(c.levels)}" for c in self.concepts)
        return f"ConceptGrid({inner}; {self.num_actions} actions)"


def _user_transform(concept: Concept, images: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A user concept's ``fn`` on the batch, its output checked (shape kept, finite)."""
    out = concept.fn(images, values)
    if not isinstance(out, torch.Tensor) or out.shape != images.shape:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"concept {concept.kind!r}: fn must return a tensor of the images' shape "
                         f"{tuple(images.shape)}, got {got}")
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"concept {concept.kind!r}: fn returned NaN or infinite pixels")
    return out.to(images.dtype)


def _affine(images: torch.Tensor, degrees: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Rotate by ``degrees`` about the centre and shift right by ``shift`` pixels, zero padding."""
    n, h, w = images.shape
    rad = degrees * (math.pi / 180.0)
    cos, sin = torch.cos(rad), torch.sin(rad)
    # the sampling grid maps output to input coordinates, so it holds the inverse rotation and shift; written out
    # elementwise (affine_grid's batched 3x2 products are ~10x slower for tens of thousands of tiny images)
    gx = ((2 * torch.arange(w, dtype=images.dtype) + 1) / w - 1)[None, None, :]  # pixel centres in [-1, 1]
    gy = ((2 * torch.arange(h, dtype=images.dtype) + 1) / h - 1)[None, :, None]
    cos, sin, shift = cos[:, None, None], sin[:, None, None], shift[:, None, None]
    grid = torch.stack([cos * gx - sin * h / w * gy - 2.0 * shift / w, sin * w / h * gx + cos * gy], dim=-1)
    return F.grid_sample(images[:, None], grid, mode="bilinear", padding_mode="zeros", align_corners=False)[:, 0]


def _gaussian_blur(images: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Per-sample isotropic Gaussian blur (sigma 0 = identity), one grouped convolution for the batch."""
    n, h, w = images.shape
    if n == 0 or float(sigma.max()) <= 0:
        return images
    radius = max(1, int(math.ceil(2.0 * float(sigma.max()))))
    offsets = torch.arange(-radius, radius + 1, dtype=images.dtype)
    safe = sigma.clamp_min(1e-6)[:, None]
    kernel = torch.exp(-0.5 * (offsets[None] / safe) ** 2)
    own_radius = torch.clamp(torch.ceil(2.0 * sigma), min=1.0)[:, None]  # each sample's truncation, batch-free
    kernel = kernel * (offsets[None].abs() <= own_radius)
    kernel = torch.where(sigma[:, None] > 0, kernel, (offsets[None] == 0).to(images.dtype))
    kernel = kernel / kernel.sum(dim=1, keepdim=True)  # [n, 2r+1], separable
    x = images[None]  # [1, n, H, W], one group per sample
    x = F.conv2d(F.pad(x, (radius, radius, 0, 0)), kernel[:, None, None, :], groups=n)
    x = F.conv2d(F.pad(x, (0, 0, radius, radius)), kernel[:, None, :, None], groups=n)
    return x[0]


#: Level sets for 8x8 digits (rotation in degrees, blur sigma in pixels); darkening keeps the paper's 0.1 ... 0.5.
DIGIT_LEVELS: dict[str, dict[str, tuple[float, ...]]] = {
    # rare failures, the regime the paper's explorer is meant for (global failure rate ~0.15-0.2 on our MLP)
    "mild": {"rotation": (-15.0, -7.5, 0.0, 7.5, 15.0), "blur": (0.0, 0.2, 0.4, 0.6, 0.8)},
    # our first, a-priori choice: failures are common (global rate ~0.5), the explorer has little to win
    "wide": {"rotation": (-30.0, -15.0, 0.0, 15.0, 30.0), "blur": (0.0, 0.4, 0.8, 1.2, 1.6)},
}


def digit_concepts(levels: str = "mild") -> ConceptGrid:
    """The 125-action grid for 8x8 digits: rotation x darkening x blur, five levels each (``DIGIT_LEVELS``).

    Blur replaces the paper's saturation (grey images have none); rotation is in the paper's +-10 degree range
    ("mild") or twice the paper's ("wide").
    """
    if levels not in DIGIT_LEVELS:
        raise ValueError(f"levels must be one of {sorted(DIGIT_LEVELS)}, got {levels!r}")
    chosen = DIGIT_LEVELS[levels]
    return ConceptGrid([
        Concept("rotation", chosen["rotation"], micro_step=3.0),
        Concept("darken", (0.1, 0.2, 0.3, 0.4, 0.5), micro_step=0.05),
        Concept("blur", chosen["blur"], micro_step=0.1),
    ])
