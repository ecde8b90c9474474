"""The ready-made confounded POMDPs: their documented parameter ranges."""

import math

import numpy as np
import pytest

from icml24.rl import tabular_toy


@pytest.mark.parametrize("confounding", [-1.0, 1.5, math.nan])
def test_tabular_toy_refuses_confounding_outside_the_unit_interval(confounding):
    with pytest.raises(ValueError, match=r"confounding must lie in \[0, 1\]"):
        tabular_toy(confounding=confounding)


def test_tabular_toy_confounding_moves_the_behaviour_policy_from_uniform_to_latent_aware():
    assert np.allclose(tabular_toy(confounding=0.0).behaviour, 0.5)
    assert np.allclose(tabular_toy(confounding=1.0).behaviour, [[0.75, 0.25], [0.25, 0.75]])
