"""The Cubist Spiral: the paper's exact construction (size, balance, standardisation, geometry)."""

import math

import numpy as np
import pytest
import torch

from icml24.pruning import cubist_spiral, spiral_vertices


def test_paper_size_balance_and_standardisation():
    x, y = cubist_spiral(50_000)
    assert x.shape == (49_982, 2) and y.shape == (49_982, 1)
    assert int(y.sum()) == 24_991 and int((y == 0).sum()) == 24_991  # 24,991 points per class, as in the paper
    assert torch.allclose(x.mean(0), torch.zeros(2), atol=1e-4)
    assert torch.allclose(x.std(0), torch.ones(2), atol=1e-4)


def test_arms_are_mirror_offsets_of_one_spiral():
    a, b = spiral_vertices()
    assert a.shape == (17, 2) and a.min() >= 0 and b.min() >= 0 and min(a.min(), b.min()) == 0
    centre = (a + b) / 2  # the symmetry: the two arms are the spiral +- 15 along the vertex direction
    theta = np.linspace(math.pi, 5 * math.pi, 17) + 0.4 * math.pi
    radius = np.linalg.norm(a - b, axis=1) / 2
    assert np.allclose(radius, 15.0)
    step = np.diff(centre, axis=0)
    assert np.allclose(np.linalg.norm(step, axis=1)[1:] > np.linalg.norm(step, axis=1)[:-1], True)  # outward
    assert np.allclose((a - centre) / 15, np.stack([np.cos(theta), np.sin(theta)], 1))


def test_points_lie_on_segments_and_classes_do_not_overlap():
    x, y = cubist_spiral(2000)
    zero, one = x[y[:, 0] == 0], x[y[:, 0] == 1]
    assert torch.cdist(zero, one).min() > 0.05
    assert len(zero) == len(one) or abs(len(zero) - len(one)) <= 16


def test_random_state_only_shuffles():
    x0, y0 = cubist_spiral(1000)
    x1, y1 = cubist_spiral(1000, random_state=3)
    assert not torch.equal(x0, x1)
    assert torch.allclose(torch.sort(x0[:, 0]).values, torch.sort(x1[:, 0]).values)
    assert y0.sum() == y1.sum()
    x2, _ = cubist_spiral(1000, random_state=torch.Generator().manual_seed(3))  # an int is that generator's stream
    assert torch.equal(x1, x2) and torch.equal(cubist_spiral(1000)[0], x0)  # None: the official order, not a shuffle
    with pytest.raises(ValueError, match="random_state"):
        cubist_spiral(1000, random_state=-1)


def test_rejects_tiny_sizes():
    with pytest.raises(ValueError, match="num_points"):
        cubist_spiral(10)


@pytest.mark.parametrize("num_vertices", [0, 1, -3, 2.5])
def test_spiral_vertices_refuse_fewer_than_two_vertices(num_vertices):
    with pytest.raises(ValueError, match=r"num_vertices must be an integer >= 2"):
        spiral_vertices(num_vertices)
