"""Batched play: the policy interface, batch truncation and ``run_batched``."""

import warnings

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.bandits import BatchedPolicy, LinearBandit, LinTS, PhasedElimination, end_of_optimism_instance, run_batched
from icml24.bandits.batched import fit_to_horizon


def test_fit_to_horizon_modes():
    counts = np.array([10, 30, 60])
    assert fit_to_horizon(counts, 50).sum() == 50
    np.testing.assert_array_equal(fit_to_horizon(counts, 50), [5, 15, 30])
    np.testing.assert_array_equal(fit_to_horizon(counts, 50, "in_order"), [10, 30, 10])
    with pytest.raises(ValueError, match="truncation"):
        fit_to_horizon(counts, 50, "random")


def test_run_records_regret_batches_and_pulls():
    bandit = end_of_optimism_instance(2, 0.2)
    run = run_batched(PhasedElimination(), bandit, 3000, random_state=0)
    assert run.regret.shape == (3000,) and np.all(np.diff(run.regret) >= 0)
    assert run.batch_ends[-1] == 3000 and run.num_batches == len(run.batch_ends) and run.pulls.sum() == 3000
    assert run.final_regret == pytest.approx(float(bandit.gaps @ run.pulls))


def test_a_policy_used_before_reset_raises_not_fitted():
    policy = PhasedElimination()
    with pytest.raises(NotFittedError, match="call reset"):
        policy.next_batch(10)
    with pytest.raises(AttributeError):  # NotFittedError is an AttributeError: getattr defaults still work
        _ = policy.stats_
    assert getattr(policy, "info_", "none") == "none"


class _Broken(BatchedPolicy):
    def next_batch(self, remaining):
        return np.zeros(self.arms_.shape[0], dtype=np.int64)


def test_run_rejects_an_empty_batch_and_a_bad_horizon():
    bandit = end_of_optimism_instance(2, 0.2)
    with pytest.raises(ValueError, match="at least one pull"):
        run_batched(_Broken(), bandit, 10, random_state=0)
    with pytest.raises(ValueError, match="horizon"):
        run_batched(PhasedElimination(), bandit, 0, random_state=0)


def test_no_tie_warning_for_policies_that_do_not_need_a_unique_best():
    bandit = LinearBandit(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_batched(PhasedElimination(), bandit, 200, random_state=0)


def test_random_state_int_seed_sequence_and_generator():
    """An int is SeedSequence(int) (the streams of the former seed=), a Generator spawns its own children."""
    bandit = end_of_optimism_instance(2, 0.2)
    run = run_batched(LinTS(), bandit, 500, random_state=3)
    same = run_batched(LinTS(), bandit, 500, random_state=np.random.SeedSequence(3))
    np.testing.assert_array_equal(run.regret, same.regret)
    rng = np.random.default_rng(3)  # two runs from one generator draw different streams
    first, second = (run_batched(LinTS(), bandit, 500, random_state=rng) for _ in range(2))
    assert not np.array_equal(first.regret, second.regret)
    noise = bandit.pull([0, 1, 2], random_state=5)
    np.testing.assert_array_equal(noise, bandit.pull([0, 1, 2], np.random.default_rng(5)))
