"""The genco reproduction: smoke runs through the runner, the regime in the metrics, claims that can fail."""

import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import genco as paper


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("genco"), seeds=[0])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    for name, summary in smoke_metrics.items():
        assert all(math.isfinite(v) for v in summary.values())
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}
    zelda = smoke_metrics["zelda"]
    assert {"plain_feasible", "data_feasible"} <= set(zelda)  # the regime
    for method in paper.METHODS:
        assert {f"{method}_{k}" for k in ("feasible", "unique", "novel", "objective", "fit_seconds")} <= set(zelda)
    # even in a 3-step smoke run the guarantee holds: GenCO and both repairs are feasible, by the BFS checker
    assert zelda["genco_min_train_feasible"] == 1.0 and zelda["genco_feasible"] == 1.0
    assert zelda["repair_feasible"] == 1.0 and zelda["penalty_repair_feasible"] == 1.0
    check = smoke_metrics["solver_check"]
    assert check["zelda_forward_feasible"] == 1.0 and check["zelda_max_objective_gap"] < 1e-6
    assert check["sp_max_objective_gap"] < 1e-6


def _good():
    zelda = {"genco_min_train_feasible": 1.0, "genco_feasible": 1.0, "genco_unique": 0.95, "genco_novel": 1.0,
             "repair_unique": 0.1, "repair_novel": 1.0, "genco_objective": 0.25, "penalty_repair_feasible": 1.0,
             "penalty_repair_objective": 0.1, "plain_feasible": 0.0, "data_feasible": 1.0}
    check = {"zelda_forward_feasible": 1.0, "zelda_forward_onehot": 1.0, "zelda_max_objective_gap": 0.0,
             "sp_max_objective_gap": 0.0}
    for g in ("blackbox", "perturbed", "identity"):
        check |= {f"grad_{g}_finite": 1.0, f"grad_{g}_loss_decrease": 0.2, f"grad_{g}_improved": 0.8}
    return {"zelda": zelda, "solver_check": check}


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"genco_min_train_feasible": 0.875},  # one infeasible level in one training batch
        {"genco_unique": 0.05},  # GenCO collapses below repair's diversity
        {"genco_objective": 0.08},  # penalty training reaches more walls
        {"plain_feasible": 1.0},  # the constraints are easy: no regime for a solver
        {"zelda_max_objective_gap": 0.3},  # the layer's forward is not the optimum
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


@pytest.mark.parametrize("worse", [{"genco_novel": 0.9}, {"genco_feasible": 0.99},
                                   {"penalty_repair_feasible": 0.9}, {"grad_perturbed_loss_decrease": -0.01},
                                   {"grad_blackbox_finite": 0.0}, {"grad_identity_improved": 0.3},
                                   {"sp_max_objective_gap": 1.0},
                                   {"zelda_forward_feasible": 0.95}, {"data_feasible": 0.9}])
def test_each_part_of_a_compound_claim_can_fail(worse):
    good = _good()
    claims = [c for c in paper.CLAIMS if any(k in good[c.experiment.name] for k in worse)]
    assert any(c.evaluate({**good[c.experiment.name], **worse}).status == "fails" for c in claims)


def test_settings_follow_the_paper_page():
    zelda = paper.PAPER.experiments["zelda"]
    assert zelda.full["height"] == 9 and zelda.full["width"] == 13 and zelda.full["n_train"] == 50  # 50 levels
    assert zelda.seeds["quick"] >= 2
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
