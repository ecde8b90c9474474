"""The E4 reproduction: typed instance lists, labelled metrics, across-seed summaries, claims that can fail."""

import numpy as np
import pytest

from icml24.core import Context, labelled, select
from icml24.core.params import parse_value
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import e4 as paper
from icml24.papers.e4 import claims, experiments

EOO, RANDOM = experiments.end_of_optimism_regret, experiments.random_regret
HORIZON, STOP = experiments.regret_vs_horizon, experiments.stopping_vs_horizon
D2 = {"instance": "eoo", "d": 2, "eps": 0.01}
R = {"instance": "random", "K": 20, "d": 10}


def test_instances_are_typed_lists_on_the_cli():
    assert parse_value(EOO, "instances", "2:0.01:10000,3:0.2:5e4") == ["2:0.01:10000", "3:0.2:5e4"]
    assert parse_value(EOO, "algorithms", "e4,phaelimd") == ["e4", "phaelimd"]
    assert EOO.config(setting="quick")["instances"][0] == "2:0.01:10000"


@pytest.mark.parametrize("bad", ["2:0.01", "2:x:1000", "2.5:0.01:1000"])
def test_a_malformed_instance_says_what_it_expects(bad, tmp_path):
    with pytest.raises(ValueError, match="must be d:eps:T, e.g. 2:0.01:10000"):
        EOO(Context(seed=0, out_dir=tmp_path), instances=[bad], algorithms=["e4"])


def test_unknown_algorithm_or_generator_is_refused(tmp_path):
    with pytest.raises(ValueError, match="algorithms must list e4"):
        RANDOM(Context(seed=0, out_dir=tmp_path), instances=["3:2"], horizon=100, algorithms=["e4", "ucb9"])
    with pytest.raises(ValueError, match="generator must be 'official' or 'per_seed'"):
        STOP(Context(seed=0, out_dir=tmp_path), horizons=[100], generators=["mine"])


def test_one_seed_is_one_run_and_seeds_differ(tmp_path):
    tasks = plan([EOO], seeds=[0, 1], setting="smoke", store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    first, second = (r.metrics for r in records)
    e4 = labelled("regret", **D2, T=2000, alg="e4")
    assert first[labelled("three_batch", **D2, T=2000, alg="e4")] in (0.0, 1.0)  # one run: an indicator
    assert first[e4] != second[e4]
    assert not any(key.endswith("seconds") for key in first)  # wall times are an artifact, not a metric
    summary = aggregate(records, EOO)
    assert summary["num_seeds"] == 2 and e4 + "_std" in summary
    for claim in claims_of(EOO):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def _seed(**regrets):
    return {labelled("regret", **D2, T=10_000, alg=alg.replace("_", "-")): v for alg, v in regrets.items()}


def test_best_baseline_is_the_minimum_of_mean_regrets_not_the_mean_of_minima():
    per_seed = [_seed(phaelimd=100.0, rs_oful=900.0, endoa=500.0, e4=50.0),
                _seed(phaelimd=900.0, rs_oful=100.0, endoa=500.0, e4=50.0)]
    summary = experiments._best_baselines(per_seed)
    assert summary[labelled("best_baseline_regret", **D2, T=10_000)] == 500.0  # EndOA's mean; the mean of minima: 100
    assert summary[labelled("best_batched_baseline_regret", **D2, T=10_000)] == 500.0
    batches = {labelled("batches", instance="eoo", d=d, alg=alg): v for d, alg, v in (
        (2, "e4", 3.0), (2, "phaelimd", 4.0), (2, "rs-oful", 30.0), (3, "e4", 3.0), (3, "phaelimd", 3.0),
        (3, "rs-oful", 40.0))}
    summary = experiments._best_baselines([batches] * 2)
    assert summary[labelled("fewest_batched_baseline_batches", instance="eoo", d=2)] == 4.0
    assert summary["e4_batches_over_fewest_batched_baseline"] == 1.0  # the worst instance, d=3


def _horizon(alg, growth, batches, regret, labels=R, largest=1_000_000):
    return {labelled("growth_last", **labels, alg=alg): growth,
            labelled("batches", **labels, alg=alg, T=largest): batches,
            labelled("regret", **labels, alg=alg, T=largest): regret}


BOUNDS = {"largest_T": 1e6, "batch_bound_largest_T": 7.8, "log2_largest_T": 19.9}


@pytest.mark.parametrize("claim_index,bad", [
    (0, {**_seed(e4=900.0), labelled("best_baseline_regret", **D2, T=10_000): 1000.0}),
    (1, {"e4_at_most_three_batch_frac": 0.6, "e4_batches_over_fewest_batched_baseline": 0.75}),
    (1, {"e4_at_most_three_batch_frac": 1.0, "e4_batches_over_fewest_batched_baseline": 1.0}),  # PhaElimD also 3
    (1, {"e4_at_most_three_batch_frac": 1.0, "e4_batches_over_fewest_batched_baseline": 1.0 - 1e-12}),  # rounding
    (2, {labelled("regret", instance="random", K=50, d=20, protocol="random_order", alg="e4"): 24_500.0,
         labelled("best_baseline_regret", instance="random", K=50, d=20, protocol="random_order"): 5_900.0,
         labelled("best_baseline_regret", instance="random", K=3, d=2, protocol="random_order"): 1e6}),
    (3, {**_horizon("e4", 1.02, 9.0, 1.0, D2), **BOUNDS}),  # too many batches
    (3, {**_horizon("e4", 2.5, 3.0, 1.0, D2), **BOUNDS}),  # regret / log T still growing
    (4, {**_horizon("e4", 2.6, 7.0, 64_000.0), **_horizon("phaelimd", 1.0, 4.0, 62_000.0), **BOUNDS}),
    (5, {labelled("chernoff_passed", **R, generator="official", alg="e4-gamma10", T=10**7): 0.8,
         "largest_T": 1e7}),
    (6, {**_horizon("e4-instance", 1.0, 21.0, 50_000.0), **_horizon("phaelimd", 1.0, 4.0, 62_000.0), **BOUNDS}),
    (6, {**_horizon("e4-instance", 1.0, 9.0, 63_000.0), **_horizon("phaelimd", 1.0, 4.0, 62_000.0), **BOUNDS}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_the_random_claims_read_whatever_instance_the_user_ran():
    """Issue 48: the claims error on any instance but the default one no more; they read the largest run."""
    good = {**_horizon("e4", 1.0, 7.0, 1.0, {"instance": "random", "K": 5, "d": 3}),
            **_horizon("phaelimd", 1.0, 4.0, 2.0, {"instance": "random", "K": 5, "d": 3}),
            **_horizon("e4-instance", 1.0, 9.0, 1.5, {"instance": "random", "K": 5, "d": 3}), **BOUNDS}
    assert paper.CLAIMS[4].evaluate(good).status == "holds"
    assert paper.CLAIMS[6].evaluate(good).status == "holds"
    assert paper.CLAIMS[4].evaluate(BOUNDS).status == "error"  # no random instance at all: error, never holds
    passes = {labelled("chernoff_passed", instance="random", K=7, d=4, generator="official", alg="e4-gamma10",
                       T=10**5): 1.0, "largest_T": 1e5}
    assert paper.CLAIMS[5].evaluate(passes).status == "holds"


def test_every_experiment_has_a_claim_and_settings():
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    summaries = {HORIZON.name: experiments._horizon_summary, STOP.name: experiments._stopping_summary}
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1
        assert exp.summarize is summaries.get(exp.name, experiments._best_baselines)
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
    assert EOO.seeds == {"quick": 5, "full": 10, "smoke": 1}


def test_random_regret_reports_both_protocols_and_the_official_gamma(tmp_path):
    metrics = RANDOM(Context(seed=0, out_dir=tmp_path), instances=["5:3"], horizon=2000,
                     algorithms=["e4", "e4-gamma10", "phaelimd", "endoa"])
    found = {(labels["protocol"], labels["alg"]) for labels, value in select(metrics, "regret", K=5, d=3)
             if np.isfinite(value)}
    assert found == {(p, a) for p in ("index_order", "random_order") for a in ("e4", "e4-gamma10", "phaelimd", "endoa")}
    with pytest.raises(ValueError, match="protocols must be a non-empty subset of index_order, random_order"):
        RANDOM(Context(seed=0, out_dir=tmp_path), instances=["5:3"], horizon=100, protocols=["by_name"])


def test_horizon_summary_is_the_growth_of_mean_regret_per_log_t():
    key = {"instance": "eoo", "d": 2, "eps": 0.01, "alg": "e4"}
    per_seed = [{labelled("regret_per_logT", **key, T=100): 10.0, labelled("regret_per_logT", **key, T=1000): 12.0},
                {labelled("regret_per_logT", **key, T=100): 30.0, labelled("regret_per_logT", **key, T=1000): 28.0}]
    assert experiments._horizon_summary(per_seed) == {labelled("growth_last", **key): pytest.approx(40.0 / 40.0)}
    with pytest.raises(ValueError, match="must be eoo:d:eps or random:K:d"):
        HORIZON(Context(seed=0, out_dir="."), instances=["circle:3"], horizons=[100])


def test_stopping_summary_is_the_first_horizon_where_half_the_runs_pass():
    key = {**R, "generator": "official", "alg": "e4-gamma10"}
    per_seed = [{labelled("chernoff_passed", **key, T=t): float(p) for t, p in zip((10**5, 10**6, 10**7), ps)}
                for ps in ((0, 1, 1), (0, 0, 1))]
    assert experiments._stopping_summary(per_seed) == {labelled("first_pass_T", **key): 1e6}
    never = [{labelled("chernoff_passed", **key, T=10**5): 0.0}]
    assert experiments._stopping_summary(never) == {labelled("first_pass_T", **key): 0.0}


def test_the_stopping_record_holds_the_statistic_and_threshold_per_run(tmp_path):
    """Per run: statistic, threshold (compared with the official code's in tests/parity/test_e4.py), the verdict,
    the committing batch and the arms the batch-2 cap cut."""
    metrics = STOP(Context(seed=0, out_dir=tmp_path), horizons=[2000], generators=["official"])
    for alg in ("e4", "e4-gamma10"):
        at = {**R, "generator": "official", "alg": alg, "T": 2000}
        statistic = metrics[labelled("chernoff_statistic", **at)]
        threshold = metrics[labelled("chernoff_threshold", **at)]
        assert 0 <= statistic and 0.5 * np.log(2000) < threshold  # log(t^{d/2} T) / 2 with t >= 1
        assert metrics[labelled("chernoff_passed", **at)] == float(statistic > threshold)
        commit = metrics[labelled("commit_batch", **at)]
        assert commit == 2.0 * metrics[labelled("chernoff_passed", **at)] or 3 <= commit <= metrics[
            labelled("batches", **at)]
        assert 0 <= metrics[labelled("cap_binding_arms", **at)] <= 20


def test_every_e4_setting_runs_the_null_on_the_same_reward_streams(tmp_path):
    ctx = Context(seed=0, out_dir=tmp_path)
    small = {"instances": ["2:0.01:1500"], "algorithms": ["e4", "phaelimd", "rs-oful"]}
    null = EOO(ctx, **small, e4_slot="phaelimd")
    at = {**D2, "T": 1500}
    for metric in ("regret", "batches"):
        assert null[labelled(metric, **at, alg="e4")] == null[labelled(metric, **at, alg="phaelimd")]
    assert null[labelled("chernoff_passed", **at, alg="e4")] == 0.0  # no stopping test in PhaElimD
    assert not select(null, "chernoff_statistic")
    method = EOO(ctx, **small)
    assert method[labelled("regret", **at, alg="phaelimd")] == null[labelled("regret", **at, alg="phaelimd")]
    assert method[labelled("regret", **at, alg="e4")] < null[labelled("regret", **at, alg="e4")]
    uniform = HORIZON(ctx, instances=["eoo:2:0.01"], horizons=[1000, 10_000],
                      algorithms=["e4", "e4-instance", "phaelimd"], e4_slot="round-robin")
    for alg in ("e4", "e4-instance"):
        assert uniform[labelled("batches", **D2, alg=alg, T=1000)] == 1.0
        assert uniform[labelled("regret", **D2, alg=alg, T=10_000)] > 9 * uniform[labelled("regret", **D2, alg=alg,
                                                                                           T=1000)]  # linear
    with pytest.raises(ValueError, match="e4_slot must be one of"):
        EOO(ctx, **small, e4_slot="truth")
    assert {n.overrides["e4_slot"] for e in paper.PAPER.experiments.values() for n in e.nulls()} == {
        "phaelimd", "round-robin"}


def test_the_oracle_plays_the_optimal_arm_in_every_e4_slot_on_the_same_streams(tmp_path):
    ctx = Context(seed=0, out_dir=tmp_path)
    small = {"instances": ["2:0.01:1500"], "algorithms": ["e4", "phaelimd", "rs-oful"]}
    oracle, method = EOO(ctx, **small, e4_slot="oracle"), EOO(ctx, **small)
    at = {**D2, "T": 1500}
    assert oracle[labelled("regret", **at, alg="e4")] == 0.0 and oracle[labelled("batches", **at, alg="e4")] == 1.0
    assert oracle[labelled("regret", **at, alg="phaelimd")] == method[labelled("regret", **at, alg="phaelimd")] > 0
    assert oracle[labelled("at_most_three_batches", **at, alg="e4")] == 1.0
    assert oracle[labelled("three_batch", **at, alg="e4")] == 0.0 and oracle["e4_at_most_three_batch_frac"] == 1.0
    summary = experiments._best_baselines([oracle])
    assert summary["e4_batches_over_fewest_batched_baseline"] < 1.0
    horizon = HORIZON(ctx, instances=["random:5:3"], horizons=[1000, 4000],
                      algorithms=["e4", "e4-instance", "phaelimd"], e4_slot="oracle")
    assert all(horizon[labelled("regret", instance="random", K=5, d=3, alg=alg, T=4000)] == 0.0
               for alg in ("e4", "e4-instance"))
    stop = STOP(ctx, instances=["5:3"], horizons=[1000], generators=["official"], e4_slot="oracle")
    assert stop[labelled("chernoff_passed", instance="random", K=5, d=3, generator="official", alg="e4-gamma10",
                         T=1000)] == 1.0  # it commits at once: what a perfect stopping test certifies
    assert {c.resolved_oracle.overrides["e4_slot"] for c in paper.CLAIMS} == {"oracle"}


def test_the_end_of_optimism_claims_read_the_smallest_d_and_eps_run_and_report_the_sequential_baselines():
    member = {**_seed(e4=50.0, phaelimd=900.0, rs_oful=1000.0, endoa=800.0)}
    member = {k.replace("eps=0.01", "eps=0.1"): v for k, v in member.items()}  # only d=2, eps=0.1 was run
    summary = experiments._best_baselines([member])
    assert paper.CLAIMS[0].evaluate({**member, **summary}).status == "holds"
    worse = {**member, labelled("regret", instance="eoo", d=2, eps=0.1, T=10_000, alg="e4"): 500.0}
    assert paper.CLAIMS[0].evaluate({**worse, **experiments._best_baselines([worse])}).status == "fails"
    both = {**_seed(e4=900.0, phaelimd=1000.0, rs_oful=1000.0, endoa=1000.0), **member}  # d=2: 0.01 is read
    assert claims._headline(experiments._best_baselines([both]), "best_baseline_regret")["eps"] == 0.01
    runs = [_seed(e4=186.0, phaelimd=1000.0, rs_oful=1100.0, endoa=850.0, linucb=45.6, lints=16.1)]
    assert experiments._best_baselines(runs)[labelled("best_sequential_regret", **D2, T=10_000)] == 16.1
    regime = paper.REGIMES[-1]
    assert regime.experiment is EOO and labelled("headline_regret", alg="lints") in regime.metrics


def test_the_headline_instance_reports_every_algorithm_under_one_name(tmp_path):
    small = {"instances": ["3:0.01:800", "2:0.2:600", "2:0.05:700"], "algorithms": ["e4", "phaelimd", "linucb"],
             "sequential_max_horizon": 1000}
    m = EOO(Context(seed=0, out_dir=tmp_path), **small)
    at = {"instance": "eoo", "d": 2, "eps": 0.05, "T": 700}  # smallest d, then eps
    for alg in ("e4", "phaelimd", "linucb"):
        assert m[labelled("headline_regret", alg=alg)] == m[labelled("regret", **at, alg=alg)]
    assert m[labelled("headline_batches", alg="linucb")] == 700.0  # one pull per batch
    assert "45.6" in paper.CLAIMS[0].text and "LinTS" in paper.CLAIMS[0].text


def test_a_rounding_sized_gain_is_no_gain():
    labels = {"instance": "random", "K": 50, "d": 20, "protocol": "random_order"}
    tie = {labelled("regret", **labels, alg="e4"): 1000.0 - 1e-10, labelled("best_baseline_regret", **labels): 1000.0}
    assert paper.CLAIMS[2].evaluate(tie).status == "fails"
    assert paper.CLAIMS[2].evaluate({**tie, labelled("regret", **labels, alg="e4"): 999.0}).status == "holds"
    assert not claims._below(1.0 - 1e-12, 1.0) and claims._below(0.0, 1.0)
    near = {**_horizon("e4-instance", 1.0, 9.0, 62_000.0 - 1e-9), **_horizon("phaelimd", 1.0, 4.0, 62_000.0), **BOUNDS}
    assert paper.CLAIMS[6].evaluate(near).status == "fails"


def test_every_family_keeps_the_default_and_names_real_parameters():
    for exp in paper.PAPER.experiments.values():
        for family in exp.families():
            assert {} in family.at("quick").values() and 0 < family.share <= 1
            for member in family.at("quick"):
                config = exp.member_config(family, member, "quick")
                if "instance_seed" in family.at("quick")[member]:
                    assert config["instance_seed"] >= 1000  # disjoint from the seeds settings were chosen on
    assert all(c.resolved_family is not None for c in paper.CLAIMS)
