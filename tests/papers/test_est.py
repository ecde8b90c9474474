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


def test_first_claim_also_fails_on_a_small_saving_or_a_wrong_count():
    claim = paper.CLAIMS[0]
    good = _good()["efficiency"]
    assert claim.evaluate({**good, "flops_saving": 0.1}).status == "fails"
    assert claim.evaluate({**good, "flops_counter_max_rel_error": 0.3}).status == "fails"


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
