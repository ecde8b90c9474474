import numpy as np
import pytest

from icml24.rl.failures import exhaustive_failure_rates, looped_failure_rates


def test_vectorized_ground_truth_equals_the_per_query_loop(nut):
    model, _, _, x, y, grid = nut
    fast = exhaustive_failure_rates(model, x[:8], y[:8], grid, batch_size=50)  # several chunks
    slow = looped_failure_rates(model, x[:8], y[:8], grid)
    assert (fast.failures == slow.failures).mean() > 0.999
    np.testing.assert_allclose(fast.rates, slow.rates, atol=1 / 8 + 1e-9)
    assert fast.clean_accuracy == slow.clean_accuracy


def test_identity_action_fails_exactly_where_the_clean_model_fails(nut):
    model, _, _, x, y, grid = nut
    truth = exhaustive_failure_rates(model, x, y, grid)
    gentlest = grid.action_of((2, 0, 0))  # no rotation, darken 0.1, no blur
    assert abs(truth.rates[gentlest] - (1 - truth.clean_accuracy)) < 0.05
    assert 0 < truth.global_rate < 1 and truth.rates.max() > 2 * truth.global_rate
    top = truth.top_actions(10)
    assert truth.rates[top].min() >= np.sort(truth.rates)[-10]


def test_rejects_nan_images(nut):
    model, _, _, x, y, grid = nut
    bad = x[:3].copy()
    bad[1, 2, 2] = np.nan
    with pytest.raises(ValueError, match="images contains NaN"):
        exhaustive_failure_rates(model, bad, y[:3], grid)
