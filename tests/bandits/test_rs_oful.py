"""rs-OFUL: rarely switching OFUL, a batch per det V growth."""

import numpy as np
import pytest

from icml24.bandits import RarelySwitchingOFUL, end_of_optimism_instance, run_batched


def test_rs_oful_batch_is_det_doubling_length():
    bandit = end_of_optimism_instance(2, 0.2)
    policy = RarelySwitchingOFUL(switch_factor=0.5)
    policy.reset(bandit.arms, 1000, np.random.default_rng(0))
    policy.update(np.array([0, 1, 2, 2]), np.zeros(4))
    counts = policy.next_batch(1000)
    arm = int(np.argmax(counts))
    before = np.linalg.det(policy.stats_.gram)
    x = bandit.arms[arm]
    after_n = np.linalg.det(policy.stats_.gram + counts[arm] * np.outer(x, x))
    after_short = np.linalg.det(policy.stats_.gram + (counts[arm] - 1) * np.outer(x, x))
    assert after_short <= 1.5 * before < after_n


def test_rs_oful_switches_rarely():
    run = run_batched(RarelySwitchingOFUL(), end_of_optimism_instance(2, 0.2), 10_000, random_state=0)
    assert 5 < run.num_batches < 200


def test_rs_oful_rejects_bad_hyperparameters():
    with pytest.raises(ValueError, match="switch_factor must be > 0"):
        run_batched(RarelySwitchingOFUL(switch_factor=0.0), end_of_optimism_instance(), 100, random_state=0)
