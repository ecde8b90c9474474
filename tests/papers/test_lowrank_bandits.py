"""The lowrank-bandits reproduction: one seed per run, across-seed summaries, claims that can fail.

The shared smoke test (tests/papers/test_every_experiment.py) runs every smoke setting at seed 0; here two seeds go
through the runner so that every summary sees more than one seed.
"""

import math

import numpy as np
import pytest

from icml24.bandits import LowRankBandit
from icml24.core import labelled, select
from icml24.core.params import parse_value
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import lowrank_bandits as paper
from icml24.papers.lowrank_bandits import claims, experiments


def _err(method: str, horizon: int) -> str:
    return labelled(f"{method}_error", T=horizon)


@pytest.mark.parametrize("name", sorted(paper.PAPER.experiments))
def test_two_seeds_through_the_runner_give_decidable_claims(name, tmp_path):
    exp = paper.PAPER.experiments[name]
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=tmp_path)]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    assert records[0].metrics != records[1].metrics  # each seed is its own repetition
    summary = aggregate(records, exp)
    assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def test_horizons_and_sizes_are_typed_lists():
    assert parse_value(experiments.policy_evaluation, "horizons", "2000,8000") == [2000, 8000]
    assert parse_value(experiments.size_sweep, "sizes", "10,20") == [10, 20]
    with pytest.raises(ValueError, match="expects list\\[int\\]"):
        parse_value(experiments.sample_complexity, "sizes", "10,big")


def test_policy_evaluation_summary_is_a_ratio_of_means_and_a_median():
    per_seed = [{_err("ips", 8000): 10.0, _err("rspe", 8000): r, _err("ips", 2000): 20.0, _err("rspe", 2000): 1.0}
                for r in (0.1, 1.9, 0.1)]
    summary = experiments._policy_evaluation_summary(per_seed)
    assert summary["min_ips_over_rspe_T8k_plus"] == pytest.approx(10.0 / (2.1 / 3))  # not the mean of ratios
    assert summary["median_ips_over_rspe_T8k_plus"] == pytest.approx(100.0)
    assert summary["ips_slope_vs_T"] == pytest.approx(-0.5)


def test_sample_complexity_summary_recovers_a_linear_law():
    # error = sqrt((m + n) / T): the samples for a fixed epsilon grow exactly linearly in m + n
    per_seed = [{"epsilon": 0.05, **{labelled("rspe_error", size=s, T=t): math.sqrt(2 * s / t) * scale
                                     for s in (10, 20, 40) for t in (1000, 4000, 16000)}}
                for scale in (0.9, 1.1)]
    summary = experiments._sample_complexity_summary(per_seed)
    assert summary["sample_complexity_slope"] == pytest.approx(1.0)
    assert summary["error_slope_vs_T_size20"] == pytest.approx(-0.5)
    assert summary["samples_needed_size10"] == pytest.approx(20 / 0.05**2)
    assert "ips_sample_complexity_slope" not in summary  # only where IPS ran beside it
    for row in per_seed:  # IPS with twice RS-PE's error: four times its samples
        row.update({labelled("ips_error", **labels): 2 * value for labels, value in select(row, "rspe_error")})
    summary = experiments._sample_complexity_summary(per_seed)
    assert summary["ips_sample_complexity_slope"] == pytest.approx(1.0)
    assert summary["ips_over_rspe_samples_largest"] == pytest.approx(4.0)


def test_regret_and_size_summaries_read_the_means():
    grid = (1000, 4000)
    per_seed = [{labelled(f"{name}_regret", T=t): c * np.sqrt(t) for name in ("rsrmin", "linucb", "pairucb")
                 for t in grid} for c in (1.0, 3.0)]
    assert experiments._regret_summary(per_seed)["rsrmin_slope"] == pytest.approx(0.5)
    assert "estr_slope" not in experiments._regret_summary(per_seed)  # only the learners that ran
    sizes = [{labelled("ips_error", size=10): 1.0, labelled("ips_error", size=40): 2.0,
              labelled("rspe_error", size=10): 1.0, labelled("rspe_error", size=40): 0.5}]
    summary = experiments._size_sweep_summary(sizes)
    assert summary["ips_slope_vs_size"] == pytest.approx(0.5) and summary["ips_over_rspe_largest"] == 4.0


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"min_ips_over_rspe_T8k_plus": 1.87}),
    (1, {"rspe_beats_ips_frac_largest_T": 0.7, "ips_error_largest_T_median": 5.5,
         "rspe_error_largest_T_median": 0.19}),
    (1, {"rspe_beats_ips_frac_largest_T": 0.9, "ips_error_largest_T_median": 5.5,
         "rspe_error_largest_T_median": 0.8}),
    (2, {"ips_slope_vs_size": 0.3, "rspe_slope_vs_size": 0.1, "ips_over_rspe_largest": 1.48}),
    (3, {"rsbpi_gap_T8000": 1.58, "sbpi_gap_T8000": 2.0}),
    (4, {"rsrmin_slope": 0.674, "rsrmin_regret_last": 10.0, "linucb_regret_last": 20.0, "pairucb_regret_last": 20.0,
         "estr_regret_last": 20.0}),
    (4, {"rsrmin_slope": 0.5, "rsrmin_regret_last": 10.0, "linucb_regret_last": 20.0, "pairucb_regret_last": 20.0,
         "estr_regret_last": 8.0}),  # the low-rank-aware baseline does better
    (5, {"sample_complexity_slope": 2.0, "ips_over_rspe_samples_largest": 3.0}),
    (5, {"sample_complexity_slope": 1.0, "ips_over_rspe_samples_largest": 1.0}),  # linear, but no better than IPS
    # rounding-sized gains (1e-12) are no gain
    (2, {"ips_slope_vs_size": 0.5 + 1e-12, "rspe_slope_vs_size": 0.5, "ips_over_rspe_largest": 3.0}),
    (4, {"rsrmin_slope": 0.5, "rsrmin_regret_last": 20.0 - 1e-12, "linucb_regret_last": 30.0,
         "pairucb_regret_last": 30.0, "estr_regret_last": 20.0}),
    (5, {"sample_complexity_slope": 1.0, "ips_over_rspe_samples_largest": 1.0 + 1e-12}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_every_experiment_has_a_claim_and_settings():
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)


def test_official_protocol_variant_reproduces_the_leak_on_a_fixed_seed():
    """Seed 0, T = 2000 of the default instance: the official protocol's second phase sees all 20k samples."""
    env = LowRankBandit.official_instance(50, 50, 2, random_state=np.random.default_rng(0))
    errors = experiments._pe_errors(env, [2000], 20_000, 2, 1e-4, np.random.default_rng(1))
    assert errors["rspe_official"][0] < 0.5 * errors["rspe"][0]  # the leak flatters the small-T error
    again = experiments._pe_errors(env, [2000], 2000, 2, 1e-4, np.random.default_rng(1))  # no pool beyond T: no leak
    assert again["rspe_official"][0] == pytest.approx(again["rspe"][0], rel=1e-9)


def test_policy_evaluation_summary_reports_quantiles_and_the_leak_factor():
    per_seed = [{_err(name, t): value * (1 + k) for name, value in
                 (("ips", 10.0), ("sips", 5.0), ("rspe", 1.0), ("rspe_official", 0.25)) for t in (2000, 8000)}
                for k in range(11)]
    summary = experiments._policy_evaluation_summary(per_seed)
    assert summary["rspe_error_median[T=2000]"] == pytest.approx(6.0)
    assert summary["rspe_error_q10[T=2000]"] == pytest.approx(2.0) and summary["ips_error_q90[T=8000]"] == 100.0
    assert summary["official_leak_factor_smallest_T"] == pytest.approx(4.0)


def test_the_method_slots_run_the_nulls_on_the_same_samples(tmp_path):
    from icml24.core import Context

    ctx = Context(seed=0, out_dir=tmp_path)
    pe = {"m": 12, "n": 10, "horizons": [500, 1000], "official_pool": 1000}
    null = experiments.policy_evaluation(ctx, **pe, rspe_slot="ips")
    assert all(null[_err("rspe", t)] == null[_err("ips", t)] for t in (500, 1000))
    method = experiments.policy_evaluation(ctx, **pe)
    assert method[_err("ips", 1000)] == null[_err("ips", 1000)] != method[_err("rspe", 1000)]
    sizes = experiments.size_sweep(ctx, sizes=[5], horizon=300, rspe_slot="sips")
    assert sizes["rspe_error[size=5]"] == sizes["sips_error[size=5]"]
    bpi = {"m": 12, "n": 10, "horizons": [500]}
    assert experiments.best_policy(ctx, **bpi, rsbpi_slot="sbpi")["rsbpi_gap_T500"] == experiments.best_policy(
        ctx, **bpi)["sbpi_gap_T500"]
    assert experiments.best_policy(ctx, **bpi, rsbpi_slot="random")["rsbpi_gap_T500"] > 1.0
    regret = {"m": 8, "n": 6, "horizons": [200, 400]}
    for slot in ("estr", "pairucb"):
        run = experiments.regret(ctx, **regret, rsrmin_slot=slot)
        assert run["rsrmin_regret[T=200]"] == run[f"{slot}_regret[T=200]"] and run["rsrmin_regret_last"] == run[
            f"{slot}_regret_last"]
    for experiment, name in ((experiments.policy_evaluation, "rspe_slot"), (experiments.best_policy, "rsbpi_slot"),
                             (experiments.regret, "rsrmin_slot")):
        with pytest.raises(ValueError, match=f"{name} must be one of"):
            experiment(ctx, **{name: "truth"})
    with pytest.raises(ValueError, match="instance must be one of"):
        experiments.policy_evaluation(ctx, **pe, instance="constant")  # rank 2: official or gaussian only
    assert [r.metrics for r in paper.REGIMES][0] == ["sample_complexity_slope", "ips_sample_complexity_slope"]


def test_the_oracle_slots_give_the_truth_on_the_same_samples(tmp_path):
    from icml24.core import Context

    ctx = Context(seed=0, out_dir=tmp_path)
    pe = {"m": 12, "n": 10, "horizons": [500, 1000], "official_pool": 1000}
    oracle = experiments.policy_evaluation(ctx, **pe, rspe_slot="oracle")
    method = experiments.policy_evaluation(ctx, **pe)
    assert oracle[_err("rspe", 1000)] == 0.0 and oracle[_err("ips", 1000)] == method[_err("ips", 1000)] > 0
    assert experiments._policy_evaluation_summary([oracle])["min_ips_over_rspe_T8k_plus"] > 1e9  # finite, huge
    bpi = experiments.best_policy(ctx, m=12, n=10, horizons=[500], rsbpi_slot="oracle")
    assert bpi["rsbpi_gap_T500"] == 0.0 and bpi["sbpi_gap_T500"] >= 0.0
    play = experiments.regret(ctx, m=8, n=6, horizons=[200, 400], rsrmin_slot="oracle")
    assert play["rsrmin_regret_last"] == 0.0 and play["linucb_regret_last"] > 0
    assert experiments._regret_summary([play])["rsrmin_slope"] == pytest.approx(0.0, abs=1e-12)
    sizes = experiments.sample_complexity(ctx, sizes=[5, 10], horizons=[300, 600], rspe_slot="oracle")
    summary = experiments._sample_complexity_summary([sizes])
    assert summary["samples_needed_size10"] == 300.0  # within epsilon at every T: at most the smallest T
    assert summary["sample_complexity_slope"] == pytest.approx(0.0, abs=1e-12)
    assert summary["ips_over_rspe_samples_largest"] > 1.0
    for name in ("TRUE_VALUE", "OPTIMAL_ARMS", "OPTIMAL_PLAY"):
        assert next(iter(getattr(claims, name).overrides.values())) == "oracle"


def test_the_family_instances_differ_and_the_default_is_unchanged(tmp_path):
    from icml24.core import Context

    ctx = Context(seed=0, out_dir=tmp_path)
    spiky = experiments._instance(ctx, "official", 20, 30, 2)
    assert np.array_equal(spiky.reward_matrix, LowRankBandit.official_instance(
        20, 30, 2, random_state=ctx.rng("instance")).reward_matrix)  # the default stream: numbers unchanged
    gaussian = experiments._instance(ctx, "gaussian", 20, 30, 2)
    assert np.linalg.matrix_rank(gaussian.reward_matrix) == 2 and gaussian.snr < 0.2 * spiky.snr  # incoherent, SNR ~1
    assert experiments._instance(ctx, "gaussian", 20, 30, 2, scale=0.5).snr == pytest.approx(0.5 * gaussian.snr)
    assert np.all(experiments._instance(ctx, "constant", 4, 4, 1).reward_matrix == 1.0)
    for exp in paper.PAPER.experiments.values():  # every member's overrides name parameters the experiment takes
        for family in exp.families():
            assert {} in family.at("quick").values() and 0 < family.share <= 1
            for member in family.at("quick"):
                exp.member_config(family, member, "quick")
    pe = {"m": 12, "n": 10, "horizons": [500, 1000], "official_pool": 1000}
    assert (experiments.policy_evaluation(ctx, **pe, instance="gaussian")["snr"]
            < experiments.policy_evaluation(ctx, **pe)["snr"])


def test_a_rounding_sized_win_per_repetition_is_no_win(tmp_path, monkeypatch):
    from icml24.core import Context

    def tie(env, grid, pool, rank, tau, rng, slot):  # RS-PE 1e-13 below IPS: rounding, not a win
        ips = np.full(len(grid), 0.5)
        return {"ips": ips, "sips": ips, "rspe": ips - 1e-13, "rspe_official": ips, "spike_missed": 0 * ips}

    monkeypatch.setattr(experiments, "_pe_errors", tie)
    out = experiments.pe_error_distribution(Context(seed=0, out_dir=tmp_path), m=6, n=5, horizons=[100],
                                            repetitions=2, official_pool=100)
    assert out["rspe_beats_ips_frac_largest_T"] == 0.0
