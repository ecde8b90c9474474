"""The paper's error: largest eigenvalue magnitude of the difference of projections (sin of the angle for lines)."""

import math

import numpy as np
import pytest

from icml24.sdr import projection, subspace_distance


def test_sine_of_the_angle_and_sign_invariance():
    for angle in (0.0, 0.3, 1.0, math.pi / 2):
        a = np.array([1.0, 0.0, 0.0])
        b = np.array([math.cos(angle), math.sin(angle), 0.0])
        assert subspace_distance(a, b) == pytest.approx(math.sin(angle), abs=1e-12)
        assert subspace_distance(-3 * a, b) == pytest.approx(math.sin(angle), abs=1e-12)


def test_projection_and_subspaces():
    basis = np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(projection(basis), np.diag([1.0, 1.0, 0.0]), atol=1e-12)
    assert subspace_distance(basis, np.eye(3)[:, :2]) == pytest.approx(0.0, abs=1e-12)
    assert subspace_distance(np.eye(3)[:, :1], np.eye(3)[:, 1:2]) == pytest.approx(1.0)
