"""Confidence set and pessimistic policy optimization: exact block minimisers, the lower bound, the norm ball."""

import numpy as np
import pytest
from scipy.optimize import minimize

from icml24._validation import NotFittedError
from icml24.rl import (
    ConfidenceSet,
    DeltaFeatures,
    HistoryInstrument,
    PessimisticPolicyOptimizer,
    TwoStageBridgeEstimator,
    deterministic_policies,
    tabular_toy,
    true_bridges,
)
from icml24.rl.confounded.pessimism import _Block


@pytest.mark.parametrize("seed", range(6))
def test_block_minimiser_matches_a_generic_solver(seed):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    H = basis @ np.diag([2.0, 1.0, 0.5, 1e-3]) @ basis.T  # one weak direction (the null space of the moments)
    centre, grad = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    radius = np.linalg.norm(centre) * (1.1 if seed % 2 else 5.0)  # the ball binds or not
    blk = _Block(centre, H, xi=0.5, radius=radius)
    ours = blk.argmin_linear(grad)
    assert blk.contains(ours, tol=1e-6)
    cons = [{"type": "ineq", "fun": lambda v: 0.5 - blk.excess(v)},
            {"type": "ineq", "fun": lambda v: radius**2 - (v**2).sum()}]
    ref = minimize(lambda v: grad.ravel() @ v, centre.ravel(), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 500})
    assert (grad * ours).sum() <= ref.fun + 1e-4 * (1 + abs(ref.fun))


@pytest.fixture(scope="module")
def fitted():
    pomdp = tabular_toy()
    data = pomdp.sample(20000, np.random.default_rng(0))
    est = TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3,
                                  random_state=0).fit(data)
    return pomdp, est


def test_the_centre_is_inside_and_far_bridges_are_not(fitted):
    pomdp, est = fitted
    cs = ConfidenceSet(0.5).fit(est)
    assert cs.contains(est.bridges_).all()
    far = est.bridges_.with_blocks([b + 1.0 for b in est.bridges_.blocks()])
    assert not cs.contains(far).any()


def test_lower_value_is_below_plug_in_and_below_truth_when_covered(fitted):
    pomdp, est = fitted
    truth = true_bridges(pomdp, DeltaFeatures(3))
    cs = ConfidenceSet(2.0, radius_scale=1.5).fit(est)
    assert cs.contains(truth).all()  # a generous set covers the truth at N = 20k
    for pi in deterministic_policies(3, 2, 3)[[0, 3, 6]]:
        low, worst = cs.lower_value(pi)
        assert low <= est.value(pi) and low <= pomdp.value(pi)
        assert cs.contains(worst).all()


def test_without_the_norm_ball_the_lower_value_runs_away(fitted):
    _, est = fitted
    pi = deterministic_policies(3, 2, 3)[3]
    with_ball = ConfidenceSet(0.5, radius_scale=1.25).fit(est).lower_value(pi)[0]
    without = ConfidenceSet(0.5, radius_scale=None).fit(est).lower_value(pi)[0]
    assert without < with_ball - 1.0


def test_optimizer_picks_the_best_lower_value(fitted):
    pomdp, est = fitted
    pols = deterministic_policies(3, 2, 3)
    opt = PessimisticPolicyOptimizer(xi_scale=0.5).fit(est, pols)
    assert opt.best_index_ == int(np.argmax(opt.lower_values_))
    assert np.all(opt.lower_values_ <= opt.plug_in_values_ + 1e-12)
    np.testing.assert_array_equal(opt.policy_, pols[opt.best_index_])
    with pytest.raises(NotFittedError):
        _ = PessimisticPolicyOptimizer().policy_
    with pytest.raises(ValueError, match="policies must be"):
        PessimisticPolicyOptimizer().fit(est, pols[0])
