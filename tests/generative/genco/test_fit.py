"""The classifier two-sample test: chance on two draws of one distribution, 1 on a collapsed generator."""

import numpy as np
import pytest

from icml24.generative import c2st_accuracy, random_levels


def test_chance_for_the_same_distribution_and_one_for_a_collapsed_sample():
    a = random_levels(100, 7, 9, np.random.default_rng(0))
    b = random_levels(100, 7, 9, np.random.default_rng(1))
    assert abs(c2st_accuracy(a, b, random_state=0) - 0.5) < 0.12
    assert c2st_accuracy(np.repeat(a[:1], 100, axis=0), b, random_state=0) == 1.0
    assert c2st_accuracy(a, b, random_state=3) == c2st_accuracy(a, b, random_state=3)  # deterministic


def test_refuses_mismatched_or_tiny_samples():
    a = random_levels(10, 7, 9, np.random.default_rng(0))
    with pytest.raises(ValueError, match="differ in shape"):
        c2st_accuracy(a, a[:, :5])
    with pytest.raises(ValueError, match="needs >= 5"):
        c2st_accuracy(a[:3], a)
    with pytest.raises(ValueError, match="integer tile indices"):
        c2st_accuracy(a.astype(float), a)
