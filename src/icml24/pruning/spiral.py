"""The Cubist Spiral (Zhang & Papyan, "Sparsest Models Elude Pruning", ICML 2024, Sec. 3.1).

Two interleaved piecewise-linear spiral arms in 2-D: 17 vertices on an Archimedean spiral, each arm offset by
+-15 along the vertex direction, points placed uniformly along the 16 segments of each arm, no noise. The paper
evaluates on the training set, so there is no split.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml24._random import RandomState, torch_generator


def spiral_vertices(num_vertices: int = 17, offset: float = 15.0) -> tuple[np.ndarray, np.ndarray]:
    """The two arms' vertices, shifted together into the positive quadrant: arrays [num_vertices, 2]."""
    if isinstance(num_vertices, bool) or not isinstance(num_vertices, (int, np.integer)) or num_vertices < 2:
        raise ValueError(f"num_vertices must be an integer >= 2 (each arm is a chain of segments), got "
                         f"{num_vertices!r}")
    if not math.isfinite(offset):
        raise ValueError(f"offset must be a finite number, got {offset}")
    theta = np.linspace(math.pi, 5 * math.pi, num_vertices) + 0.4 * math.pi  # theta = linspace(pi, 5 pi) + 0.4 pi
    radius = 10 * theta + math.pi  # r = 10 theta + pi
    direction = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    centre = radius[:, None] * direction
    arm_0, arm_1 = centre + offset * direction, centre - offset * direction
    shift = np.minimum(arm_0.min(axis=0), arm_1.min(axis=0))
    return arm_0 - shift, arm_1 - shift


def _points_along(vertices: np.ndarray, num_points: int) -> np.ndarray:
    """int(len_i / sum(len) * num_points / 2) points on segment i, endpoints included (the paper's linspace)."""
    lengths = np.linalg.norm(np.diff(vertices, axis=0), axis=1)
    share = lengths / lengths.sum()
    pieces = []
    for i in range(len(vertices) - 1):
        t = np.linspace(0.0, 1.0, int(share[i] * num_points / 2))[:, None]
        pieces.append(t * vertices[i] + (1 - t) * vertices[i + 1])
    return np.concatenate(pieces)


def cubist_spiral(num_points: int = 50_000, random_state: RandomState = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The Cubist Spiral: ``(x, y)`` with x float32 [n, 2] standardised per coordinate and y float32 [n, 1] in {0, 1}.

    ``num_points`` is the paper's sample size (50,000 gives 24,991 points per class); smaller values give the same
    curve, sampled more coarsely. The construction is deterministic; ``random_state`` only shuffles the row order
    (``icml24._random.torch_generator``; an int gives the stream of ``torch.Generator().manual_seed(int)``).
    ``None`` here keeps the official order, class 0 first, not a fresh shuffle: the data set has no randomness.
    """
    if not (isinstance(num_points, (int, np.integer)) and num_points >= 64):
        raise ValueError(f"num_points must be an integer >= 64 so every segment gets points, got {num_points!r}")
    arm_0, arm_1 = spiral_vertices()
    x0, x1 = _points_along(arm_0, num_points), _points_along(arm_1, num_points)
    x = torch.from_numpy(np.concatenate([x0, x1])).float()
    x = (x - x.mean(0, keepdim=True)) / x.std(0, keepdim=True)  # standardise each coordinate
    y = torch.cat([torch.zeros(len(x0)), torch.ones(len(x1))]).unsqueeze(1)
    if random_state is not None:
        order = torch.randperm(len(x), generator=torch_generator(random_state))
        x, y = x[order], y[order]
    return x, y


def spiral_validation(num_points: int = 50_000, num_validation: int = 2_000,
                      random_state: RandomState = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Validation points for choosing training settings: ``num_validation`` points at uniformly random positions
    along the same two arms (almost surely none of the training grid's), in the coordinates of
    ``cubist_spiral(num_points)`` (its mean and standard deviation), half per class. Not part of the paper, which
    has no split; a setting chosen here is never chosen on the points its accuracy is reported on.
    ``random_state`` (``icml24._random.torch_generator``: an int seeds a torch Generator, one is used as is) draws
    the positions."""
    if num_points < 64 or num_validation < 2:
        raise ValueError(f"num_points must be >= 64 and num_validation >= 2, got {num_points}, {num_validation}")
    generator = torch_generator(random_state)
    arm_0, arm_1 = spiral_vertices()
    x0, x1 = _points_along(arm_0, num_points), _points_along(arm_1, num_points)
    train = np.concatenate([x0, x1])
    mean, std = train.mean(0), train.std(0, ddof=1)
    picks = []
    for arm in (arm_0, arm_1):
        lengths = np.linalg.norm(np.diff(arm, axis=0), axis=1)
        u = torch.rand(num_validation // 2, generator=generator, dtype=torch.float64).numpy() * lengths.sum()
        seg = np.minimum(np.searchsorted(np.cumsum(lengths), u, side="right"), len(lengths) - 1)
        t = ((u - np.concatenate([[0.0], np.cumsum(lengths)])[seg]) / lengths[seg])[:, None]
        picks.append(arm[seg] + t * (arm[seg + 1] - arm[seg]))  # a uniform point along the arm
    x = torch.from_numpy((np.concatenate(picks) - mean) / std).float()
    y = torch.cat([torch.zeros(len(picks[0])), torch.ones(len(picks[1]))]).unsqueeze(1)
    return x, y
