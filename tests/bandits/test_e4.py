"""E4 (Algorithm 1 of Ren, Jin & Xu): batches, the allocation batch, the stopping test and its fallback."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.bandits import E4, LinearBandit, end_of_optimism_instance, random_instance, run_batched


def test_e4_finds_best_arm_on_easy_two_arm_instance():
    bandit = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 0.2]))
    run = run_batched(E4(), bandit, 5000, random_state=0)
    assert run.info["chernoff_passed"] and run.num_batches == 3
    assert run.pulls[0] > 0.95 * 5000
    assert run.regret.shape == (5000,) and np.all(np.diff(run.regret) >= 0)
    assert run.final_regret == pytest.approx(0.8 * run.pulls[1])


def test_e4_same_seed_same_regret_and_three_batches_on_eoo():
    bandit = end_of_optimism_instance(2, 0.2)
    first = run_batched(E4(), bandit, 10_000, random_state=7)
    second = run_batched(E4(), bandit, 10_000, random_state=7)
    assert first.final_regret == second.final_regret
    np.testing.assert_array_equal(first.batch_ends, second.batch_ends)
    assert first.num_batches == 3 and first.batch_ends[-1] == 10_000


def test_e4_batch_two_follows_the_allocation():
    bandit = end_of_optimism_instance(2, 0.2)
    policy = E4()
    run = run_batched(policy, bandit, 10_000, random_state=1)
    explore = run.batch_ends[0]
    log_t = np.log(10_000)
    alpha = (1 + 1 / np.log(log_t)) * (1 + 2 * np.log(log_t) / log_t)
    batch_two = run.batch_ends[1] - explore
    expected = np.ceil(np.minimum(policy.allocation_.weights * alpha * log_t, min(log_t**2, 10_000 / 6))).sum()
    assert batch_two == expected


def test_e4_falls_back_to_elimination_when_test_fails():
    # d=20, K=50, T=2000: batch 2 is capped at T/(2K), so the Chernoff test cannot pass
    bandit = random_instance(50, 20, np.random.default_rng(0))
    run = run_batched(E4(gamma=0.5), bandit, 2000, random_state=0)
    assert not run.info["chernoff_passed"]
    assert run.num_batches >= 3


def test_e4_warns_on_tied_best_arms_and_only_the_official_gamma_goes_linear():
    bandit = LinearBandit(np.array([[1.0, 0.0], [0.9, 0.2], [0.0, 1.0]]), np.array([1.0, 0.5]))
    with pytest.warns(UserWarning, match=r"arms \[0, 1\] tie for the best mean: E4's stopping test"):
        ours = run_batched(E4(), bandit, 10_000, random_state=0)
    with pytest.warns(UserWarning, match="tie for the best mean"):
        official = run_batched(E4(gamma=10), bandit, 10_000, random_state=0)
    assert not ours.info["chernoff_passed"] and not official.info["chernoff_passed"]
    assert ours.info["elimination_batches"] >= 3 and ours.final_regret < 0.1 * 10_000  # elimination drops arm 2
    assert official.info["elimination_batches"] == 1 and official.final_regret > 0.1 * 10_000


class _NeverStops(E4):
    """E4 whose stopping test cannot pass: the fallback path is forced."""

    def stopping_threshold(self, t):
        return float("inf")


@pytest.mark.parametrize("seed", [0, 1])
def test_e4_with_a_failing_stopping_test_eliminates_down_to_one_arm_on_a_random_instance(seed):
    rng = np.random.default_rng(seed)  # random arms in [0, 0.7]^5 and arm 0 = theta = e1: every gap >= 0.3
    arms = rng.uniform(0, 0.7, (20, 5))
    arms[0] = np.eye(5)[0]
    bandit = LinearBandit(arms, np.eye(5)[0])
    horizon = 100_000
    policy = _NeverStops()
    run = run_batched(policy, bandit, horizon, random_state=seed)
    assert not run.info["chernoff_passed"] and run.info["chernoff_threshold"] == float("inf")
    assert np.log(horizon) ** 2 < horizon  # T_3 = (log T)^{1+gamma} fits in the horizon
    assert run.info["elimination_batches"] >= 2 and policy.phase_ == "exploit"
    assert policy.active_.tolist() == [bandit.best_arm]  # one arm left: the optimal one
    last = run.batch_ends[-1] - run.batch_ends[-2]
    assert run.regret[-1] == run.regret[run.batch_ends[-2] - 1] and last > 0.3 * horizon  # commits to it
    # the official gamma = 10 never gets there: batch 3 ((log T)^11 pulls) is cut by the horizon
    official = _NeverStops(gamma=10)
    run_official = run_batched(official, bandit, horizon, random_state=seed)
    assert run_official.info["elimination_batches"] == 1 and run_official.num_batches == 3
    assert run_official.final_regret > 3 * run.final_regret


def test_e4_rejects_tiny_horizon_and_a_one_arm_bandit():
    with pytest.raises(ValueError, match="horizon"):
        run_batched(E4(), end_of_optimism_instance(), 10, random_state=0)
    with pytest.raises(ValueError, match="E4 needs at least 2 arms, got 1"):
        run_batched(E4(), LinearBandit(np.array([[1.0, 0.0]]), np.array([1.0, 0.0])), 100, random_state=0)


@pytest.mark.parametrize("kwargs,match", [({"gamma": float("nan")}, "gamma contains NaN"),
                                          ({"gamma": -1.0}, "gamma must be > 0"),
                                          ({"gamma": 0.0}, "gamma must be > 0"),
                                          ({"rate": "fast"}, "rate must be one of minimax, instance"),
                                          ({"reg": 0.0}, "reg must be > 0"),
                                          ({"design_tol": float("inf")}, "design_tol contains NaN")])
def test_e4_rejects_bad_hyperparameters(kwargs, match):
    policy = E4(**kwargs)  # stored as given (scikit-learn's contract), checked when a run starts
    assert all(getattr(policy, name) is value for name, value in kwargs.items())
    with pytest.raises(ValueError, match=match):
        run_batched(policy, end_of_optimism_instance(), 100, random_state=0)


def test_e4_before_reset_raises_not_fitted():
    with pytest.raises(NotFittedError, match="call reset"):
        E4().next_batch(100)
    with pytest.raises(NotFittedError):
        _ = E4().allocation_


def test_the_two_exploration_rates_differ_only_in_the_elimination_grid():
    """minimax: T_l = T^{1 - 2^{-l}} (O(log log T) batches); instance (our reading): T_l = 4^l d log(K T^2), so
    eps_l = 2^{-l} halves every batch (O(log T) batches)."""
    arms = random_instance(20, 10, 3).arms
    horizon = 100_000
    minimax, instance = E4(), E4(rate="instance")
    for e4 in (minimax, instance):
        e4.reset(arms, horizon, np.random.default_rng(0))
        e4.level_ = 0
        assert e4._elimination_budget() == pytest.approx(np.log(horizon) ** 2)  # batch 3 is shared
        e4.level_ = 2
    assert minimax._elimination_budget() == pytest.approx(horizon ** 0.75)
    budget = instance._elimination_budget()
    assert budget == pytest.approx(16 * 10 * np.log(20 * horizon**2))
    assert np.sqrt(10 * np.log(20 * horizon**2) / budget) == pytest.approx(0.25)  # eps_2 = 2^{-2}


def test_the_stopping_record_says_when_e4_committed_and_whether_the_cap_bound():
    bandit = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 0.2]))
    run = run_batched(E4(), bandit, 5000, random_state=0)
    assert run.info["commit_batch"] == 2 and run.info["chernoff_passed"]
    assert run.info["chernoff_statistic"] > run.info["chernoff_threshold"]
    hard = random_instance(20, 10, 100)  # gaps down to 0.004: the (log T)^2 cap binds, the test fails
    run = run_batched(E4(), hard, 20_000, random_state=100)
    assert not run.info["chernoff_passed"] and run.info["cap_binding_arms"] >= 1
    assert run.info["commit_batch"] == 0 or 3 <= run.info["commit_batch"] <= run.num_batches  # after elimination


class _FixedEstimate:
    """Stands in for the ridge estimate so that the elimination rule sees exact means: ``theta`` never moves."""

    def __init__(self, theta):
        self.theta = np.asarray(theta, dtype=float)

    def add(self, arm_sequence, rewards):
        pass


@pytest.mark.parametrize("rate, level", [("minimax", 0), ("minimax", 1), ("minimax", 3), ("instance", 2)])
def test_elimination_drops_exactly_the_arms_more_than_two_eps_below_the_best(rate, level):
    """Alg. 1 step 4: after elimination batch l, keep the arms whose estimated mean is within 2 eps_l of the best,
    eps_l = sqrt(d log(K T^2) / T_l). A gap between eps_l and 2 eps_l survives; a gap above 2 eps_l goes."""
    horizon, dim = 100_000, 2
    gaps_in_eps = np.array([0.0, 0.5, 1.5, 2 * (1 - 1e-9), 2 * (1 + 1e-9), 2.5, 4.0])
    e4 = E4(rate=rate)
    num_arms = gaps_in_eps.size
    budget = {"minimax": horizon ** (1 - 2.0 ** -level), "instance": 4.0 ** level * dim * np.log(num_arms * horizon**2)}
    t_l = np.log(horizon) ** 2 if level == 0 else budget[rate]  # batch 3 is T_3 = (log T)^{1 + gamma}, gamma = 1
    eps = np.sqrt(dim * np.log(num_arms * horizon**2) / t_l)
    arms = np.column_stack([1.0 - gaps_in_eps * eps, np.zeros(num_arms)])  # theta = e_1: the mean is the first entry
    e4.reset(arms, horizon, np.random.default_rng(0))
    e4.phase_, e4.level_, e4.stats_ = "eliminate", level, _FixedEstimate([1.0, 0.0])
    e4.update(np.array([], dtype=np.int64), np.array([]))
    np.testing.assert_array_equal(e4.active_, [0, 1, 2, 3])  # 0.5, 1.5 and just under 2 eps_l survive
    assert e4.level_ == level + 1 and e4.info_["elimination_batches"] == 1 and e4.phase_ == "eliminate"
