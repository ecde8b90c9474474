"""The sparsest reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import inspect
import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import sparsest as paper


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("sparsest"), seeds=[0, 1])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    for name, summary in smoke_metrics.items():
        assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
        assert {"target", "num_points", "train_steps"} <= set(summary)  # the regime is in the metrics
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}
    assert smoke_metrics["pruners"]["nnz_budget"] == 24


def _good():
    return {
        "search": {"search_any_reached": 1.0, "search_min_nnz": 22.0, "budget_success_rate": 0.125,
                   "budget_gap": 0.03},
        "pruners": {"max_success_rate": 0.2, "dense_min_accuracy_wide": 0.99, "dense_min_accuracy": 0.96,
                    "target": 0.95,
                    "accuracy_drop_narrow_to_wide": 0.1, "success_drop_narrow_to_wide": 0.1,
                    "regime_widths": 3.0, "accuracy_drop_in_regime": 0.1, "success_drop_in_regime": 0.1,
                    "dead_path_fraction": 0.6, "mean_dead_weights": 3.0},
    }


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"search_min_nnz": 48.0},  # the search needs more weights than the budget
        {"max_success_rate": 0.8},  # some pruner finds the sparse network most of the time
        {"accuracy_drop_in_regime": -0.05},  # wider starts prune better
        {"dead_path_fraction": 0.0, "mean_dead_weights": 0.0},  # pruned networks are clean
        {"budget_success_rate": 0.75},  # as many tries as the search rescue the pruners
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_pruner_claim_fails_when_the_dense_network_misses_the_target():
    claim = paper.CLAIMS[1]
    assert claim.evaluate({**_good()["pruners"], "dense_min_accuracy_wide": 0.7}).status == "fails"


def test_width_claim_fails_when_fewer_than_two_widths_train_densely():
    claim = paper.CLAIMS[2]
    assert claim.evaluate({**_good()["pruners"], "regime_widths": 1.0}).status == "fails"
    assert claim.evaluate({**_good()["pruners"], "success_drop_in_regime": -0.3}).status == "fails"


def test_the_width_comparison_starts_at_the_narrowest_width_in_the_regime():
    def seed(dense3, acc3):
        row = {"target": 0.95, "dense_w3_accuracy": dense3, "dense_w8_accuracy": 0.99, "dense_w32_accuracy": 1.0}
        for w, acc in ((3, acc3), (8, 0.9), (32, 0.6)):
            row.update({f"snip_w{w}_accuracy": acc, f"snip_w{w}_success": float(acc >= 0.95),
                        f"snip_w{w}_dead_weights": 0.0})
        return row
    out = paper._pruners_summary([seed(0.6, 0.5), seed(0.7, 0.5)])  # width 3 cannot train: 8 -> 32 is compared
    assert out["regime_widths"] == 2 and out["regime_narrowest_width"] == 8
    assert out["accuracy_drop_in_regime"] == pytest.approx(0.3) and out["accuracy_drop_narrow_to_wide"] < 0
    out = paper._pruners_summary([seed(0.99, 0.97), seed(0.97, 0.97)])  # all three train: 3 -> 32
    assert out["regime_narrowest_width"] == 3 and out["success_drop_in_regime"] == 1.0


def test_budget_claim_needs_a_successful_search_and_a_gap():
    claim = paper.CLAIMS[4]
    assert claim.evaluate({**_good()["search"], "search_any_reached": 0.0}).status == "fails"
    assert claim.evaluate({**_good()["search"], "budget_gap": 0.0}).status == "fails"  # a pruner ties the winner


def test_the_pruner_in_the_search_slot_is_the_budget_studys_own_run(tmp_path):
    from icml24.core import Context

    config = {**paper.search.config(setting="smoke"), "phase1_grid": [], "method": "gmp"}
    m = paper.search(Context(seed=0, out_dir=tmp_path), **config)
    assert m["budget_gmp_accuracy"] == m["search_accuracy"] and m["budget_gap"] <= 0.0
    assert m["budget_tries"] == 8.0 and m["masks_evaluated"] >= 8.0  # the search's tries per level
    with pytest.raises(ValueError, match="method"):
        paper.search(Context(seed=0, out_dir=tmp_path), **{**config, "method": "bogus"})


def test_settings_follow_the_paper():
    full = paper.PAPER.experiments["pruners"].full
    assert {3, 8, 32} <= set(full["widths"]) and full["imp_rounds"] == 5
    assert paper.PAPER.experiments["pruners"].seeds["full"] == 5
    assert paper.PAPER.experiments["pruners"].quick["widths"] == [3, 8, 32]
    assert all(claim.setting == "" for claim in paper.CLAIMS)  # quick evaluates every claim
    quick = paper.PAPER.experiments["search"].quick
    assert quick["epochs"] * (quick["num_points"] // 128) >= 4800  # the regime note's 4,928-step recipe
    assert paper.PAPER.experiments["pruners"].quick["epochs"] == quick["epochs"]
    assert {"prospr", "rigl"} <= set(paper.PRUNERS)
    search_full = paper.PAPER.experiments["search"].full
    assert search_full["num_points"] == 50_000 and search_full["epochs"] == 50 and search_full["max_masks_per_nnz"] == 0
    defaults = {k: v.default for k, v in inspect.signature(paper.search.fn).parameters.items()}
    assert tuple(defaults["widths"]) == (3, 3, 3) and defaults["target"] == 0.95
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
