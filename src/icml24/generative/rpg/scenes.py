"""Procedural multi-object scenes for a locally trained text-to-image model (stand-in for T2I-CompBench prompts).

A 16 x 16 RGB canvas holds 1, 2 or 4 objects (circle / square / triangle in red / green / blue / yellow). Two
objects sit in the left and right halves, four in the 2 x 2 quadrants, one in a random one of those six places.
Captions list the objects in reading order: ``"red circle and blue square"``. Pixels are in [-1, 1].
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

COLORS = {"red": (1.0, -1.0, -1.0), "green": (-1.0, 1.0, -1.0), "blue": (-1.0, -1.0, 1.0),
          "yellow": (1.0, 1.0, -1.0)}
SHAPES = ("circle", "square", "triangle")
OBJECTS = [f"{c} {s}" for c in COLORS for s in SHAPES]  # the 12 entities
VOCAB = ("<pad>", "and", *COLORS, *SHAPES)
PAD = 0
CANVAS = 16
MAX_TOKENS = 12  # 4 objects x 2 words + 3 "and" + 1 spare


@functools.lru_cache(maxsize=8)
def _grid(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:height, 0:width].astype(float)
    return yy, xx


def object_centers(num_objects: int, size: int = CANVAS) -> list[tuple[float, float]]:
    """Centres (row, col) of the object slots in reading order for 1, 2 or 4 objects."""
    q = size / 4
    if num_objects == 1:
        return [(2 * q - 0.5, 2 * q - 0.5)]
    if num_objects == 2:
        return [(2 * q - 0.5, q - 0.5), (2 * q - 0.5, 3 * q - 0.5)]
    if num_objects == 4:
        return [(q - 0.5, q - 0.5), (q - 0.5, 3 * q - 0.5), (3 * q - 0.5, q - 0.5), (3 * q - 0.5, 3 * q - 0.5)]
    raise ValueError(f"scenes hold 1, 2 or 4 objects, got {num_objects}")


def draw_object(canvas: np.ndarray, entity: str, center: tuple[float, float], radius: float) -> None:
    """Paint ``entity`` ('red circle') into ``canvas`` (3, H, W) in place."""
    color, shape = entity.split()
    _, height, width = canvas.shape
    yy, xx = _grid(height, width)
    dy, dx = yy - center[0], xx - center[1]
    if shape == "circle":
        inside = dy**2 + dx**2 <= radius**2
    elif shape == "square":
        inside = (np.abs(dy) <= 0.8 * radius) & (np.abs(dx) <= 0.8 * radius)
    elif shape == "triangle":  # apex up: half-width grows from 0 at the top to radius at the bottom
        inside = (dy >= -radius) & (dy <= 0.8 * radius) & (np.abs(dx) <= (dy + radius) / 1.8 * 1.0 + 0.3)
    else:
        raise ValueError(f"unknown shape {shape!r}; use one of {SHAPES}")
    canvas[:, inside] = np.asarray(COLORS[color])[:, None]


def render(entities: list[str], rng: np.random.Generator | None = None, slots: list[int] | None = None,
           jitter: float = 0.75) -> np.ndarray:
    """A (3, 16, 16) scene with ``entities`` in reading order; one entity goes to ``slots[0]`` of the six places."""
    canvas = -np.ones((3, CANVAS, CANVAS))
    if len(entities) == 1 and slots is not None:
        places = object_centers(2) + object_centers(4)
        centers = [places[slots[0]]]
    else:
        centers = object_centers(len(entities))
    for entity, (cy, cx) in zip(entities, centers):
        radius = 3.0
        if rng is not None:
            cy, cx = cy + rng.uniform(-jitter, jitter), cx + rng.uniform(-jitter, jitter)
            radius = rng.uniform(2.6, 3.3)
        draw_object(canvas, entity, (cy, cx), radius)
    return canvas


def caption(entities: list[str]) -> str:
    return " and ".join(entities)


def tokenize(prompts: list[str], length: int = MAX_TOKENS) -> np.ndarray:
    """Word ids padded to ``length`` (an empty prompt is all padding: the unconditional prompt)."""
    index = {w: k for k, w in enumerate(VOCAB)}
    out = np.full((len(prompts), length), PAD, dtype=np.int64)
    for i, prompt in enumerate(prompts):
        words = prompt.lower().replace(",", " and ").split()
        words = [w for w in words if w not in {"a", "an", "the"}]
        if len(words) > length:
            raise ValueError(f"prompt {prompt!r} has {len(words)} words, more than the {length} the model reads")
        for j, word in enumerate(words):
            if word not in index:
                raise ValueError(f"word {word!r} of {prompt!r} is not in the model's vocabulary {VOCAB}")
            out[i, j] = index[word]
    return out


def sample_scenes(n: int, rng: np.random.Generator, mix: tuple[float, float, float] = (0.4, 0.3, 0.3)):
    """``n`` training scenes with 1 / 2 / 4 objects in proportions ``mix``: images (n, 3, 16, 16), captions."""
    counts = rng.choice([1, 2, 4], size=n, p=np.asarray(mix) / sum(mix))
    images, captions = np.empty((n, 3, CANVAS, CANVAS)), []
    for i, k in enumerate(counts):
        entities = [OBJECTS[j] for j in rng.integers(0, len(OBJECTS), size=k)]
        images[i] = render(entities, rng, slots=[int(rng.integers(0, 6))] if k == 1 else None)
        captions.append(caption(entities))
    return images, captions


def all_prompts(num_objects: int) -> list[tuple[str, ...]]:
    """Every ordered tuple of ``num_objects`` entities with no entity repeated (a binding test needs distinct
    objects), in a fixed order."""
    return [t for t in itertools.product(OBJECTS, repeat=num_objects) if len(set(t)) == num_objects]


def split_prompts(num_objects: int, num_validation: int, num_test: int | None = None, seed: int = 0):
    """Disjoint validation and test prompt sets (entity tuples) drawn once with a fixed ``seed``: the model is
    selected on the validation set, the claims read the test set (``None``: every other prompt)."""
    pool = all_prompts(num_objects)
    num_test = len(pool) - num_validation if num_test is None else num_test
    if num_validation < 0 or num_test < 0 or num_validation + num_test > len(pool):
        raise ValueError(f"only {len(pool)} distinct {num_objects}-object prompts exist")
    order = np.random.default_rng(seed).permutation(len(pool))
    pick = [pool[k] for k in order[: num_validation + num_test]]
    return pick[:num_validation], pick[num_validation:]
