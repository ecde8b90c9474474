"""F1 and SHD: hand-counted cases, including cdt's double count for reversed edges."""

import numpy as np
import pytest

from icml24.causal import arrow_f1, normalized_shd, skeleton_f1


def test_perfect_missing_reversed_and_undirected_edges():
    true = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert skeleton_f1(true, true) == 1.0 and normalized_shd(true, true) == 0.0
    reversed_one = np.array([[0, 0, 0], [1, 0, 1], [0, 0, 0]])
    assert skeleton_f1(true, reversed_one) == 1.0
    assert normalized_shd(true, reversed_one) == pytest.approx(2 / 6)  # reversed edge counts twice
    undirected = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    assert normalized_shd(true, undirected) == pytest.approx(2 / 6)
    missing = np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    assert skeleton_f1(true, missing) == pytest.approx(2 / 3)
    assert skeleton_f1(true, np.zeros((3, 3))) == 0.0


def test_arrow_f1_targets_the_true_cpdag():
    collider = np.array([[0, 0, 1], [0, 0, 1], [0, 0, 0]])
    assert arrow_f1(collider, collider) == 1.0
    assert arrow_f1(collider, collider.T) == 0.0
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert arrow_f1(chain, chain + chain.T) == 1.0  # no compelled arrows, none claimed
    assert arrow_f1(chain, chain) == 0.0  # arrows claimed that the data cannot identify
    with pytest.raises(ValueError, match="square"):
        skeleton_f1(chain, np.zeros((2, 2)))
