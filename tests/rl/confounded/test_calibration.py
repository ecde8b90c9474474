"""The confidence set's constant from held-out episodes: excess losses, coverage at the stated level."""

import numpy as np
import pytest

from icml24.rl import (
    ConfidenceSet,
    DeltaFeatures,
    HistoryInstrument,
    TwoStageBridgeEstimator,
    calibrate_xi_scale,
    excess_losses,
    tabular_toy,
    true_bridges,
)


def _make(seed):
    return TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3, random_state=seed)


def test_excess_loss_is_zero_at_the_centre_and_the_set_boundary_at_xi():
    pomdp = tabular_toy()
    est = _make(0).fit(pomdp.sample(2000, np.random.default_rng(0)))
    assert np.allclose(excess_losses(est, est.bridges_), 0.0)
    truth = true_bridges(pomdp, DeltaFeatures(3))
    excess = excess_losses(est, truth)
    cs = ConfidenceSet(xi_scale=1.0).fit(est)
    inside = cs.contains(truth)
    assert all(e <= blk.xi * (1 + 1e-9) for e, blk, ok in zip(excess, cs.blocks_, inside) if ok)


def test_calibrated_set_covers_held_out_data_at_about_the_level():
    pomdp = tabular_toy()
    truth = true_bridges(pomdp, DeltaFeatures(3))
    scale = calibrate_xi_scale(pomdp, truth, _make, [1000, 4000], 30, np.random.default_rng(0), level=0.9)
    assert scale.shape == (6,) and np.all(scale > 0)
    covered = []
    for seed in range(20):  # fresh data sets, never seen by the calibration
        est = _make(seed).fit(pomdp.sample(2000, np.random.default_rng(100 + seed)))
        covered.append(ConfidenceSet(xi_scale=scale).fit(est).contains(truth).all())
    assert np.mean(covered) >= 0.75
    small = ConfidenceSet(xi_scale=scale * 1e-3)
    assert np.mean([small.fit(_make(s).fit(pomdp.sample(2000, np.random.default_rng(100 + s)))).contains(truth).all()
                    for s in range(5)]) < 0.5  # a constant 1000 times too small does not cover


def test_calibration_and_per_block_scales_refuse_bad_arguments():
    pomdp = tabular_toy()
    truth = true_bridges(pomdp, DeltaFeatures(3))
    with pytest.raises(ValueError, match="level"):
        calibrate_xi_scale(pomdp, truth, _make, [500], 2, np.random.default_rng(0), level=1.5)
    with pytest.raises(ValueError, match="held-out"):
        calibrate_xi_scale(pomdp, truth, _make, [], 2, np.random.default_rng(0))
    est = _make(0).fit(pomdp.sample(500, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="one per block"):
        ConfidenceSet(xi_scale=[1.0, 2.0]).fit(est)
    with pytest.raises(ValueError, match=r"xi_scale\[1\]"):
        ConfidenceSet(xi_scale=[1.0, -1.0, 1, 1, 1, 1]).fit(est)
    with pytest.raises(ValueError, match="radius_scale"):
        ConfidenceSet(radius_scale=0.0).fit(est)
