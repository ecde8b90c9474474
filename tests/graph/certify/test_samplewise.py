"""Sample-wise injection certificate: closed-form radius, budget threshold."""

import numpy as np
import pytest

from icml24.graph.certify import disconnection_probability, samplewise_certified, samplewise_radius


@pytest.mark.parametrize("variant", ["official", "conservative"])
def test_radius_matches_budget_scan(variant):
    rng = np.random.default_rng(0)
    p_a = rng.uniform(0.3, 1.0, 200)
    p_b = np.minimum(1 - p_a, rng.uniform(0, 0.5, 200))
    radius = samplewise_radius(p_a, p_b, 6, 0.7, 0.7, variant)
    scan = np.zeros(200, dtype=int)
    for rho in range(1, 400):
        scan += samplewise_certified(p_a, p_b, rho, 6, 0.7, 0.7, variant)
    assert np.array_equal(radius, scan)


def test_paper_setting_threshold():
    """p_e = 0.9, p_n = 0.8, tau = 6: nothing is certifiable from rho = 31 on ((0.2 * 0.98^6 + 0.8)^rho < 1/2)."""
    assert disconnection_probability(30, 6, 0.9, 0.8) > 0.5 > disconnection_probability(31, 6, 0.9, 0.8)
    assert disconnection_probability(1, 6, 0.9, 0.8) == pytest.approx(0.2 * 0.98**6 + 0.8)
    for variant in ("official", "conservative"):
        assert samplewise_radius(np.array([1.0]), np.array([0.0]), 6, 0.9, 0.8, variant)[0] == 30


def test_conservative_is_stricter():
    p_a, p_b = np.linspace(0.5, 1, 50), np.linspace(0.5, 0, 50)
    for rho in (1, 5, 20):
        strict = samplewise_certified(p_a, p_b, rho, 6, 0.9, 0.8, "conservative")
        loose = samplewise_certified(p_a, p_b, rho, 6, 0.9, 0.8, "official")
        assert np.all(loose | ~strict)
    with pytest.raises(ValueError):
        samplewise_certified(p_a, p_b, 1, 6, 0.9, 0.8, "other")
