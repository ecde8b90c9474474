"""The HC-SDR reproduction: one replicate per seed, across-seed summaries, claims that can fail."""

import pytest

from icml24.core import Context, labelled
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import hellinger_sdr as paper
from icml24.papers.hellinger_sdr import claims, experiments

EXP = experiments.single_index


def _err(model: str, init: str, refined: bool, design: str = "gaussian", beta: str = "sparse") -> str:
    return labelled("error", beta=beta, design=design, init=init, model=model, refined=refined)


SIR_Q, SIR_Q_HC = _err("quadratic", "sir", False), _err("quadratic", "sir", True)


def test_settings_name_real_parameters_and_the_paper_grid():
    quick, full = EXP.config(setting="quick"), EXP.config(setting="full")
    assert EXP.seeds == {"quick": 5, "full": 100, "smoke": 1}
    assert set(quick["initializers"]) == set(quick["refine"]) == {"sir", "save", "dr", "mave", "dcov"}
    assert quick["designs"] == ["gaussian", "t3"] and {"dr", "mave"} <= set(quick["refine_heavy"])
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
    assert first[SIR_Q] != second[SIR_Q]  # new data per seed
    assert _err("linear", "sir", True) not in first and SIR_Q_HC in first  # SIR refined on quadratic only
    assert _err("linear", "dr", True, design="t3") in first and labelled(
        "snr", beta="sparse", design="t3", model="sine") in first
    assert execute(tasks[0]).metrics == first
    summary = aggregate(records, EXP)
    assert summary["num_seeds"] == 2 and 0 <= summary["dr_models_improved_sparse"] <= 4
    for claim in claims_of(EXP):
        assert claim.evaluate(summary).status in {"holds", "fails"}


def test_summary_uses_means_over_seeds():
    per_seed = [
        {_err("linear", "dr", False): 0.1, _err("linear", "dr", True): 0.3, _err("sine", "dr", False): 0.5,
         _err("sine", "dr", True): 0.1},
        {_err("linear", "dr", False): 0.3, _err("linear", "dr", True): 0.0, _err("sine", "dr", False): 0.5,
         _err("sine", "dr", True): 0.2},
    ]
    out = experiments._single_index_summary(per_seed)
    assert out["max_mean_error_increase"] == pytest.approx(-0.05)  # linear: 0.15 - 0.2; sine: 0.15 - 0.5
    assert out["dr_models_improved_sparse"] == 2.0
    assert out["dr_refined_win_fraction"] == 0.75


GOOD = {"dr_models_improved_sparse": 4.0, "max_mean_error_increase": -0.01, SIR_Q: 0.95, SIR_Q_HC: 0.05,
        "t3_dr_models_improved": 4.0, "t3_mave_models_improved": 3.0,
        "t3_dr_mean_gain": 0.05, "t3_dr_mean_gain_se": 0.01}


@pytest.mark.parametrize("claim_index,change", [
    (0, {"dr_models_improved_sparse": 2.0}),
    (0, {"max_mean_error_increase": 0.05}),
    (1, {SIR_Q: 0.5}),
    (1, {SIR_Q_HC: 0.6}),
    (2, {"t3_mave_models_improved": 2.0}),
    (2, {"t3_dr_mean_gain": 0.015}),
])
def test_each_claim_can_fail(claim_index, change):
    claim = paper.CLAIMS[claim_index]
    assert claim.evaluate(GOOD).status == "holds"
    assert claim.evaluate(GOOD | change).status == "fails"


def test_the_heavy_tailed_claim_without_its_design_is_an_error_not_a_failure():
    gaussian_only = {k: v for k, v in GOOD.items() if not k.startswith("t3_")}
    verdict = paper.CLAIMS[2].evaluate(gaussian_only)
    assert verdict.status == "error" and "t3_" in verdict.message


def test_nulls_fill_the_refined_slot_without_the_method(tmp_path):
    small = {"models": ["linear", "quadratic"], "initializers": ["sir"], "refine": ["sir"], "refine_quadratic": [],
             "n": 80}
    none = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="none")
    assert none[SIR_Q_HC] == none[SIR_Q]  # the initializer, unrefined
    random = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="random")
    assert random[_err("linear", "sir", False)] == none[_err("linear", "sir", False)]  # same data, same initializer
    assert random[_err("linear", "sir", True)] > 0.5  # a random line in R^10 is far from beta
    with pytest.raises(ValueError, match="refiner must be"):
        EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="pca")
    assert paper.CLAIMS[2].resolved_null.overrides == {"refiner": "none"}  # the heavy-tailed claim
    assert paper.CLAIMS[0].resolved_null.overrides == {"refiner": "none"}


def _bad_input_cases():
    import numpy as np

    from icml24.sdr import (
        DCOVSDR,
        MAVE,
        OPG,
        SAVE,
        SIR,
        DirectionalRegression,
        HellingerSDR,
        hellinger_correlation,
        single_index_data,
        subspace_distance,
    )

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = X[:, 0] ** 2 + 0.1 * rng.standard_normal(60)
    cases = {
     "SIR n_directions=0": lambda: SIR(n_directions=0).fit(X,y),
     "SIR n_directions=5>p": lambda: SIR(n_directions=5).fit(X,y),
     "SIR n_directions=1.5": lambda: SIR(n_directions=1.5).fit(X,y),
     "SIR n_slices=0": lambda: SIR(n_slices=0).fit(X,y),
     "SIR n_slices=1": lambda: SIR(n_slices=1).fit(X,y),
     "SIR n_slices=-3": lambda: SAVE(n_slices=-3).fit(X,y),
     "DR n_slices=0": lambda: DirectionalRegression(n_slices=0).fit(X,y),
     "SIR NaN X": lambda: SIR().fit(np.where(X>2,np.nan,X),y),
     "SIR inf y": lambda: SIR().fit(X,np.r_[np.inf,y[1:]]),
     "SIR y 2 cols": lambda: SIR().fit(X,np.c_[y,y]),
     "SIR len mismatch": lambda: SIR().fit(X,y[:-1]),
     "SIR n=2": lambda: SIR().fit(X[:2],y[:2]),
     "SIR constant y": lambda: SIR().fit(X,np.ones(60)),
     "MAVE bandwidth=0": lambda: MAVE(bandwidth=0.0).fit(X,y),
     "MAVE bandwidth=-1": lambda: OPG(bandwidth=-1.0).fit(X,y),
     "MAVE max_iter=0": lambda: MAVE(max_iter=-1).fit(X,y),
     "MAVE tol=-1": lambda: MAVE(tol=-1.0).fit(X,y),
     "DCOV n_starts=0": lambda: DCOVSDR(n_starts=0).fit(X,y),
     "DCOV maxiter=-1": lambda: DCOVSDR(maxiter=-1).fit(X,y),
     "HC sa_maxiter=-5": lambda: HellingerSDR(sa_maxiter=-5, nm_maxfev=10).fit(X,y),
     "HC sa_temperature=0": lambda: HellingerSDR(sa_maxiter=10, sa_temperature=0.0, nm_maxfev=10).fit(X,y),
     "HC sa_tmax=0": lambda: HellingerSDR(sa_maxiter=10, sa_tmax=0, nm_maxfev=10).fit(X,y),
     "HC nm_maxfev=-1": lambda: HellingerSDR(sa_maxiter=10, nm_maxfev=-1).fit(X,y),
     "HC nm_reltol=-1": lambda: HellingerSDR(sa_maxiter=10, nm_maxfev=10, nm_reltol=-1.0).fit(X,y),
     "HC algorithm=bogus": lambda: HellingerSDR(sa_maxiter=10, nm_maxfev=10, algorithm="bogus").fit(X,y),
     "HC init=pca": lambda: HellingerSDR(init="pca").fit(X,y),
     "HC init wrong len": lambda: HellingerSDR(init=np.ones(3)).fit(X,y),
     "HC init zeros": lambda: HellingerSDR(init=np.zeros(4)).fit(X,y),
     "HC init nan": lambda: HellingerSDR(init=np.array([np.nan,1,1,1])).fit(X,y),
     "HC init object no fit": lambda: HellingerSDR(init=object()).fit(X,y),
     "hellinger_correlation mismatch": lambda: hellinger_correlation(np.arange(5.),np.arange(4.)),
     "hellinger_correlation nan": lambda: hellinger_correlation(np.r_[np.nan,1,2,3.],np.arange(4.)),
     "hellinger_correlation n=1": lambda: hellinger_correlation(np.ones(1),np.ones(1)),
     "hellinger_correlation 2d": lambda: hellinger_correlation(np.ones((4,2)),np.ones(4)),
     "single_index_data unknown": lambda: single_index_data("cubic", rng),
     "single_index_data n=0": lambda: single_index_data("linear", rng, n=0),
     "single_index_data noise<0": lambda: single_index_data("linear", rng, noise=-1.0),
     "subspace_distance shape": lambda: subspace_distance(np.ones(3), np.ones(4)),
     "subspace_distance zero": lambda: subspace_distance(np.zeros(4), np.ones(4)),
     "subspace_distance nan": lambda: subspace_distance(np.r_[np.nan,1,1,1], np.ones(4)),
     "transform wrong cols": lambda: SIR().fit(X,y).transform(X[:, :3]),
    }
    return cases


BAD_INPUTS = _bad_input_cases()


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_inputs_give_a_clear_value_error(name):
    """Each bad argument or data set (41 of them, over every public SDR entry point) raises a ValueError."""
    with pytest.raises(ValueError):
        BAD_INPUTS[name]()


def test_heavy_tailed_summary_counts_models_and_gains():
    per_seed = [{_err("linear", "dr", False, "t3"): 0.3, _err("linear", "dr", True, "t3"): 0.1,
                 _err("sine", "dr", False, "t3"): 0.2, _err("sine", "dr", True, "t3"): 0.3,
                 _err("linear", "dr", False): 0.1, _err("linear", "dr", True): 0.1}] * 2
    out = experiments._single_index_summary(per_seed)
    assert out["t3_dr_models_improved"] == 1.0 and out["t3_dr_mean_gain"] == pytest.approx(0.05)
    assert out["max_mean_error_increase"] == pytest.approx(0.0)  # the Gaussian design only


def test_a_rounding_sized_gain_is_not_an_improvement():
    """The no-refinement null held on gains of 3e-17 to 2e-16 (rounding) counted as improvements (#56)."""
    models = ("linear", "sine", "quadratic", "exponential")
    per_seed = [{**{_err(m, "dr", False): 0.2 + 1e-3 * s for m in models},
                 **{_err(m, "dr", True): 0.2 + 1e-3 * s - 2e-16 for m in models},
                 **{_err(m, "dr", False, "t3"): 0.3 for m in models}, **{_err(m, "dr", True, "t3"): 0.3 - 3e-17
                                                                         for m in models}} for s in range(3)]
    out = experiments._single_index_summary(per_seed)
    assert out["dr_models_improved_sparse"] == 0.0 and out["dr_refined_win_fraction"] == 0.0
    assert out["t3_dr_models_improved"] == 0.0
    assert paper.CLAIMS[0].evaluate(out).status == "fails"
    assert paper.CLAIMS[2].check({**GOOD, "t3_dr_mean_gain": 3e-17, "t3_dr_mean_gain_se": 0.0}) is False


def test_linear_model_is_recovered_by_every_initializer():
    """The sanity bound the second pass moved out of the claims: y = X beta + 0.2 eps, n = 400 (official setting)."""
    import numpy as np

    from icml24.sdr import make_initializer, single_index_data, subspace_distance

    X, y, beta = single_index_data("linear", np.random.default_rng(0), n=400)
    for name in ("sir", "save", "dr", "mave", "dcov"):
        direction = make_initializer(name, random_state=0).fit(X, y).directions_
        bound = 0.3 if name == "save" else 0.1  # SAVE's second moments see a linear index only weakly
        assert subspace_distance(direction, beta) <= bound, name


def test_the_oracle_puts_the_true_direction_in_the_refined_slot(tmp_path):
    small = {"models": ["linear", "quadratic"], "initializers": ["sir"], "refine": ["sir"], "refine_quadratic": [],
             "n": 80}
    truth = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="truth")
    none = EXP(Context(seed=0, out_dir=tmp_path), **small, refiner="none")
    for model in ("linear", "quadratic"):
        assert truth[_err(model, "sir", True)] == pytest.approx(0.0, abs=1e-12)  # beta itself
        assert truth[_err(model, "sir", False)] == none[_err(model, "sir", False)]  # same data and initializer
        assert truth[labelled("b_gap", beta="sparse", design="gaussian", init="sir", model=model)] == 0.0
    assert {c.resolved_oracle.overrides["refiner"] for c in paper.CLAIMS} == {"truth"}


def test_the_dimension_member_adds_inert_covariates_and_keeps_the_official_draw():
    import numpy as np

    official = experiments._instance("sine", np.random.default_rng(3), 50, True, 0.2, False, "gaussian", 10)
    wide = experiments._instance("sine", np.random.default_rng(3), 50, True, 0.2, False, "gaussian", 20)
    assert wide[0].shape == (50, 20) and np.array_equal(wide[0][:, :10], official[0])
    assert np.array_equal(wide[1], official[1]) and np.array_equal(wide[2][10:], np.zeros(10))
    heavy = experiments._instance("linear", np.random.default_rng(3), 400, True, 0.2, False, "t3", 14)
    assert heavy[0].shape == (400, 14) and abs(float(heavy[0][:, 10:].std()) - 1.0) < 0.25  # unit-variance t(3)
    with pytest.raises(ValueError, match="dimension must be"):
        experiments._instance("sine", np.random.default_rng(3), 50, True, 0.2, False, "gaussian", 5)


def test_the_family_keeps_the_official_instance_and_names_real_parameters():
    family = claims.MODELS_FAMILY
    assert {} in family.at("quick").values() and {} in family.at("full").values()
    assert len(family.at("quick")) == 3 and family.required(3) == 2 and family.required(4) == 3
    for claim in paper.CLAIMS:
        assert claim.resolved_family is family and "two thirds" in claim.text
    for member in family.at("full"):
        EXP.member_config(family, member, "full")
