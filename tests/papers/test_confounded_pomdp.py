"""The confounded-pomdp reproduction: seeds through the runner, summaries, claims that can fail."""

import math

import numpy as np
import pytest

from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import confounded_pomdp as paper


@pytest.mark.parametrize("name", ["tabular"])
def test_two_seeds_through_the_runner_give_decidable_claims(name, tmp_path):
    exp = paper.PAPER.experiments[name]
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=tmp_path)]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    assert records[0].metrics != records[1].metrics
    summary = aggregate(records, exp)
    assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def _per_seed(errors_by_n, naive_bias, regrets, covered=(1.0, 1.0), violations=(0.0, 0.0)):
    out = []
    for seed in range(2):
        m = {}
        for i, (n, err) in enumerate(errors_by_n.items()):
            for name in ("bridge", "naive", "is", "dr"):
                e = err if name == "bridge" else naive_bias
                m[f"{name}_error_n{n}"] = e
                m.update({f"{name}_signed_p{k}_n{n}": e * (1 if seed == 0 else 0.5) for k in range(8)})
            m[f"bridge_l2_reward_n{n}"] = err
            m[f"regret_n{n}"] = regrets[i]
            m[f"naive_regret_n{n}"] = 0.0
            m[f"covered_n{n}"], m[f"violations_n{n}"] = covered[seed], violations[seed]
            m[f"lower_gap_n{n}"], m[f"lower_gap_max_n{n}"] = 1.0 + seed, 3.0
        m.update({f"control_{name}_signed_p{k}": 0.0 for name in ("is", "naive") for k in range(8)})
        out.append(m)
    return out


def test_summary_reads_bias_slope_and_coverage():
    per_seed = _per_seed({1000: 0.1, 10000: 0.01}, 0.3, regrets=(0.4, 0.0), covered=(1.0, 0.0),
                         violations=(0.0, 3.0))
    s = paper._tabular_summary(per_seed)
    assert s["bridge_error_slope"] == pytest.approx(-1.0)
    assert s["naive_bias_min"] == pytest.approx(0.3 * 0.75)  # |mean of the signed errors over seeds|
    assert s["regret_largest"] == 0.0 and s["regret_smallest"] == pytest.approx(0.4)
    assert s["covered_fraction"] == 0.5 and s["violations_when_covered"] == 0.0  # seed 1 is uncovered
    assert s["lower_gap_largest"] == pytest.approx(1.5) and s["lower_gap_max"] == 3.0  # the bound's gap (regime)


def test_summary_of_a_null_run_without_bridges_or_confidence_set():
    per_seed = _per_seed({1000: 0.1, 10000: 0.01}, 0.3, regrets=(0.0, 0.0))
    for m in per_seed:
        for key in [k for k in m if k.startswith(("covered_", "violations_", "lower_gap", "bridge_l2"))]:
            del m[key]
    s = paper._tabular_summary(per_seed)
    assert "covered_fraction" not in s and "bridge_l2_reward_slope" not in s
    assert s["regret_largest"] == 0.0 and not paper.CLAIMS[1].check(s)  # a constant regret does not fall


def test_the_naive_null_puts_the_naive_values_in_the_bridge_slot():
    from icml24.core import Context

    m = paper.tabular.fn(Context(seed=0), sizes=[300, 1500], sweeps=1, estimator="naive")
    assert all(m[f"bridge_signed_p{k}_n300"] == m[f"naive_signed_p{k}_n300"] for k in range(8))
    assert m["regret_n1500"] == m["naive_regret_n1500"] and "covered_n300" not in m
    with pytest.raises(ValueError, match="estimator"):
        paper.tabular.fn(Context(seed=0), sizes=[300], estimator="oracle")


def test_summary_of_a_flat_error_has_zero_slope():
    s = paper._continuous_summary(_per_seed({1000: 0.05, 5000: 0.05, 20000: 0.05}, 0.2, regrets=(0.1, 0.1, 0.1)))
    assert s["bridge_error_slope"] == pytest.approx(0.0, abs=1e-12)
    assert not paper.CLAIMS[2].check(s)


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"bridge_error_slope": -0.5, "naive_bias_min": 0.03}),
    (0, {"bridge_error_slope": -0.1, "naive_bias_min": 0.3}),
    (1, {"regret_largest": 0.12, "regret_smallest": 0.3}),
    (1, {"regret_largest": 0.0, "regret_smallest": 0.0}),
    (2, {"bridge_error_slope": 0.1, "naive_bias_min": 0.2}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_identification_experiment_is_exact_at_smoke():
    from icml24.core import Context

    metrics = paper.identification.fn(Context(seed=0), random_instances=2, mc_episodes=20000)
    assert metrics["identification_max_error"] < 1e-10 and metrics["dp_vs_mc_max_z"] < 4.5


def test_every_experiment_has_a_claim_or_a_regime_and_settings():
    shown = {claim.experiment.name for claim in paper.CLAIMS} | {r.experiment.name for r in paper.REGIMES}
    assert shown == set(paper.PAPER.experiments)
    assert {claim.experiment.name for claim in paper.CLAIMS} == {"tabular", "continuous"}
    for exp in paper.PAPER.experiments.values():
        assert exp.smoke is not None and exp.seeds.get("quick", 0) >= 3
    assert np.all([len(d) < 200 for d in paper.PAPER.deviations])
