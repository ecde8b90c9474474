"""The failure-landscape reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import inspect
import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import failure_landscape as paper
from icml24.papers.failure_landscape import claims, experiments, instances


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
    for name in ("dqn", "official_dqn", *experiments.BASELINES):
        assert 0 <= explore[f"{name}_failures_per_query"] <= 1 and 0 <= explore[f"{name}_precision_at_10"] <= 1
    assert explore["official_dqn_updates"] == 0  # the official configuration as it runs: no gradient update


def test_a_sklearn_model_under_test_runs_through_the_experiment():
    from icml24.core import Context

    metrics = experiments.explore.fn(Context(seed=0), budget=200, rollout=50, nut="logistic")
    assert 0 < metrics["global_failure_rate"] < 1 and 0.8 < metrics["clean_accuracy"] <= 1


def _good():
    explore = {"dqn_over_random": 1.7, "dqn_precision_at_10": 0.8}
    explore |= {f"dqn_minus_{name}_lower": 0.02 for name in experiments.BASELINES}
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
    texts = " ".join(c.text for c in paper.CLAIMS if c.experiment is experiments.explore)
    for label in ("random search", "epsilon-greedy", "threshold", "Bayesian optimization"):
        assert label in texts
    assert experiments.explore.seeds["quick"] >= 5 and experiments.restructure.seeds["quick"] >= 5


@pytest.mark.parametrize("worse", [{"dqn_precision_at_10": 0.4}, {"dqn_minus_random_lower": -0.01}])
def test_explorer_claim_also_fails_on_a_wrong_landscape_or_within_the_noise(worse):
    assert _claim("random search").evaluate({**_good()["explore"], **worse}).status == "fails"


@pytest.mark.parametrize("worse", [{"clean_accuracy_change_lower": -4.0}, {"mode_relative_drop_lower": -0.1},
                                   {"landscape_w1_minus_seed_to_seed_lower": -0.3}])  # within the noise floor
def test_restructure_claim_fails_when_accuracy_drops_or_nothing_shifts_beyond_the_noise(worse):
    assert _claim("restructuring").evaluate({**_good()["restructure"], **worse}).status == "fails"


def test_lower_bounds_use_the_spread_over_seeds_and_one_seeds_own_noise_at_smoke():
    assert experiments._lower_bound([0.1]) == 0.1 and experiments._lower_bound([0.1], 0.03) == pytest.approx(0.04)
    assert experiments._lower_bound([0.1, 0.3], 99.0) == pytest.approx(0.2 - 2 * 0.1)


def test_settings_follow_the_paper():
    full = paper.PAPER.experiments["explore"].full
    assert full["budget"] - full["rollout"] == 50_000 and full["rollout"] == 5000  # 50k DQN steps, 5000 roll-outs
    from icml24.rl import OFFICIAL_SB3_2_2_1

    assert OFFICIAL_SB3_2_2_1["learning_starts"] > full["budget"] - full["rollout"] - 1  # never learns at 50k
    defaults = {k: v.default for k, v in inspect.signature(experiments.restructure.fn).parameters.items()}
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
    metrics = experiments.restructure.fn(ctx, budget=200, rollout=50, epochs=1, restructuring="none")
    assert metrics["mode_relative_drop"] == 0.0 and metrics["true_landscape_w1"] < 1e-6  # the model is unchanged
    assert metrics["clean_accuracy_change_points"] == 0.0 and metrics["landscape_w1"] > 0  # seeds alone shift it
    with pytest.raises(ValueError, match="explorer"):
        experiments.explore.fn(ctx, budget=200, rollout=50, explorer="dqn2")
    with pytest.raises(ValueError, match="nut"):
        experiments.explore.fn(ctx, budget=200, rollout=50, nut="svm")


def _tiny_pool(n=60):
    from icml24.data import digits

    x, y, shape = digits()
    return x[:n].reshape(-1, *shape), y[:n]


def test_the_models_under_test_of_the_family_predict_digits_and_the_torch_ones_have_a_head():
    from icml24.core import Context
    from icml24.rl import clean_accuracy

    x, y = _tiny_pool(300)
    for nut in instances.NUTS:
        model = instances.model_under_test(Context(seed=0), nut, x[:200], y[:200])
        assert clean_accuracy(model, x[200:], y[200:]) > 0.5, nut  # well above chance (0.1) on held-out digits
        if nut in instances.TORCH_NUTS:  # restructuring calls features on [n, H, W] images, then the head
            import torch

            images = torch.as_tensor(x[:5], dtype=torch.float32)
            assert isinstance(model.head, torch.nn.Linear)
            assert torch.allclose(model.head(model.features(images)), model(images))
    with pytest.raises(ValueError, match="nut"):
        instances.model_under_test(Context(seed=0), "svm", x, y)
    family = experiments.explore.family
    assert family.share == 1.0 and {} in family.members.values()
    assert {o.get("nut") for o in family.members.values()} == {None, "cnn", "forest", "logistic"}  # issue 56


def test_the_oracle_explorer_queries_only_failing_cells_and_maps_the_exhaustive_table():
    import numpy as np

    from icml24.rl import FailureEnv, FailureLandscape, digit_concepts, exhaustive_failure_rates

    x, y = _tiny_pool()
    model = instances.model_under_test(__import__("icml24.core").core.Context(seed=0), "logistic", x, y)
    grid = digit_concepts("wide")
    truth = exhaustive_failure_rates(model, x, y, grid)
    env = FailureEnv(model, x, y, grid, precompute=True)
    queries, table = instances.oracle_explore(env, truth.failures, 200, np.random.default_rng(0), seed=0)
    any_failing = truth.failures.any(axis=0).mean()
    assert queries.num_queries == 200 and queries.failures_per_query >= truth.rates.max()
    assert abs(queries.failures_per_query - any_failing) < 0.15  # a failing cell wherever the image has one
    assert FailureLandscape(grid).fit(table).precision_at_k(truth.rates, 10) == 1.0


def test_the_perfect_restructuring_removes_the_mode_and_changes_nothing_else():
    import numpy as np
    import torch

    from icml24.rl import clean_accuracy, digit_concepts, exhaustive_failure_rates

    x, y = _tiny_pool()
    model = instances.model_under_test(__import__("icml24.core").core.Context(seed=0), "logistic", x, y)
    grid = digit_concepts("wide")
    truth = exhaustive_failure_rates(model, x, y, grid)
    mode = int(np.argmax(truth.rates))
    fixed = instances.ModeRemoved(model, torch.as_tensor(x, dtype=torch.float32), y, grid, mode)
    after = exhaustive_failure_rates(fixed, x, y, grid)
    assert truth.rates[mode] > 0 and after.rates[mode] == 0.0
    others = np.arange(grid.num_actions) != mode
    assert np.array_equal(after.failures[others], truth.failures[others])
    assert clean_accuracy(fixed, x, y) == clean_accuracy(model, x, y)


def test_a_rounding_size_gain_does_not_count():
    good = _good()
    for name in experiments.BASELINES:
        metrics = {**good["explore"], f"dqn_minus_{name}_lower": 1e-12}
        assert claims._beats(name)(metrics) is False
        assert claims._beats(name)({**metrics, f"dqn_minus_{name}_lower": 1 / 55_000}) is True  # one query's step
    for key in ("mode_relative_drop_lower", "landscape_w1_minus_seed_to_seed_lower"):
        assert _claim("restructuring").evaluate({**good["restructure"], key: 1e-12}).status == "fails"


def test_the_oracles_and_families_sit_in_the_methods_slots():
    assert experiments.explore.oracle.overrides == {"explorer": "oracle"}
    assert experiments.restructure.oracle.overrides == {"restructuring": "oracle"}
    members = experiments.restructure.family.members.values()
    assert {} in members and all(o.get("nut", "mlp") in instances.TORCH_NUTS for o in members)
