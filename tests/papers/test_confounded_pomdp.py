"""The confounded-pomdp reproduction: seeds through the runner, summaries, claims that can fail."""

import math

import numpy as np
import pytest

from icml24.core import labelled, select
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import confounded_pomdp as paper
from icml24.papers.confounded_pomdp import experiments


@pytest.mark.parametrize("name", ["tabular", "partial_coverage"])
def test_two_seeds_through_the_runner_give_decidable_claims(name, tmp_path):
    exp = paper.PAPER.experiments[name]
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=tmp_path)]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    assert records[0].metrics != records[1].metrics
    summary = aggregate(records, exp)
    assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def _per_seed(errors_by_n, naive_bias, regrets, covered=(1.0, 1.0), violations=(0.0, 0.0), plugin=0.0, naive=0.0):
    out = []
    for seed in range(2):
        m = {}
        for i, (n, err) in enumerate(errors_by_n.items()):
            for name in ("bridge", "naive", "is", "dr"):
                e = err if name == "bridge" else naive_bias
                m[labelled(f"{name}_error", n=n)] = e
                m.update({labelled(f"{name}_signed", n=n, policy=k): e * (1 if seed == 0 else 0.5) for k in range(8)})
            m[labelled("bridge_l2_reward", n=n)] = err
            m[labelled("regret_pessimistic", n=n)] = regrets[i] + 0.01 * seed
            m[labelled("regret_plugin", n=n)], m[labelled("regret_naive", n=n)] = plugin, naive
            m[labelled("covered", n=n)], m[labelled("violations", n=n)] = covered[seed], violations[seed]
            m[labelled("width", n=n)] = 2.0
            m[labelled("lower_gap", n=n)], m[labelled("lower_gap_max", n=n)] = 1.0 + seed, 3.0
        m.update({labelled(f"control_{name}_signed", policy=k): 0.0 for name in ("is", "naive") for k in range(8)})
        out.append(m)
    return out


def test_summary_reads_bias_slope_regrets_and_coverage():
    per_seed = _per_seed({1000: 0.1, 10000: 0.01}, 0.3, regrets=(0.4, 0.0), covered=(1.0, 0.0),
                         violations=(0.0, 3.0), plugin=0.1)
    s = experiments._tabular_summary(per_seed)
    assert s["bridge_error_slope"] == pytest.approx(-1.0)
    assert s["naive_bias_min"] == pytest.approx(0.3 * 0.75)  # |mean of the signed errors over seeds|
    assert s["regret_pessimistic_largest"] == pytest.approx(0.005)
    assert s["regret_pessimistic_smallest"] == pytest.approx(0.405)
    assert s["pessimistic_drop"] == pytest.approx(0.4) and s["pessimistic_drop_se"] == pytest.approx(0.0)
    assert s["plugin_minus_pessimistic_largest"] == pytest.approx(0.095)
    assert s["plugin_minus_pessimistic_se_largest"] == pytest.approx(0.005)  # paired SE over the two seeds
    assert s["covered_fraction"] == 0.5 and s["violations_when_covered"] == 0.0  # seed 1 is uncovered
    assert s["lower_gap_largest"] == pytest.approx(1.5) and s["lower_gap_max"] == 3.0 and s["width_largest"] == 2.0


def test_summary_of_a_null_run_without_bridges_or_confidence_set():
    per_seed = _per_seed({1000: 0.1, 10000: 0.01}, 0.3, regrets=(0.0, 0.0))
    for m in per_seed:
        for name in ("covered", "violations", "lower_gap", "lower_gap_max", "bridge_l2_reward", "width"):
            for labels, _ in select(m, name):
                del m[labelled(name, **labels)]
        for labels, _ in select(m, "regret_pessimistic"):
            m[labelled("regret_pessimistic", **labels)] = 0.0
    s = {**experiments._tabular_summary(per_seed), **_SCOPE_KEYS}
    assert "covered_fraction" not in s and "bridge_l2_reward_slope" not in s
    assert s["largest_n"] == 10000.0
    assert s["regret_pessimistic_largest"] == 0.0 and paper.CLAIMS[1].check(s)  # regret 0 at every N: no drop needed
    assert not paper.CLAIMS[2].check(s)  # a tie with the plug-in and naive choices is no win


def test_the_naive_null_puts_the_naive_choice_in_every_slot():
    from icml24.core import Context

    m = experiments.tabular.fn(Context(seed=0), sizes=[300, 1500], sweeps=1, estimator="naive")
    assert [v for _, v in select(m, "bridge_signed", n=300)] == [v for _, v in select(m, "naive_signed", n=300)]
    assert len(select(m, "bridge_signed", n=300)) == 8
    assert m["regret_pessimistic[n=1500]"] == m["regret_naive[n=1500]"] == m["regret_plugin[n=1500]"]
    assert not select(m, "covered")
    with pytest.raises(ValueError, match="estimator"):
        experiments.tabular.fn(Context(seed=0), sizes=[300], estimator="oracle")


def test_summary_of_a_flat_error_has_zero_slope():
    s = experiments._continuous_summary(_per_seed({1000: 0.05, 5000: 0.05, 20000: 0.05}, 0.2, regrets=(0.1, 0.1, 0.1)))
    assert s["bridge_error_slope"] == pytest.approx(0.0, abs=1e-12)
    assert not paper.CLAIMS[3].check(s)


_SCOPE_KEYS = {"largest_n": 10000.0, "coverage_ratio_optimal": 6.3, "coverage_ratio_worst": 29.5,
               "naive_population_bias": 0.28}
_WIN = {**_SCOPE_KEYS, "plugin_minus_pessimistic_largest": 0.05, "plugin_minus_pessimistic_se_largest": 0.01,
        "naive_minus_pessimistic_largest": 0.05, "naive_minus_pessimistic_se_largest": 0.01}
_OPE = {**_SCOPE_KEYS, "bridge_error_largest": 0.01}


@pytest.mark.parametrize("claim_index,bad", [
    (0, {**_OPE, "bridge_error_slope": -0.5, "naive_bias_min": 0.03}),
    (0, {**_OPE, "bridge_error_slope": -0.1, "naive_bias_min": 0.3}),
    (1, {**_SCOPE_KEYS, "regret_pessimistic_largest": 0.12, "pessimistic_drop": 0.2}),
    (1, {**_SCOPE_KEYS, "regret_pessimistic_largest": 0.04, "pessimistic_drop": -0.03}),  # rose with N
    (1, {**_SCOPE_KEYS, "regret_pessimistic_largest": 0.58, "pessimistic_drop": 0.0}),  # the uniform null
    (2, {**_WIN, "plugin_minus_pessimistic_largest": 0.015, "plugin_minus_pessimistic_se_largest": 0.0}),
    (2, {**_WIN, "naive_minus_pessimistic_se_largest": 0.03}),
    (2, {**_WIN, "naive_minus_pessimistic_largest": -0.05}),
    (3, {**_OPE, "bridge_error_slope": 0.1, "naive_bias_min": 0.2}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_the_partial_coverage_claim_holds_for_a_clear_win():
    assert paper.CLAIMS[2].evaluate(_WIN).status == "holds"


def test_a_rounding_size_gain_does_not_count():
    """Regret differences and drops count only beyond MARGIN (0.02) and 2 paired SEs; an error counts as exact only
    at ERROR_FLOOR (1e-9): gains of 1e-12 are ties."""
    tiny = {**_WIN, "plugin_minus_pessimistic_largest": 1e-12, "plugin_minus_pessimistic_se_largest": 0.0}
    assert paper.CLAIMS[2].evaluate(tiny).status == "fails"
    flat = {**_OPE, "bridge_error_slope": -1e-12, "naive_bias_min": 0.3, "bridge_error_largest": 0.01}
    assert paper.CLAIMS[0].evaluate(flat).status == "fails"
    exact = {**flat, "bridge_error_largest": 0.0}  # the oracle's exact values: no slope to measure
    assert paper.CLAIMS[0].evaluate(exact).status == "holds"


@pytest.mark.parametrize("claim_index,scope,reason", [
    (0, {"coverage_ratio_worst": 17467.0, "largest_n": 50000.0}, "some evaluated policy is not covered"),
    (0, {"naive_population_bias": 0.087}, "too weakly confounded"),
    (1, {"coverage_ratio_optimal": 11102.0, "largest_n": 50000.0}, "the optimal policy is not covered"),
    (2, {"coverage_ratio_optimal": 11549.0, "largest_n": 20000.0}, "the optimal policy is not covered"),
])
def test_instances_outside_the_claims_scope_are_out_of_regime_not_failures(claim_index, scope, reason):
    good = {**_WIN, **_OPE, "bridge_error_slope": -0.5, "naive_bias_min": 0.3, "regret_pessimistic_largest": 0.0,
            "pessimistic_drop": 0.0}
    assert paper.CLAIMS[claim_index].evaluate(good).status == "holds"
    verdict = paper.CLAIMS[claim_index].evaluate({**good, **scope})
    assert verdict.status == "not run" and reason in verdict.message


def test_every_claim_declares_an_oracle_and_a_family_keeping_its_own_instance():
    from icml24.core import Family, Oracle

    for claim in paper.CLAIMS:
        assert isinstance(claim.resolved_oracle, Oracle) and isinstance(claim.resolved_family, Family)
        assert {} in claim.resolved_family.at("quick").values() and {} in claim.resolved_family.at("full").values()
    # issue #56's instance (the optimal action logged at 0.02 in state 1) is a member of the pessimism claim's family
    assert {"optimal_rate": 0.02} in paper.CLAIMS[1].resolved_family.at("quick").values()


def test_the_instance_generators_pass_through_the_experiments_own_instance():
    from icml24.papers.confounded_pomdp import instances
    from icml24.rl import continuous_toy, partial_coverage_toy, tabular_toy

    assert np.array_equal(instances.toy_logging().behaviour, tabular_toy().behaviour)
    assert np.array_equal(instances.toy_logging(0.02).behaviour, [[0.75, 0.25], [0.98, 0.02]])
    assert np.array_equal(instances.partial_logging().behaviour, partial_coverage_toy().behaviour)
    assert np.allclose(instances.partial_logging("bad", 0.02 + 1e-15).behaviour, partial_coverage_toy().behaviour)
    assert np.allclose(instances.partial_logging("optimal", 0.25).behaviour, partial_coverage_toy().behaviour)
    assert np.allclose(instances.partial_logging("optimal", 0.02).behaviour[1], [0.25, 0.02, 0.73])
    assert instances.continuous_noise(0.9).emission.scale == 0.9
    assert instances.continuous_noise().emission.scale == continuous_toy().emission.scale
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="optimal_rate"):
            instances.toy_logging(bad)
    with pytest.raises(ValueError, match="rare must be"):
        instances.partial_logging("worst", 0.1)
    with pytest.raises(ValueError, match="obs_scale"):
        instances.continuous_noise(-1.0)


def test_the_slots_put_the_oracle_and_the_no_learning_null_in_the_method_s_place():
    from icml24.core import Context

    small = {"sizes": [300, 1500], "sweeps": 1, "xi_datasets": 2}
    truth = experiments.tabular.fn(Context(seed=0), **small, estimator="truth")
    assert truth["bridge_error[n=300]"] == 0.0 and truth["regret_plugin[n=1500]"] == 0.0
    assert truth["regret_pessimistic[n=1500]"] == 0.0 and not select(truth, "covered")
    optimal = experiments.partial_coverage.fn(Context(seed=0), sizes=[1000], sweeps=1, xi_datasets=2,
                                              choice="optimal")
    assert optimal["regret_pessimistic[n=1000]"] == 0.0 and optimal["bridge_error[n=1000]"] > 0.0  # bridges fitted
    uniform = experiments.tabular.fn(Context(seed=0), **small, choice="uniform", optimal_rate=0.98)
    assert uniform["regret_pessimistic[n=300]"] == uniform["regret_pessimistic[n=1500]"] > 0.3
    assert uniform["coverage_ratio_optimal"] == pytest.approx(52.5, abs=0.1)  # the 0.98 instance's C(pi*)
    with pytest.raises(ValueError, match="choice must be"):
        experiments.tabular.fn(Context(seed=0), sizes=[300], choice="greedy")


def test_naive_bias_split_is_exact_and_partial_observability_remains_without_confounding():
    from icml24.rl import tabular_toy

    split = experiments._naive_bias_split(tabular_toy(), tabular_toy(confounding=0.0))
    assert split["naive_bias_partial_observability"] == pytest.approx(0.0574, abs=1e-3)
    assert split["naive_bias_confounding"] > 3 * split["naive_bias_partial_observability"]
    none = experiments._naive_bias_split(tabular_toy(confounding=0.0), tabular_toy(confounding=0.0))
    assert none["naive_bias_confounding"] == 0.0


def test_identification_experiment_is_exact_at_smoke():
    from icml24.core import Context

    metrics = experiments.identification.fn(Context(seed=0), random_instances=2, mc_episodes=20000)
    assert metrics["identification_max_error"] < 1e-10 and metrics["dp_vs_mc_max_z"] < 4.5


def test_every_experiment_has_a_claim_or_a_regime_and_settings():
    shown = {claim.experiment.name for claim in paper.CLAIMS} | {r.experiment.name for r in paper.REGIMES}
    assert shown == set(paper.PAPER.experiments)
    assert {claim.experiment.name for claim in paper.CLAIMS} == {"tabular", "partial_coverage", "continuous"}
    for exp in paper.PAPER.experiments.values():
        assert exp.smoke is not None and exp.seeds.get("quick", 0) >= 3
    assert np.all([len(d) < 200 for d in paper.PAPER.deviations])
