"""The paper's single-index models: the official model/beta pairing and the closed-form signal-to-noise."""

import numpy as np
import pytest

from icml24.sdr import MODELS, signal_to_noise, single_index_data, true_direction


def test_official_pairing_and_normalization():
    assert MODELS == ("linear", "quadratic", "exponential", "sine")
    np.testing.assert_array_equal(true_direction("linear"), [1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(true_direction("quadratic"), [1, -1, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(true_direction("exponential"), true_direction("linear"))
    np.testing.assert_array_equal(true_direction("sine"), [1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    dense = true_direction("sine", sparse=False)
    assert np.linalg.norm(dense) == pytest.approx(1.0) and dense[5] == pytest.approx(5 / np.sqrt(110))
    assert np.linalg.norm(true_direction("linear", normalize_sparse=True)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown model"):
        true_direction("cubic")


@pytest.mark.parametrize("model", MODELS)
def test_data_and_signal_to_noise(model):
    X, y, beta = single_index_data(model, np.random.default_rng(0), n=200_000, sparse=False)
    assert X.shape == (200_000, 10) and y.shape == (200_000,)
    signal = y - 0.2 * 0  # noise is inside y: Var y = Var f + 0.04
    assert (signal.var() - 0.04) / 0.04 == pytest.approx(signal_to_noise(model, sparse=False), rel=0.05)
