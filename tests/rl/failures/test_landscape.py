import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.rl.failures import ExplorationResult, FailureLandscape, digit_concepts, landscape_distance, value_distance


def _result(grid, hot, n=2000, seed=0):
    rng = np.random.default_rng(seed)
    actions = rng.integers(grid.num_actions, size=n)
    failures = np.isin(actions, hot) | (rng.random(n) < 0.02)
    q = rng.dirichlet(np.ones(grid.num_actions), size=50)
    return ExplorationResult(actions, failures, np.where(failures, 20.0, -1.0), q_softmax=q)


def test_statistics_ranking_and_precision_against_a_known_truth():
    grid = digit_concepts()
    hot = np.arange(100, 110)
    land = FailureLandscape(grid).fit(_result(grid, hot))
    truth = np.zeros(125)
    truth[hot] = 0.9
    assert set(land.top_actions(10)) == set(hot)
    assert land.precision_at_k(truth, 10) == 1.0
    shuffled = np.zeros(125)
    shuffled[:10] = 0.9
    assert land.precision_at_k(shuffled, 10) <= 0.1
    assert land.q_mean_.shape == (125,) and land.q_std_rank_.min() == 1 and land.q_std_rank_.max() == 125
    assert land.failure_distribution().sum() == pytest.approx(1.0)


def test_ties_at_the_kth_true_rate_count_as_relevant():
    grid = digit_concepts()
    land = FailureLandscape(grid).fit(_result(grid, np.arange(10)))
    truth = np.zeros(125)
    truth[:20] = 0.5  # 20 actions tie for the top
    assert land.precision_at_k(truth, 10) == 1.0


def test_uncertain_actions_are_the_rarely_visited_ones():
    grid = digit_concepts()
    actions = np.concatenate([np.repeat(np.arange(124), 40), [124]])
    land = FailureLandscape(grid).fit(ExplorationResult(actions, np.zeros(len(actions), bool), -np.ones(len(actions))))
    assert np.flatnonzero(land.uncertain_).tolist() == [124]


def test_not_fitted_and_the_plot():
    grid = digit_concepts()
    with pytest.raises(NotFittedError):
        FailureLandscape(grid).top_actions(3)
    import matplotlib

    matplotlib.use("Agg")
    ax = FailureLandscape(grid).fit(_result(grid, [3])).plot()
    assert ax.get_xlabel() == "rotation"


def test_wasserstein_distance_is_zero_on_itself_and_grows_with_the_shift():
    grid = digit_concepts()
    a = np.zeros(125)
    a[grid.action_of((0, 0, 0))] = 1
    near, far = np.zeros(125), np.zeros(125)
    near[grid.action_of((1, 0, 0))] = 1
    far[grid.action_of((4, 0, 0))] = 1
    assert landscape_distance(a, a, grid) == pytest.approx(0, abs=1e-9)
    assert landscape_distance(a, near, grid) == pytest.approx(1.0)
    assert landscape_distance(a, far, grid) == pytest.approx(4.0)
    assert value_distance([0, 1], [0, 1]) == 0 and value_distance([0, 1], [1, 2]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="one weight per action"):
        landscape_distance(a[:5], a, grid)


@pytest.mark.parametrize("k", [0, -1, 126, 2.5, True])
def test_precision_at_k_refuses_a_k_outside_the_grid(k):
    grid = digit_concepts()
    land = FailureLandscape(grid).fit(_result(grid, np.arange(10)))
    with pytest.raises(ValueError, match="k must be"):
        land.precision_at_k(np.zeros(125), k=k)
    with pytest.raises(ValueError, match="NaN"):
        land.precision_at_k(np.full(125, np.nan), k=10)
    with pytest.raises(TypeError, match="ExplorationResult"):
        FailureLandscape(grid).fit(np.zeros(3))


@pytest.mark.parametrize("a,b,message", [
    ([0.1, np.nan], [0.2, 0.3], "a contains NaN or infinite"),
    ([0.1, 0.2], [np.inf, 0.3], "b contains NaN or infinite"),
    ([], [0.2, 0.3], "a is empty"),
])
def test_value_distance_refuses_nan_and_empty_values(a, b, message):
    with pytest.raises(ValueError, match=message):
        value_distance(a, b)
