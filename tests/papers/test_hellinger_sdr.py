"""The HC-SDR reproduction: one replicate per seed, across-seed summaries, claims that can fail."""

import pytest

from icml24.core import Context
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import hellinger_sdr as paper

EXP = paper.single_index


def test_settings_name_real_parameters_and_the_paper_grid():
    quick, full = EXP.config(setting="quick"), EXP.config(setting="full")
    assert EXP.seeds == {"quick": 20, "full": 100, "smoke": 1}
    assert quick["n"] == full["n"] == 400 and quick["sa_maxiter"] == 20_000 and quick["nm_maxfev"] == 10_000
    assert list(full["models"]) == ["linear", "quadratic", "exponential", "sine"]
    assert full["betas"] == ["sparse", "dense"] and set(full["refine"]) == set(full["initializers"])
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)


def test_unknown_initializer_is_refused(tmp_path):
    with pytest.raises(ValueError, match="initializers must be among"):
        EXP(Context(seed=0, out_dir=tmp_path), initializers=["pca"], refine=[], refine_quadratic=[], n=50)
    with pytest.raises(ValueError, match="refined ones among the initializers"):
        EXP(Context(seed=0, out_dir=tmp_path), initializers=["sir"], refine=["dr"], refine_quadratic=[], n=50)


def test_seeds_are_replicates_and_claims_are_decidable(tmp_path):
    tasks = plan([EXP], seeds=[0, 1], setting="smoke", store_folder=tmp_path)
    records = [execute(task) for task in tasks]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    first, second = (r.metrics for r in records)
    assert first["sparse_quadratic_sir"] != second["sparse_quadratic_sir"]  # new data per seed
    assert "sparse_linear_sir_hc" not in first and "sparse_quadratic_sir_hc" in first  # SIR refined on quadratic only
    assert execute(tasks[0]).metrics == first
    summary = aggregate(records, EXP)
    assert summary["num_seeds"] == 2 and 0 <= summary["dr_models_improved_sparse"] <= 4
    for claim in claims_of(EXP):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def test_summary_uses_means_over_seeds():
    per_seed = [
        {"sparse_linear_dr": 0.1, "sparse_linear_dr_hc": 0.3, "sparse_sine_dr": 0.5, "sparse_sine_dr_hc": 0.1},
        {"sparse_linear_dr": 0.3, "sparse_linear_dr_hc": 0.0, "sparse_sine_dr": 0.5, "sparse_sine_dr_hc": 0.2},
    ]
    out = paper._single_index_summary(per_seed)
    assert out["max_mean_error_increase"] == pytest.approx(-0.05)  # linear: 0.15 - 0.2; sine: 0.15 - 0.5
    assert out["dr_models_improved_sparse"] == 2.0
    assert out["dr_refined_win_fraction"] == 0.75


GOOD = {"dr_models_improved_sparse": 4.0, "max_mean_error_increase": -0.01, "sparse_quadratic_sir": 0.95,
        "sparse_quadratic_sir_hc": 0.05, "sparse_linear_sir": 0.05, "sparse_linear_dr": 0.06,
        "sparse_linear_dr_hc": 0.02}


@pytest.mark.parametrize("claim_index,change", [
    (0, {"dr_models_improved_sparse": 2.0}),
    (0, {"max_mean_error_increase": 0.05}),
    (1, {"sparse_quadratic_sir": 0.5}),
    (1, {"sparse_quadratic_sir_hc": 0.6}),
    (2, {"sparse_linear_dr_hc": 0.35}),
])
def test_each_claim_can_fail(claim_index, change):
    claim = paper.CLAIMS[claim_index]
    assert claim.evaluate(GOOD).status == "holds"
    assert claim.evaluate(GOOD | change).status == "fails"


def test_nulls_fill_the_refined_slot_without_the_method(tmp_path):
    small = {"models": ["linear", "quadratic"], "initializers": ["sir"], "refine": ["sir"], "refine_quadratic": [],
             "n": 80}
    none = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="none")
    assert none["sparse_quadratic_sir_hc"] == none["sparse_quadratic_sir"]  # the initializer, unrefined
    random = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="random")
    assert random["sparse_linear_sir"] == none["sparse_linear_sir"]  # same data, same initializer
    assert random["sparse_linear_sir_hc"] > 0.5  # a random line in R^10 is far from beta
    with pytest.raises(ValueError, match="refiner must be"):
        EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="pca")
    assert paper.CLAIMS[2].resolved_null.overrides == {"refiner": "random"}
    assert paper.CLAIMS[0].resolved_null.overrides == {"refiner": "none"}
