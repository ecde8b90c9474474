"""The confounded-pomdp reproduction: seeds through the runner, summaries, claims that can fail."""

import math

import numpy as np
import pytest

from icml24.core import labelled, select
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import confounded_pomdp as paper


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
    s = paper._tabular_summary(per_seed)
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
    s = paper._tabular_summary(per_seed)
    assert "covered_fraction" not in s and "bridge_l2_reward_slope" not in s
    assert s["regret_pessimistic_largest"] == 0.0 and not paper.CLAIMS[1].check(s)  # a constant regret does not fall
    assert not paper.CLAIMS[2].check(s)  # a tie with the plug-in and naive choices is no win


def test_the_naive_null_puts_the_naive_choice_in_every_slot():
    from icml24.core import Context

    m = paper.tabular.fn(Context(seed=0), sizes=[300, 1500], sweeps=1, estimator="naive")
    assert [v for _, v in select(m, "bridge_signed", n=300)] == [v for _, v in select(m, "naive_signed", n=300)]
    assert len(select(m, "bridge_signed", n=300)) == 8
    assert m["regret_pessimistic[n=1500]"] == m["regret_naive[n=1500]"] == m["regret_plugin[n=1500]"]
    assert not select(m, "covered")
    with pytest.raises(ValueError, match="estimator"):
        paper.tabular.fn(Context(seed=0), sizes=[300], estimator="oracle")


def test_summary_of_a_flat_error_has_zero_slope():
    s = paper._continuous_summary(_per_seed({1000: 0.05, 5000: 0.05, 20000: 0.05}, 0.2, regrets=(0.1, 0.1, 0.1)))
    assert s["bridge_error_slope"] == pytest.approx(0.0, abs=1e-12)
    assert not paper.CLAIMS[3].check(s)


_WIN = {"plugin_minus_pessimistic_largest": 0.05, "plugin_minus_pessimistic_se_largest": 0.01,
        "naive_minus_pessimistic_largest": 0.05, "naive_minus_pessimistic_se_largest": 0.01}


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"bridge_error_slope": -0.5, "naive_bias_min": 0.03}),
    (0, {"bridge_error_slope": -0.1, "naive_bias_min": 0.3}),
    (1, {"regret_pessimistic_largest": 0.12, "pessimistic_drop": 0.2, "pessimistic_drop_se": 0.01}),
    (1, {"regret_pessimistic_largest": 0.0, "pessimistic_drop": 0.0, "pessimistic_drop_se": 0.0}),
    (1, {"regret_pessimistic_largest": 0.0, "pessimistic_drop": 0.1, "pessimistic_drop_se": 0.06}),  # in the noise
    (1, {"regret_pessimistic_largest": 0.0, "pessimistic_drop": 0.01, "pessimistic_drop_se": 0.0}),  # below margin
    (2, {**_WIN, "plugin_minus_pessimistic_largest": 0.015, "plugin_minus_pessimistic_se_largest": 0.0}),
    (2, {**_WIN, "naive_minus_pessimistic_se_largest": 0.03}),
    (2, {**_WIN, "naive_minus_pessimistic_largest": -0.05}),
    (3, {"bridge_error_slope": 0.1, "naive_bias_min": 0.2}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_the_partial_coverage_claim_holds_for_a_clear_win():
    assert paper.CLAIMS[2].evaluate(_WIN).status == "holds"


def test_naive_bias_split_is_exact_and_partial_observability_remains_without_confounding():
    from icml24.rl import tabular_toy

    split = paper._naive_bias_split(tabular_toy(), tabular_toy(confounding=0.0))
    assert split["naive_bias_partial_observability"] == pytest.approx(0.0574, abs=1e-3)
    assert split["naive_bias_confounding"] > 3 * split["naive_bias_partial_observability"]
    none = paper._naive_bias_split(tabular_toy(confounding=0.0), tabular_toy(confounding=0.0))
    assert none["naive_bias_confounding"] == 0.0


def test_identification_experiment_is_exact_at_smoke():
    from icml24.core import Context

    metrics = paper.identification.fn(Context(seed=0), random_instances=2, mc_episodes=20000)
    assert metrics["identification_max_error"] < 1e-10 and metrics["dp_vs_mc_max_z"] < 4.5


def test_every_experiment_has_a_claim_or_a_regime_and_settings():
    shown = {claim.experiment.name for claim in paper.CLAIMS} | {r.experiment.name for r in paper.REGIMES}
    assert shown == set(paper.PAPER.experiments)
    assert {claim.experiment.name for claim in paper.CLAIMS} == {"tabular", "partial_coverage", "continuous"}
    for exp in paper.PAPER.experiments.values():
        assert exp.smoke is not None and exp.seeds.get("quick", 0) >= 3
    assert np.all([len(d) < 200 for d in paper.PAPER.deviations])
