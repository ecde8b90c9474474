import numpy as np
import pytest

from icml24.kernels import design_points, design_size, separation


def test_sizes_match_across_designs():
    assert design_size(100, 1) == 100 and design_size(50, 2) == 49 and design_size(200, 2) == 196
    for n, d in ((25, 1), (50, 2), (30, 3)):
        rng = np.random.default_rng(0)
        assert design_points(n, d, "random", rng).shape == design_points(n, d, "grid", rng).shape


def test_grid_is_quasi_uniform_and_random_points_are_not():
    rng = np.random.default_rng(1)
    for d, n in ((1, 400), (2, 400)):
        m = round(design_size(n, d) ** (1 / d))
        grid = design_points(n, d, "grid", rng)
        assert separation(grid) >= 0.5 / m and grid.min() >= 0 and grid.max() <= 1
        random = design_points(n, d, "random", rng)
        assert separation(random) < 0.5 / m  # the closest of ~n^2/2 pairs: q ~ n^(-2/d), far below the spacing


def test_separation_is_the_closest_pair():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.3], [5.0, 5.0]])
    assert separation(X) == pytest.approx(0.3)
    brute = np.random.default_rng(2).uniform(size=(60, 3))
    dist = np.linalg.norm(brute[:, None] - brute[None], axis=-1) + np.eye(60) * 9
    assert separation(brute) == pytest.approx(dist.min())


def test_bad_inputs_are_named():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="design must be"):
        design_points(10, 1, "sobol", rng)
    with pytest.raises(ValueError, match="n must be"):
        design_points(0, 1, "random", rng)
    with pytest.raises(ValueError, match="d must be"):
        design_size(10, 0)
    with pytest.raises(ValueError, match="X must be"):
        separation(np.zeros((1, 2)))


def test_an_int_random_state_is_default_rng_of_it():
    for design in ("random", "grid"):
        np.testing.assert_array_equal(design_points(30, 2, design, random_state=4),
                                      design_points(30, 2, design, np.random.default_rng(4)))
