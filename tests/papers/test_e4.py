"""The E4 reproduction: typed instance lists, one run per seed, across-seed best baselines, claims that can fail."""

import numpy as np
import pytest

from icml24.core import Context
from icml24.core.params import parse_value
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import e4 as paper

EOO, RANDOM = paper.end_of_optimism_regret, paper.random_regret


def test_instances_are_typed_lists_on_the_cli():
    assert parse_value(EOO, "instances", "2:0.01:10000,3:0.2:5e4") == ["2:0.01:10000", "3:0.2:5e4"]
    assert parse_value(EOO, "algorithms", "e4,phaelimd") == ["e4", "phaelimd"]
    assert EOO.config(setting="quick")["instances"][0] == "2:0.01:10000"


@pytest.mark.parametrize("bad", ["2:0.01", "2:x:1000", "2.5:0.01:1000"])
def test_a_malformed_instance_says_what_it_expects(bad, tmp_path):
    with pytest.raises(ValueError, match="must be d:eps:T, e.g. 2:0.01:10000"):
        EOO(Context(seed=0, out_dir=tmp_path), instances=[bad], algorithms=["e4"])


def test_unknown_algorithm_is_refused(tmp_path):
    with pytest.raises(ValueError, match="algorithms must list e4"):
        RANDOM(Context(seed=0, out_dir=tmp_path), instances=["3:2"], horizon=100, algorithms=["e4", "ucb9"])


def test_one_seed_is_one_run_and_seeds_differ(tmp_path):
    tasks = plan([EOO], seeds=[0, 1], setting="smoke", store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    first, second = (r.metrics for r in records)
    assert first["eoo_d2_eps0p01_e4_three_batch_frac"] in (0.0, 1.0)  # one run: an indicator
    assert first["eoo_d2_eps0p01_e4_regret"] != second["eoo_d2_eps0p01_e4_regret"]
    assert not any(key.endswith("seconds") for key in first)  # wall times are an artifact, not a metric
    summary = aggregate(records, EOO)
    assert summary["num_seeds"] == 2 and "eoo_d2_eps0p01_e4_regret_std" in summary
    for claim in claims_of(EOO):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def test_best_baseline_is_the_minimum_of_mean_regrets_not_the_mean_of_minima():
    per_seed = [
        {"eoo_d2_eps0p01_phaelimd_regret": 100.0, "eoo_d2_eps0p01_rs_oful_regret": 900.0,
         "eoo_d2_eps0p01_endoa_regret": 500.0, "eoo_d2_eps0p01_e4_regret": 50.0},
        {"eoo_d2_eps0p01_phaelimd_regret": 900.0, "eoo_d2_eps0p01_rs_oful_regret": 100.0,
         "eoo_d2_eps0p01_endoa_regret": 500.0, "eoo_d2_eps0p01_e4_regret": 50.0},
    ]
    summary = paper._best_baselines(per_seed)
    assert summary["eoo_d2_eps0p01_best_baseline_regret"] == 500.0  # EndOA's mean; the mean of minima is 100
    assert summary["eoo_d2_eps0p01_best_batched_baseline_regret"] == 500.0
    batches = [{"x_e4_batches": 3.0, "x_phaelimd_batches": 4.0, "x_rs_oful_batches": 30.0,
                "y_e4_batches": 3.0, "y_phaelimd_batches": 3.0, "y_rs_oful_batches": 40.0}] * 2
    summary = paper._best_baselines(batches)
    assert summary["x_fewest_batched_baseline_batches"] == 4.0
    assert summary["e4_batches_over_fewest_batched_baseline"] == 1.0  # the worst instance, y


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"eoo_d2_eps0p01_e4_regret": 900.0, "eoo_d2_eps0p01_best_baseline_regret": 1000.0}),
    (1, {"e4_three_batch_frac": 0.6, "e4_batches_over_fewest_batched_baseline": 0.75}),
    (1, {"e4_three_batch_frac": 1.0, "e4_batches_over_fewest_batched_baseline": 1.0}),  # PhaElimD also in 3
    (2, {"random_k50_d20_random_order_e4_regret": 24_500.0,
         "random_k50_d20_random_order_best_baseline_regret": 5_900.0}),
    (3, {"eoo_d2_eps0p01_e4_growth_last": 1.02, "eoo_d2_eps0p01_e4_batches_T1000000": 9.0,
         "batch_bound_largest_T": 7.8, "largest_T": 1e6}),  # too many batches
    (3, {"eoo_d2_eps0p01_e4_growth_last": 2.5, "eoo_d2_eps0p01_e4_batches_T1000000": 3.0,
         "batch_bound_largest_T": 7.8, "largest_T": 1e6}),  # regret / log T still growing
    (4, {"random_k20_d10_e4_growth_last": 2.6, "random_k20_d10_e4_batches_T1000000": 7.0,
         "batch_bound_largest_T": 7.8, "largest_T": 1e6, "random_k20_d10_e4_regret_T1000000": 64_000.0,
         "random_k20_d10_phaelimd_regret_T1000000": 62_000.0}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_every_experiment_has_a_claim_and_settings():
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1
        assert exp.summarize is (paper._horizon_summary if exp is paper.regret_vs_horizon else paper._best_baselines)
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
    assert EOO.seeds == {"quick": 5, "full": 10, "smoke": 1}


def test_random_regret_reports_both_protocols_and_the_official_gamma(tmp_path):
    metrics = RANDOM(Context(seed=0, out_dir=tmp_path), instances=["5:3"], horizon=2000,
                     algorithms=["e4", "e4-gamma10", "phaelimd", "endoa"])
    for protocol in ("index_order", "random_order"):
        for name in ("e4", "e4_gamma10", "phaelimd", "endoa"):
            assert np.isfinite(metrics[f"random_k5_d3_{protocol}_{name}_regret"])
    with pytest.raises(ValueError, match="protocols must be a non-empty subset of index_order, random_order"):
        RANDOM(Context(seed=0, out_dir=tmp_path), instances=["5:3"], horizon=100, protocols=["by_name"])


def test_horizon_summary_is_the_growth_of_mean_regret_per_log_t():
    per_seed = [{"x_e4_regret_per_logT_T100": 10.0, "x_e4_regret_per_logT_T1000": 12.0},
                {"x_e4_regret_per_logT_T100": 30.0, "x_e4_regret_per_logT_T1000": 28.0}]
    assert paper._horizon_summary(per_seed) == {"x_e4_growth_last": pytest.approx(40.0 / 40.0)}
    with pytest.raises(ValueError, match="must be eoo:d:eps or random:K:d"):
        paper.regret_vs_horizon(Context(seed=0, out_dir="."), instances=["circle:3"], horizons=[100])


def test_the_e4_slot_runs_the_null_on_the_same_reward_streams(tmp_path):
    ctx = Context(seed=0, out_dir=tmp_path)
    small = {"instances": ["2:0.01:1500"], "algorithms": ["e4", "phaelimd", "rs-oful"]}
    null = EOO(ctx, **small, e4_slot="phaelimd")
    for metric in ("regret", "batches"):
        assert null[f"eoo_d2_eps0p01_e4_{metric}"] == null[f"eoo_d2_eps0p01_phaelimd_{metric}"]
    assert null["e4_chernoff_pass_frac"] == 0.0  # no stopping test in PhaElimD
    method = EOO(ctx, **small)
    assert method["eoo_d2_eps0p01_phaelimd_regret"] == null["eoo_d2_eps0p01_phaelimd_regret"]
    assert method["eoo_d2_eps0p01_e4_regret"] < null["eoo_d2_eps0p01_e4_regret"]
    uniform = paper.regret_vs_horizon(ctx, instances=["eoo:2:0.01"], horizons=[1000, 10_000],
                                      algorithms=["e4", "phaelimd"], e4_slot="round-robin")
    assert uniform["eoo_d2_eps0p01_e4_batches_T1000"] == 1.0
    assert uniform["eoo_d2_eps0p01_e4_regret_T10000"] > 9 * uniform["eoo_d2_eps0p01_e4_regret_T1000"]  # linear
    with pytest.raises(ValueError, match="e4_slot must be one of"):
        EOO(ctx, **small, e4_slot="oracle")
    assert {n.overrides["e4_slot"] for e in paper.PAPER.experiments.values() for n in e.nulls()} == {
        "phaelimd", "round-robin"}
