"""The est reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import math

import numpy as np
import pytest
from smoke_runs import smoke_summaries

from icml24.core import labelled
from icml24.core.verdicts import claims_of
from icml24.papers import est as paper
from icml24.papers.est import claims, experiments


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("est"), seeds=[0])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    eff = smoke_metrics["efficiency"]
    assert all(math.isfinite(v) for s in smoke_metrics.values() for v in s.values())
    for summary in smoke_metrics.values():  # the regime
        assert {"tokens_per_param", "baseline_rel_loss_drop_last_20pct", "num_params"} <= set(summary)
    assert eff["est_over_baseline_cpu_time"] > 0
    assert eff["flops_counter_max_rel_error"] < 1e-9  # the analytic count is exact on every stage shape
    assert eff["flops_saving"] == pytest.approx(eff["expected_flops_saving"])
    assert eff["baseline_flops"] > eff["est_flops"] > 0
    for name, summary in smoke_metrics.items():
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}


def _good():
    return {
        "efficiency": {"num_seeds": 3.0, "flops_saving": 0.28, "flops_counter_max_rel_error": 0.0,
                       "final_loss_gap": 0.005, "final_loss_gap_se": 0.004, "est_over_baseline_cpu_time": 0.8,
                       "est_over_baseline_cpu_time_se": 0.01, "equal_flops_win_fraction": 0.9,
                       "equal_flops_mean_gap": -0.05, "equal_flops_mean_gap_se": 0.01},
        "ablation": {"num_seeds": 3.0, labelled("flops_saving", variant="all"): 0.28, "max_single_flops_saving": 0.18,
                     "max_loss_gap_upper_2se": 0.01},
    }


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"final_loss_gap": 0.08},  # EST ends clearly worse than the baseline
        {"est_over_baseline_cpu_time": 0.97},  # slicing overheads eat the saving
        {"equal_flops_win_fraction": 0.4, "equal_flops_mean_gap": 0.02},  # no better per FLOP
        {"max_loss_gap_upper_2se": 0.05},  # one sampled dimension hurts the final loss
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)
    eff = _good()["efficiency"]
    loss, cpu, equal = paper.CLAIMS[:3]
    assert loss.evaluate({**eff, "final_loss_gap_se": 0.01}).status == "fails"  # 0.005 + 2 x 0.01: inside the noise
    assert loss.evaluate({**eff, "num_seeds": 2.0}).status == "fails"  # fewer than 3 seeds: no verdict holds
    assert cpu.evaluate({**eff, "est_over_baseline_cpu_time": 0.89}).status == "fails"  # 0.89 + 0.02 > 0.90
    assert equal.evaluate({**eff, "equal_flops_mean_gap_se": 0.03}).status == "fails"  # -0.05 + 0.06 > 0


def test_summaries_pair_the_seeds_and_flag_a_verdict_inside_the_noise():
    seeds = [{"final_loss_gap": g, "equal_flops_mean_gap": -0.1, "est_over_baseline_cpu_time": 0.8,
              "est_over_baseline_time": t} for g, t in ((0.036, 0.7), (0.335, 0.9), (0.395, 0.8))]  # issue 39's
    out = experiments.efficiency.summarize(seeds)
    se = float(np.std([0.036, 0.335, 0.395], ddof=1) / np.sqrt(3))
    assert out["final_loss_gap_se"] == pytest.approx(se) and out["equal_flops_mean_gap_se"] < 1e-12
    assert out["final_loss_gap_upper_2se"] == pytest.approx(np.mean([0.036, 0.335, 0.395]) + 2 * se)
    assert out["final_loss_verdict_inside_noise"] == 0.0  # mean 0.255 is 2 SE (0.22) above the 0.02 margin
    near = experiments.efficiency.summarize([{**seeds[0], "final_loss_gap": g} for g in (-0.05, 0.02, 0.09)])
    assert near["final_loss_verdict_inside_noise"] == 1.0
    abl = experiments.ablation.summarize([{labelled("final_loss_gap", variant="heads"): 0.01,
                                     labelled("final_loss_gap", variant="mlp"): g} for g in (0.0, 0.02)])
    assert abl["max_loss_gap_upper_2se"] == pytest.approx(0.01 + 2 * np.std([0.0, 0.02], ddof=1) / np.sqrt(2))
    assert abl["final_loss_gap_upper_2se[variant=heads]"] == pytest.approx(0.01)


class _Run:
    def __init__(self, losses, every=10):
        self.evals_ = [{"step": every * (i + 1), "val_loss": v} for i, v in enumerate(losses)]
        self.steps_done_ = every * len(losses)


def test_the_best_knob_saves_most_without_a_validation_penalty():
    assert experiments.best_knob([-0.061, -0.078, 0.031, -0.032], [0.26, 0.15, 0.37, 0.14]) == 0  # issue 39's quick
    assert experiments.best_knob([0.05, 0.01, 0.03], [0.3, 0.1, 0.2]) == 1  # every setting pays: the smallest penalty


def test_plateau_exit_is_the_first_evaluation_below_the_unigram_loss():
    tokens = np.array([0, 0, 1, 1])  # two equally frequent bytes: log 2 nats
    assert experiments.unigram_entropy(tokens) == pytest.approx(np.log(2))
    assert experiments.plateau_exit_step(_Run([3.3, 3.25, 3.1, 2.5]), 3.32) == 30.0
    assert experiments.plateau_exit_step(_Run([3.3, 3.3]), 3.32) == 20.0  # never left: the last step


def test_nulls_put_the_baseline_in_ests_slot():
    """The loss claims stand against the full model trained for EST's FLOPs budget, the time and equal-FLOPs claims
    against the baseline itself; the FLOPs savings, fixed by the schedules, are Regimes beside the verdicts."""
    nulls = {claim.text: claim.resolved_null.overrides for claim in paper.CLAIMS}
    assert list(nulls.values()) == [{"method": "baseline_at_est_flops"}, {"method": "baseline"},
                                    {"method": "baseline"}, {"method": "baseline_at_est_flops"}]
    shown = {m for regime in paper.PAPER.regimes for m in regime.metrics}
    savings = {"flops_saving", labelled("flops_saving", variant="all"), "max_single_flops_saving"}
    assert savings | {"expected_flops_saving"} <= shown
    read = set()
    for claim in paper.CLAIMS:
        metrics = _good()[claim.experiment.name]
        read |= set(claim.evaluate(metrics).measured)
    assert not read & savings  # no verdict on a schedule


def test_the_budget_baseline_trains_the_steps_ests_flops_buy():
    from icml24.llm import EvolvingSubnetworkSchedule, GPTConfig, schedule_flops, subnetwork_flops

    config = GPTConfig(block_size=64, n_layer=4, n_head=4, n_embd=32)
    schedule = experiments._schedule((0.2, 0.5, 1.0), (0.5, 1.0, 1.0), (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    assert experiments._in_est_slot("est", schedule, config, 900, 32, 64) == (schedule, 900)
    full, steps = experiments._in_est_slot("baseline_at_est_flops", schedule, config, 900, 32, 64)
    assert full.is_full() and steps < 900
    budget = schedule_flops(config, schedule, 900, 32, 64)
    assert abs(steps * subnetwork_flops(config, None, 32, 64) - budget) <= subnetwork_flops(config, None, 32, 64) / 2
    assert experiments._in_est_slot("baseline", schedule, config, 900, 32, 64)[1] == 900
    assert repr(experiments._in_est_slot("baseline", schedule, config, 900, 32, 64)[0]) == \
        repr(EvolvingSubnetworkSchedule.full())
    with pytest.raises(ValueError, match="method must be one of"):
        experiments._in_est_slot("dense", schedule, config, 900, 32, 64)


def _params(setting):
    import torch

    from icml24.llm import GPT, GPTConfig

    with torch.device("meta"):
        model = GPT(GPTConfig(block_size=setting["block_size"], n_layer=setting["n_layer"],
                              n_head=setting["n_head"], n_embd=setting["n_embd"]))
    return model.num_params()


@pytest.mark.parametrize("name", ["efficiency", "ablation"])
def test_quick_and_full_train_many_tokens_per_parameter(name):
    """The paper's regime is pre-training (tens of tokens per parameter): quick and full both sit in it, full larger."""
    exp = paper.PAPER.experiments[name]
    sizes = {}
    for setting_name in ("quick", "full"):
        setting = exp.config(setting=setting_name)
        sizes[setting_name] = params = _params(setting)
        tokens = setting["steps"] * setting["batch_size"] * setting["block_size"]
        assert tokens / params >= 20, (setting_name, tokens / params)
    assert 30_000 <= sizes["quick"] <= 200_000 and sizes["full"] > sizes["quick"]


def test_settings_and_variants():
    schedule = experiments._schedule((0.2, 0.5, 1.0), (0.5, 1.0, 1.0), (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    assert [s.end for s in schedule.stages] == [0.2, 0.5, 1.0]
    assert set(experiments.VARIANTS) == {"layers", "heads", "mlp", "all"}
    assert {claim.experiment.name for claim in paper.CLAIMS} == {"efficiency", "ablation"}
    assert {r.experiment.name for r in paper.PAPER.regimes} == set(paper.PAPER.experiments)
    assert [c.setting for c in paper.CLAIMS] == ["", "", "", "full"]  # the ablation's 3 seeds run at full
    assert all(experiments.efficiency.seeds[s] >= 3 for s in ("quick", "full", "smoke"))
    assert set(experiments.KNOBS) == {"default", "early", "late", "mild"}
    with pytest.raises(ValueError, match="unknown knobs"):
        experiments.schedule_knobs.fn(None, knobs=["fast"])


def test_the_oracle_is_the_full_models_training_charged_at_the_schedules_flops():
    from icml24.llm import GPTConfig, schedule_flops, subnetwork_flops

    config = GPTConfig(block_size=16, n_layer=4, n_head=4, n_embd=32)
    schedule = experiments._schedule((0.2, 0.5, 1.0), (0.5, 1.0, 1.0), (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    per_step = experiments.schedule_step_flops(config, schedule, 20, 8, 16)
    assert per_step.sum() == schedule_flops(config, schedule, 20, 8, 16)
    full = subnetwork_flops(config, None, 8, 16)
    assert (per_step[10:] == full).all() and (per_step[4:10] < full).all()  # stage 3: the full model
    assert len(set(per_step[:4])) == len(set(per_step[4:10])) == 1 and per_step[0] < per_step[4]  # one shape each
    assert experiments._in_est_slot("oracle", schedule, config, 20, 8, 16)[0].is_full()  # it trains the full model

    class Trained:  # a full-model run: eval every 5 steps, loss falling
        def __init__(self):
            self.step_flops_ = np.full(20, float(full))
            self.total_flops_ = float(self.step_flops_.sum())
            self.evals_ = [{"step": s, "flops": float(s * full), "val_loss": 3.0 - 0.1 * s} for s in (5, 10, 15, 20)]

    base, oracle = Trained(), experiments.charge_at(Trained(), per_step)
    assert oracle.total_flops_ == per_step.sum() and [e["val_loss"] for e in oracle.evals_] == [
        e["val_loss"] for e in base.evals_]
    assert [e["flops"] for e in oracle.evals_] == [float(per_step[:s].sum()) for s in (5, 10, 15, 20)]
    win, gap, count = experiments._equal_flops(base, oracle)
    assert count >= 2 and win == 1.0 and gap < 0  # lower loss at every compared FLOPs count in range
    assert paper.CLAIMS[2].resolved_oracle.overrides == {"method": "oracle"}


def test_a_rounding_size_loss_difference_does_not_count():
    class Curve:
        def __init__(self, shift):
            self.evals_ = [{"step": s, "flops": float(s), "val_loss": 3.0 - 0.1 * s + shift} for s in (1, 2, 3, 4)]

    assert 1e-12 < experiments.LOSS_TOL < 1e-4
    assert experiments._equal_flops(Curve(0.0), Curve(-1e-12))[0] == 0.0  # no win by rounding
    assert experiments._equal_flops(Curve(0.0), Curve(-1e-3))[0] == 1.0
    eff = _good()["efficiency"]
    rounding = {**eff, "equal_flops_mean_gap": -1e-12, "equal_flops_mean_gap_se": 0.0, "equal_flops_win_fraction": 1.0}
    assert paper.CLAIMS[2].evaluate(rounding).status == "fails"
    assert experiments.best_knob([1e-12, 0.01], [0.3, 0.1]) == 0  # a rounding-size penalty is no penalty


def test_oracles_and_corpora():
    from icml24.core import NoOracle

    oracles = [claim.resolved_oracle for claim in paper.CLAIMS]
    assert isinstance(oracles[1], NoOracle) and "speed" in oracles[1].reason  # the CPU-time claim
    assert {o.key for i, o in enumerate(oracles) if i != 1} == {"method='oracle'"}
    for claim in paper.CLAIMS:
        family = claim.resolved_family
        assert family is claims.CORPORA and list(family.at("full").values()) == [{}, {"corpus": "pydoc"}]
        assert family.required(2) == 2 and "both corpora" in claim.text
    assert experiments.efficiency.defaults()["corpus"] == "shakespeare" == experiments.ablation.defaults()["corpus"]
    assert experiments.ablation.seeds["smoke"] >= 3  # the ablation claim reads >= 3 seeds, its oracle at smoke too
