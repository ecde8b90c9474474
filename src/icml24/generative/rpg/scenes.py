"""Procedural multi-object scenes for a locally trained text-to-image model (stand-in for T2I-CompBench prompts).

A 16 x 16 RGB canvas holds 1 to ``MAX_OBJECTS`` objects (circle / square / triangle in red / green / blue / yellow),
each in the region the planner lays out for that many entities (``default_layout``: up to three side by side, more in
a near-square grid filled row by row, edges rounded down as the released code slices the latent): two objects in the
left and right halves, three in vertical thirds, four in the 2 x 2 quadrants, five as three over two. An object is
shrunk to fit a region narrower than 7 pixels. A lone object sits in a random one of the 2- and 4-object places.
Captions list the objects in reading order: ``"red circle and blue square"``. Pixels are in [-1, 1].
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from icml24._random import RandomState, check_random_state

from .planner import default_layout

COLORS = {"red": (1.0, -1.0, -1.0), "green": (-1.0, 1.0, -1.0), "blue": (-1.0, -1.0, 1.0),
          "yellow": (1.0, 1.0, -1.0)}
SHAPES = ("circle", "square", "triangle")
OBJECTS = [f"{c} {s}" for c in COLORS for s in SHAPES]  # the 12 entities
VOCAB = ("<pad>", "and", *COLORS, *SHAPES)
PAD = 0
CANVAS = 16
MAX_OBJECTS = 6
MAX_TOKENS = 3 * MAX_OBJECTS - 1  # 6 objects x 2 words + 5 "and"
COUNTS = (1, 2, 3, 4, 5)  # objects per training scene
MIX = (0.3, 0.2, 0.15, 0.2, 0.15)


@functools.lru_cache(maxsize=8)
def _grid(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:height, 0:width].astype(float)
    return yy, xx


def object_boxes(num_objects: int, size: int = CANVAS) -> list[tuple[int, int, int, int]]:
    """The regions ``(top, bottom, left, right)`` of the object slots in reading order: the planner's layout for
    ``num_objects`` entities on a ``size x size`` canvas."""
    if not 1 <= int(num_objects) <= MAX_OBJECTS:
        raise ValueError(f"scenes hold 1 to {MAX_OBJECTS} objects (the captions the model reads), got {num_objects}")
    return default_layout(int(num_objects)).boxes(size, size)


def object_centers(num_objects: int, size: int = CANVAS) -> list[tuple[float, float]]:
    """Centres (row, col) of the object slots in reading order: the centres of ``object_boxes``."""
    return [((t + b) / 2 - 0.5, (left + r) / 2 - 0.5) for t, b, left, r in object_boxes(num_objects, size)]


def object_scale(box: tuple[int, int, int, int]) -> float:
    """How much an object is shrunk to fit its region: 1 in a region at least 7 pixels wide and high."""
    top, bottom, left, right = box
    return min(1.0, min(bottom - top, right - left) / 7.0)


def single_places(size: int = CANVAS) -> list[tuple[int, int, int, int]]:
    """The six places a lone object may occupy: the 2-object halves and the 4-object quadrants."""
    return object_boxes(2, size) + object_boxes(4, size)


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


def render(entities: list[str], *, slots: list[int] | None = None, scale: float = 1.0) -> np.ndarray:
    """The canonical (3, 16, 16) scene, with no randomness: ``entities`` in reading order, each centred in its slot
    of ``object_boxes`` with radius 3 x its scale; a lone entity goes to ``slots[0]`` of the six ``single_places``
    (drawn at ``scale``). ``render_jittered`` draws a randomly perturbed one."""
    return _paint(entities, slots, scale)


def render_jittered(entities: list[str], random_state: RandomState = None, slots: list[int] | None = None,
                    jitter: float = 0.75, scale: float = 1.0) -> np.ndarray:
    """The scene of ``render`` with every object moved by up to ``jitter`` x its scale pixels per axis and its
    radius drawn in [2.6, 3.3] x its scale (the training scenes' variety); ``random_state`` is None (fresh
    entropy), an int or a numpy Generator (used as is, so successive scenes continue its stream)."""
    return _paint(entities, slots, scale, check_random_state(random_state), jitter)


def _paint(entities: list[str], slots: list[int] | None, scale: float, rng: np.random.Generator | None = None,
           jitter: float = 0.0) -> np.ndarray:
    """Draw the scene; ``rng`` None: canonical centres and radii, else jittered ones drawn from it."""
    canvas = -np.ones((3, CANVAS, CANVAS))
    if len(entities) == 1 and slots is not None:
        boxes = [single_places()[slots[0]]]
        scales = [float(scale)]
    else:
        boxes = object_boxes(len(entities))
        scales = [object_scale(box) for box in boxes]
    for entity, (t, b, left, r), s in zip(entities, boxes, scales):
        cy, cx = (t + b) / 2 - 0.5, (left + r) / 2 - 0.5
        radius = 3.0 * s
        if rng is not None:
            cy, cx = cy + rng.uniform(-jitter * s, jitter * s), cx + rng.uniform(-jitter * s, jitter * s)
            radius = rng.uniform(2.6, 3.3) * s
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


def sample_scenes(n: int, random_state=None, counts: tuple[int, ...] = COUNTS,
                  mix: tuple[float, ...] = MIX):
    """``n`` training scenes with ``counts[i]`` objects in proportion ``mix[i]``: images (n, 3, 16, 16), captions."""
    if len(counts) != len(mix) or min(mix) < 0 or sum(mix) <= 0:
        raise ValueError(f"mix must give one non-negative weight per object count {counts}, got {mix}")
    for k in counts:
        object_boxes(k)  # refuses a count the scenes cannot hold
    rng = check_random_state(random_state)
    counts = rng.choice(list(counts), size=n, p=np.asarray(mix) / sum(mix))
    images, captions = np.empty((n, 3, CANVAS, CANVAS)), []
    for i, k in enumerate(counts):
        entities = [OBJECTS[j] for j in rng.integers(0, len(OBJECTS), size=k)]
        images[i] = render_jittered(entities, rng, slots=[int(rng.integers(0, 6))] if k == 1 else None)
        captions.append(caption(entities))
    return images, captions


def all_prompts(num_objects: int) -> list[tuple[str, ...]]:
    """Every ordered tuple of ``num_objects`` entities with no entity repeated (a binding test needs distinct
    objects), in a fixed order."""
    return [t for t in itertools.product(OBJECTS, repeat=num_objects) if len(set(t)) == num_objects]


def split_prompts(num_objects: int, num_validation: int, num_test: int | None = None, random_state=None):
    """Disjoint validation and test prompt sets (entity tuples) drawn by ``random_state`` (pass the same int in every
    call for the same split): the model is selected on the validation set, the claims read the test set
    (``num_test=None``: every other prompt)."""
    pool = all_prompts(num_objects)
    num_test = len(pool) - num_validation if num_test is None else num_test
    if num_validation < 0 or num_test < 0 or num_validation + num_test > len(pool):
        raise ValueError(f"only {len(pool)} distinct {num_objects}-object prompts exist")
    order = check_random_state(random_state).permutation(len(pool))
    pick = [pool[k] for k in order[: num_validation + num_test]]
    return pick[:num_validation], pick[num_validation:]
