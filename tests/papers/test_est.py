"""The est reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import est as paper


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
        "efficiency": {"flops_saving": 0.28, "flops_counter_max_rel_error": 0.0, "final_loss_gap": 0.005,
                       "est_over_baseline_time": 0.78, "equal_flops_win_fraction": 0.9,
                       "equal_flops_mean_gap": -0.05},
        "ablation": {"all_flops_saving": 0.28, "max_single_flops_saving": 0.18, "max_loss_gap": 0.01},
    }


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"final_loss_gap": 0.08},  # EST ends clearly worse than the baseline
        {"est_over_baseline_time": 0.97},  # slicing overheads eat the saving
        {"equal_flops_win_fraction": 0.4, "equal_flops_mean_gap": 0.02},  # no better per FLOP
        {"max_loss_gap": 0.05},  # one sampled dimension hurts the final loss
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_nulls_put_the_baseline_in_ests_slot():
    """The loss claims stand against the full model trained for EST's FLOPs budget, the time and equal-FLOPs claims
    against the baseline itself; the FLOPs savings, fixed by the schedules, are Regimes beside the verdicts."""
    nulls = {claim.text: claim.resolved_null.overrides for claim in paper.CLAIMS}
    assert list(nulls.values()) == [{"method": "baseline_at_est_flops"}, {"method": "baseline"},
                                    {"method": "baseline"}, {"method": "baseline_at_est_flops"}]
    shown = {m for regime in paper.PAPER.regimes for m in regime.metrics}
    assert {"flops_saving", "expected_flops_saving", "all_flops_saving", "max_single_flops_saving"} <= shown
    read = set()
    for claim in paper.CLAIMS:
        metrics = _good()[claim.experiment.name]
        read |= set(claim.evaluate(metrics).measured)
    assert not read & {"flops_saving", "all_flops_saving", "max_single_flops_saving"}  # no verdict on a schedule


def test_the_budget_baseline_trains_the_steps_ests_flops_buy():
    from icml24.llm import EvolvingSubnetworkSchedule, GPTConfig, schedule_flops, subnetwork_flops

    config = GPTConfig(block_size=64, n_layer=4, n_head=4, n_embd=32)
    schedule = paper._schedule((0.2, 0.5, 1.0), (0.5, 1.0, 1.0), (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    assert paper._in_est_slot("est", schedule, config, 900, 32, 64) == (schedule, 900)
    full, steps = paper._in_est_slot("baseline_at_est_flops", schedule, config, 900, 32, 64)
    assert full.is_full() and steps < 900
    budget = schedule_flops(config, schedule, 900, 32, 64)
    assert abs(steps * subnetwork_flops(config, None, 32, 64) - budget) <= subnetwork_flops(config, None, 32, 64) / 2
    assert paper._in_est_slot("baseline", schedule, config, 900, 32, 64)[1] == 900
    assert repr(paper._in_est_slot("baseline", schedule, config, 900, 32, 64)[0]) == \
        repr(EvolvingSubnetworkSchedule.full())
    with pytest.raises(ValueError, match="method must be one of"):
        paper._in_est_slot("dense", schedule, config, 900, 32, 64)


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
    schedule = paper._schedule((0.2, 0.5, 1.0), (0.5, 1.0, 1.0), (0.5, 0.5, 1.0), (0.5, 0.5, 1.0))
    assert [s.end for s in schedule.stages] == [0.2, 0.5, 1.0]
    assert set(paper.VARIANTS) == {"layers", "heads", "mlp", "all"}
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    assert all(not claim.setting for claim in paper.CLAIMS)  # every claim is judged at quick
