"""PhaElimD: phased elimination on D-optimal designs."""

import pytest

from icml24.bandits import PhasedElimination, end_of_optimism_instance, run_batched


def test_phased_elimination_batches_and_best_arm():
    policy = PhasedElimination()
    run = run_batched(policy, end_of_optimism_instance(2, 0.2), 10_000, random_state=0)
    assert run.num_batches <= 5
    assert 0 in policy.active_ and 1 not in policy.active_  # the gap-1 arm e_2 is eliminated, the best kept
    assert run.pulls[1] < 0.15 * 10_000 < run.pulls[0]


def test_phased_elimination_rejects_bad_hyperparameters():
    with pytest.raises(ValueError, match="design_tol contains NaN"):
        run_batched(PhasedElimination(design_tol=float("nan")), end_of_optimism_instance(), 100, random_state=0)
