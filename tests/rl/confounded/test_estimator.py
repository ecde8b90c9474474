"""The two-stage estimator: delta kernels give the tabular closed form; it converges to the true bridges."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.rl import (
    DeltaFeatures,
    HistoryInstrument,
    RBFFeatures,
    TwoStageBridgeEstimator,
    bridge_error,
    continuous_toy,
    deterministic_policies,
    tabular_toy,
    true_bridges,
)


def _tabular(data, seed=0, **kw):
    return TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3,
                                   random_state=seed, **kw).fit(data)


def _closed_form(data, seed, lam1, lam2, split=0.7):
    """Count-based tabular estimator written from the paper's formulas, cell by cell (independent of the code)."""
    n, T = data.n, data.horizon
    perm = np.random.default_rng(seed).permutation(n)
    n1 = int(round(split * n))
    stage1, stage2 = np.zeros(n, bool), np.zeros(n, bool)
    stage1[perm[:n1]], stage2[perm[n1:]] = True, True
    reward, dynamic = [], []
    for t in range(T):
        hist = np.zeros(n, dtype=int)
        for j in range(t):
            hist = hist * 6 + data.obs[:, j] * 2 + data.actions[:, j]
        x = (data.actions[:, t] * 6**t + hist) * 2 + data.o0
        cells = np.unique(x)
        A = np.zeros((6, 6))
        bR, bD = np.zeros((6, 3)), np.zeros((6, 9))
        for cell in cells:
            in1 = stage1 & (x == cell)
            denom = in1.sum() + n1 * lam1
            mu = np.array([np.sum(in1 & (data.actions[:, t] * 3 + data.obs[:, t] == w)) for w in range(6)]) / denom
            pR = np.array([np.sum(data.rewards[in1, t] * (data.obs[in1, t] == c)) for c in range(3)]) / denom
            weight = np.sum(stage2 & (x == cell)) / (n - n1)
            A += weight * np.outer(mu, mu)
            bR += weight * np.outer(mu, pR)
            if t < T - 1:
                pD = np.array([np.sum(in1 & (data.obs[:, t + 1] == j) & (data.obs[:, t] == c))
                               for j in range(3) for c in range(3)]) / denom
                bD += weight * np.outer(mu, pD)
        H = A + lam2 * np.eye(6)
        reward.append(np.linalg.solve(H, bR).reshape(2, 3, 3))
        if t < T - 1:
            dynamic.append(np.linalg.solve(H, bD).reshape(2, 3, 3, 3))
    return reward, dynamic


@pytest.mark.parametrize("seed", [0, 1])
def test_delta_kernels_give_the_tabular_closed_form(seed):
    data = tabular_toy().sample(3000, np.random.default_rng(seed))
    est = _tabular(data, seed)
    reward, dynamic = _closed_form(data, seed, est.lambda1_, est.lambda2_)
    for got, want in zip(est.bridges_.reward, reward):
        np.testing.assert_allclose(got, want, atol=1e-10)
    for got, want in zip(est.bridges_.dynamic, dynamic):
        np.testing.assert_allclose(got, want, atol=1e-10)
    np.testing.assert_allclose(est.bridges_.initial, np.bincount(data.obs[:, 0], minlength=3) / data.n)


def test_default_regularisation_follows_the_calibration():
    est = _tabular(tabular_toy().sample(1000, np.random.default_rng(0)))
    assert est.n1_ == 700 and est.lambda1_ == pytest.approx(1 / 700)
    assert est.lambda2_ == pytest.approx(0.03 / np.sqrt(300))


def test_the_estimate_converges_to_the_true_bridges_and_values():
    pomdp = tabular_toy()
    truth = true_bridges(pomdp, DeltaFeatures(3))
    pols = deterministic_policies(3, 2, 3)
    v = np.array([pomdp.value(pi) for pi in pols])
    errs = {}
    for n in (1000, 16000):
        runs = [_tabular(pomdp.sample(n, np.random.default_rng(10 + s)), s) for s in range(2)]
        errs[n] = (np.mean([bridge_error(e.bridges_, truth)["dynamic"] for e in runs]),
                   np.mean([np.abs([e.value(pi) for pi in pols] - v).mean() for e in runs]))
    assert errs[16000][0] < 0.7 * errs[1000][0]
    assert errs[16000][1] < 0.5 * errs[1000][1] and errs[16000][1] < 0.03


def test_rbf_estimator_runs_on_continuous_observations():
    pomdp = continuous_toy()
    data = pomdp.sample(4000, np.random.default_rng(0))
    instrument = HistoryInstrument(2, n_fourier=32, random_state=0)
    est = TwoStageBridgeEstimator(RBFFeatures(np.linspace(-2.5, 2.5, 7), 0.8), instrument, 2, 4,
                                  cell_edges=pomdp.emission.edges, random_state=0).fit(data)
    assert est.bridges_.reward[0].shape == (2, 7, 4) and est.bridges_.dynamic[0].shape == (2, 7, 7, 4)
    pi = deterministic_policies(4, 2, 3)[6]
    assert abs(est.value(pi) - pomdp.value(pi)) < 0.3


def test_errors_before_fit_and_on_bad_input():
    est = TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3)
    with pytest.raises(NotFittedError):
        _ = est.bridges_
    data = tabular_toy().sample(100, np.random.default_rng(0))
    with pytest.raises(ValueError, match="split"):
        TwoStageBridgeEstimator(DeltaFeatures(3), est.instrument, 2, 3, split=1.5).fit(data)
    with pytest.raises(ValueError, match="actions must lie"):
        TwoStageBridgeEstimator(DeltaFeatures(3), est.instrument, 1, 3).fit(data)
    with pytest.raises(ValueError, match="lambda2"):
        TwoStageBridgeEstimator(DeltaFeatures(3), est.instrument, 2, 3, lambda2=-1.0).fit(data)
    with pytest.raises(ValueError, match="rewards contains NaN"):
        type(data)(data.o0, data.obs, data.actions, np.full(data.rewards.shape, np.nan))
