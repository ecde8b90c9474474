"""The failure-landscape reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import inspect
import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import failure_landscape as paper


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("failure-landscape"), seeds=[0])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    for name, summary in smoke_metrics.items():
        assert all(math.isfinite(v) for v in summary.values())
        assert {"global_failure_rate", "top10_true_failure_rate"} <= set(summary)  # the regime is in the metrics
        assert 0 < summary["global_failure_rate"] < 1
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}
    explore = smoke_metrics["explore"]
    for name in ("dqn", "official_dqn", *paper.BASELINES):
        assert 0 <= explore[f"{name}_failures_per_query"] <= 1 and 0 <= explore[f"{name}_precision_at_10"] <= 1
    assert explore["official_dqn_updates"] == 0  # the official configuration as it runs: no gradient update


def test_a_sklearn_model_under_test_runs_through_the_experiment():
    from icml24.core import Context

    metrics = paper.explore.fn(Context(seed=0), budget=200, rollout=50, nut="logistic")
    assert 0 < metrics["global_failure_rate"] < 1 and 0.8 < metrics["clean_accuracy"] <= 1


def _good():
    explore = {"dqn_over_random": 1.7, "dqn_precision_at_10": 0.8}
    explore |= {f"dqn_minus_{name}_lower": 0.02 for name in paper.BASELINES}
    return {
        "explore": explore,
        "restructure": {"mode_relative_drop": 0.8, "mode_relative_drop_lower": 0.6, "clean_accuracy_change_lower": -1.5,
                        "landscape_w1_minus_seed_to_seed_lower": 0.2},
    }


def _claim(fragment):
    (found,) = [c for c in paper.CLAIMS if fragment in c.text]
    return found


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"dqn_over_random": 1.1},  # the explorer is barely better than random search
        {"dqn_minus_epsilon_greedy_lower": -0.1},  # epsilon-greedy finds more failures
        {"dqn_minus_threshold_lower": -0.01},
        {"dqn_minus_bayes_opt_lower": 0.0},  # a tie is no win
        {"mode_relative_drop": 0.2},  # the failure mode hardly fades
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_the_claims_judge_every_baseline_of_the_paper_at_equal_budget():
    texts = " ".join(c.text for c in paper.CLAIMS if c.experiment is paper.explore)
    for label in ("random search", "epsilon-greedy", "threshold", "Bayesian optimization"):
        assert label in texts
    assert paper.explore.seeds["quick"] >= 5 and paper.restructure.seeds["quick"] >= 5


@pytest.mark.parametrize("worse", [{"dqn_precision_at_10": 0.4}, {"dqn_minus_random_lower": -0.01}])
def test_explorer_claim_also_fails_on_a_wrong_landscape_or_within_the_noise(worse):
    assert _claim("random search").evaluate({**_good()["explore"], **worse}).status == "fails"


@pytest.mark.parametrize("worse", [{"clean_accuracy_change_lower": -4.0}, {"mode_relative_drop_lower": -0.1},
                                   {"landscape_w1_minus_seed_to_seed_lower": -0.3}])  # within the noise floor
def test_restructure_claim_fails_when_accuracy_drops_or_nothing_shifts_beyond_the_noise(worse):
    assert _claim("restructuring").evaluate({**_good()["restructure"], **worse}).status == "fails"


def test_lower_bounds_use_the_spread_over_seeds_and_one_seeds_own_noise_at_smoke():
    assert paper._lower_bound([0.1]) == 0.1 and paper._lower_bound([0.1], 0.03) == pytest.approx(0.04)
    assert paper._lower_bound([0.1, 0.3], 99.0) == pytest.approx(0.2 - 2 * 0.1)


def test_settings_follow_the_paper():
    full = paper.PAPER.experiments["explore"].full
    assert full["budget"] - full["rollout"] == 50_000 and full["rollout"] == 5000  # 50k DQN steps, 5000 roll-outs
    from icml24.rl import OFFICIAL_SB3_2_2_1

    assert OFFICIAL_SB3_2_2_1["learning_starts"] > full["budget"] - full["rollout"] - 1  # never learns at 50k
    defaults = {k: v.default for k, v in inspect.signature(paper.restructure.fn).parameters.items()}
    assert defaults["probability"] == 0.5
    from icml24.rl import DQNExplorer, LastLayerFinetuner

    dqn = DQNExplorer()
    assert (dqn.exploration_initial_eps, dqn.exploration_final_eps, dqn.buffer_size) == (1.0, 0.6, 10_000)
    tuner = LastLayerFinetuner()
    assert (tuner.lr, tuner.momentum, tuner.probability) == (1e-3, 0.9, 0.5)
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)


def test_the_nulls_put_random_search_and_no_restructuring_in_the_method_slot():
    from icml24.core import Context

    ctx = Context(seed=0)
    metrics = paper.restructure.fn(ctx, budget=200, rollout=50, epochs=1, restructuring="none")
    assert metrics["mode_relative_drop"] == 0.0 and metrics["true_landscape_w1"] < 1e-6  # the model is unchanged
    assert metrics["clean_accuracy_change_points"] == 0.0 and metrics["landscape_w1"] > 0  # seeds alone shift it
    with pytest.raises(ValueError, match="explorer"):
        paper.explore.fn(ctx, budget=200, rollout=50, explorer="dqn2")
    with pytest.raises(ValueError, match="nut"):
        paper.explore.fn(ctx, budget=200, rollout=50, nut="svm")
