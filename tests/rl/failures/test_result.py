import numpy as np
import pytest

from icml24.rl.failures import ExplorationResult


def test_counts_rates_and_concatenation():
    a = ExplorationResult([1, 2, 2], [True, False, True], [5.0, -1.0, 7.0])
    b = ExplorationResult([3], [False], [-1.0], q_softmax=np.full((1, 4), 0.25))
    assert a.num_queries == 3 and a.failures_per_query == pytest.approx(2 / 3)
    assert a.distinct_failure_actions == 2
    both = a + b
    assert both.num_queries == 4 and both.failures_per_query == 0.5 and both.q_softmax.shape == (1, 4)


def test_lengths_must_match():
    with pytest.raises(ValueError, match="one entry per query"):
        ExplorationResult([1, 2], [True], [1.0, 2.0])
