import math

import pytest

from icml24.core import Context
from icml24.papers import ridgeless as paper
from icml24.papers.ridgeless import claims, experiments, theory


def _claim(start: str):
    found = [c for c in paper.CLAIMS if c.text.startswith(start)]
    assert len(found) == 1, start
    return found[0]


POLY_GOOD = {"cond_slope[a=0.5]": 1.55, "cond_slope[a=1.0]": 2.05, "variance_spread[a=0.5]": 0.08,
             "variance_spread[a=1.0]": 0.05, "points_used[a=0.5]": 5.0, "points_used[a=1.0]": 5.0,
             "in_bounds_fraction": 1.0, "in_bounds_points": 50.0}
EXP_GOOD = {"points_used[a=0.1]": 6.0, "points_used[a=0.2]": 4.0, "cond_slope_per_a[a=0.1]": 1.07,
            "cond_slope_per_a[a=0.2]": 1.05, "variance_slope_per_a[a=0.1]": 1.05, "variance_slope_per_a[a=0.2]": 1.04,
            "in_bounds_fraction": 1.0, "in_bounds_points": 50.0}
REAL_GOOD = {"laplace_mse_spread": 0.2, "gaussian_solved_points": 5.0, "gaussian_log10_mse_rise": 7.0}
COND_GOOD = {"cond_slope[d=1]": 2.9, "cond_slope[d=1]_std": 0.3, "cond_slope[d=2]": 1.9, "cond_slope[d=2]_std": 0.2,
             "num_seeds": 10.0, "resolved_fraction[d=1]": 1.0, "resolved_fraction[d=2]": 1.0}

CASES = [  # claim prefix, good metrics, a plausible bad variant (what the claim must catch)
    ("Polynomial decay: the slope", POLY_GOOD, {"cond_slope[a=1.0]": 1.0}),  # cond ~ n, not n^{1+a}
    ("Polynomial decay: the slope", POLY_GOOD, {"cond_slope[a=0.5]": 1.8}),
    ("Polynomial decay: the variance", POLY_GOOD, {"variance_spread[a=1.0]": 0.6}),  # V grows with n
    ("Polynomial decay: the slope", POLY_GOOD, {"points_used[a=0.5]": 2.0}),  # too few resolved n for a slope
    ("Polynomial decay: the variance", POLY_GOOD, {"points_used[a=1.0]": 2.0}),
    ("Exponential decay", EXP_GOOD, {"variance_slope_per_a[a=0.2]": 0.05}),  # V flat: tempered, not catastrophic
    ("Exponential decay", EXP_GOOD, {"cond_slope_per_a[a=0.1]": 0.5}),
    ("Exponential decay", EXP_GOOD, {"points_used[a=0.2]": 2.0}),  # too few resolved points to call a slope
    ("Laplace kernel (polynomial", REAL_GOOD, {"laplace_mse_spread": 0.9}),
    ("Gaussian kernel", REAL_GOOD, {"gaussian_log10_mse_rise": 0.3}),
    ("Gaussian kernel", REAL_GOOD, {"gaussian_solved_points": 1.0}),
    ("Laplace kernel on i.i.d.", COND_GOOD, {"cond_slope[d=1]": 2.05}),  # the grid's rate 1 + 1/d
    ("Laplace kernel on i.i.d.", COND_GOOD, {"cond_slope[d=2]": 1.6}),
]


@pytest.mark.parametrize("start,good,bad", CASES)
def test_every_claim_can_fail(start, good, bad):
    claim = _claim(start)
    assert claim.evaluate(dict(good)).status == "holds"
    assert claim.evaluate({**good, **bad}).status == "fails"


def test_condition_claim_reads_both_dimensions_and_the_spread():
    claim = _claim("Laplace kernel on i.i.d.")
    assert claim.evaluate({"cond_slope[d=1]": 2.9, "num_seeds": 3.0}).status == "error"  # no planned d recorded
    planned_unresolved = {k: v for k, v in COND_GOOD.items() if not k.startswith("cond_slope[d=2]")}
    assert claim.evaluate(planned_unresolved).status == "error"  # d = 2 planned, no slope: error, never a pass
    assert set(claim.evaluate(dict(COND_GOOD)).measured) == {k for k in COND_GOOD if "resolved" not in k}
    three = {"resolved_fraction[d=3]": 1.0, "cond_slope[d=3]": 1.6, "cond_slope[d=3]_std": 0.1, "num_seeds": 3.0}
    assert claim.evaluate(three).status == "holds"  # a family member in d = 3: above 1 + 1.5/3
    assert claim.evaluate({**three, "cond_slope[d=3]": 1.4}).status == "fails"


def test_grid_design_in_the_random_slot_gives_the_independent_feature_rate(tmp_path):
    exp = paper.PAPER.experiments["laplace_condition"]
    params = {"dims": [1, 2], "ns": [25, 100, 400]}
    grid = exp(Context(seed=0, out_dir=tmp_path), **params, design="grid")
    random = exp(Context(seed=0, out_dir=tmp_path), **params)
    for d in (1, 2):
        assert abs(grid[f"cond_slope[d={d}]"] - (1 + 1 / d)) < 0.1 and grid[f"resolved_fraction[d={d}]"] == 1.0
        assert random[f"separation_slope[d={d}]"] < grid[f"separation_slope[d={d}]"] - 0.15
        assert random[f"points[d={d},n=100]"] == grid[f"points[d={d},n=100]"] == 100.0
    assert exp(Context(seed=0, out_dir=tmp_path), **params) == random


def test_claims_without_any_decay_tag_fail_instead_of_holding_vacuously():
    assert _claim("Polynomial decay: the slope").evaluate({"in_bounds_fraction": 1.0}).status == "fails"
    assert _claim("Exponential decay").evaluate({"in_bounds_fraction": 1.0}).status == "fails"


def test_every_experiment_is_claimed():
    assert {c.experiment.name for c in paper.CLAIMS} == set(paper.PAPER.experiments)


def test_the_bounds_coverage_is_a_regime_not_a_claim():
    assert not [c for c in paper.CLAIMS if "bounds" in c.text]  # it holds by construction: no null can fail it
    assert {r.experiment.name for r in paper.REGIMES} == {"polynomial_decay", "exponential_decay", "real_kernels"}
    assert all("cond_band_decades_max" in r.metrics for r in paper.REGIMES if r.experiment.name != "real_kernels")


def test_nulls_swap_the_slot_on_the_same_data(tmp_path):
    exp = paper.PAPER.experiments["polynomial_decay"]
    params = {"exponents": [0.5], "ns": [20, 40], "p": 500}
    method = exp(Context(seed=0, out_dir=tmp_path), **params)
    null = exp(Context(seed=0, out_dir=tmp_path), **params, spectrum="exponential")
    assert method["decay_exponential[a=0.5]"] == 0.0 and null["decay_exponential[a=0.5]"] == 1.0
    assert null["log10_cond[a=0.5,n=20]"] > method["log10_cond[a=0.5,n=20]"] + 2  # same slot names, other law
    real = paper.PAPER.experiments["real_kernels"]
    small = {"laplace_ns": [20, 80], "gaussian_ns": [10], "n_test": 100, "mp_max_n": 20}
    ridgeless = real(Context(seed=0, out_dir=tmp_path), **small)
    ridge = real(Context(seed=0, out_dir=tmp_path), **small, solver="ridge")
    laplace_80 = "excess_mse[kernel=laplace,n=80]"
    assert ridge["ridge[kernel=laplace,n=80]"] > 0 and ridge[laplace_80] < ridgeless[laplace_80]
    swapped = real(Context(seed=0, out_dir=tmp_path), **small, exponential_slot_kernel="laplace")
    gaussian_exponential = "decay_exponential[kernel=gaussian]"
    assert swapped[gaussian_exponential] == 0.0 and ridgeless[gaussian_exponential] == 1.0
    assert swapped[laplace_80] == ridgeless[laplace_80]  # the Laplace slot is untouched


def _seed(slope_offset: float, a=1.0, exponential=False):
    d = {f"decay_exponential[a={a!r}]": float(exponential)}
    for n in (25, 50, 100, 200):
        x = n if exponential else math.log(n)
        d[f"log10_cond[a={a!r},n={n}]"] = ((a if exponential else 1 + a) * x + slope_offset) / math.log(10)
        d[f"variance[a={a!r},n={n}]"] = a * n if exponential else 1.0 + 0.01 * slope_offset
        d[f"in_bounds[a={a!r},n={n}]"] = 1.0
    return d


def test_summary_slopes_of_seed_means():
    seeds_poly = [_seed(0.0), _seed(1.0)]
    out = experiments._synthetic_summary(seeds_poly)
    assert out["cond_slope[a=1.0]"] == pytest.approx(2.0)
    assert out["variance_spread[a=1.0]"] == pytest.approx(0.0)
    assert out["in_bounds_fraction"] == 1.0 and out["in_bounds_points"] == 8
    with_bounds = [{**d, "log10_cond_lower[a=1.0,n=25]": 1.0, "log10_cond_upper[a=1.0,n=25]": 3.5} for d in seeds_poly]
    assert experiments._synthetic_summary(with_bounds)["cond_band_decades_max"] == pytest.approx(2.5)
    seeds = [_seed(0.0, 0.1, True), _seed(2.0, 0.1, True)]
    del seeds[1]["log10_cond[a=0.1,n=200]"]  # a point one seed could not resolve is left out of the fit
    out = paper.PAPER.experiments["exponential_decay"].summarize(seeds)
    assert out["points_used[a=0.1]"] == 3
    assert out["cond_slope_per_a[a=0.1]"] == pytest.approx(1.0)
    assert out["variance_slope_per_a[a=0.1]"] == pytest.approx(1.0)


def test_tiny_runs_are_finite_deterministic_and_flag_unsolvable_points(tmp_path):
    exp = paper.PAPER.experiments["exponential_decay"]
    params = {"exponents": [0.3], "ns": [10, 40, 160], "p": 600}
    first = exp(Context(seed=0, out_dir=tmp_path), **params)
    assert first == exp(Context(seed=0, out_dir=tmp_path), **params)
    assert all(isinstance(v, float) and math.isfinite(v) for v in first.values())
    assert first["decay_exponential[a=0.3]"] == 1.0
    assert first["float64_sufficient[a=0.3,n=10]"] == 1.0 and first["precision_digits[a=0.3,n=10]"] > 15
    assert "log10_cond[a=0.3,n=160]" not in first and first["estimate_reliable[a=0.3,n=160]"] == 0.0  # a n = 48
    real = paper.PAPER.experiments["real_kernels"]
    out = real(Context(seed=0, out_dir=tmp_path), laplace_ns=[20, 40], gaussian_ns=[10, 60], n_test=100,
               mp_max_n=20)
    assert out["solved[kernel=laplace,n=40]"] == 1.0 and out["solved[kernel=gaussian,n=60]"] == 0.0
    assert "excess_mse[kernel=gaussian,n=60]" not in out and out["gaussian_decay_a_theory"] == 0.1
    assert (tmp_path / "real_kernels_cond_and_test_error.png").exists()


def test_the_theory_oracle_is_the_papers_rate_and_the_deterministic_variance():
    from icml24.kernels import eigendecay

    lam = eigendecay("polynomial", 1.0, 20000)
    v = [theory.deterministic_variance(lam, n) for n in (25, 100, 400)]
    assert all(0.9 < x < 1.1 for x in v)  # the spec simulation's V ~ 1.00 at a = 1
    lam = eigendecay("exponential", 0.1, 3000)
    assert theory.deterministic_variance(lam, 200) - theory.deterministic_variance(lam, 100) == pytest.approx(10.0,
                                                                                                             rel=0.05)
    with pytest.raises(ValueError, match="n must lie in"):
        theory.deterministic_variance(lam[:50], 60)
    exp = paper.PAPER.experiments["polynomial_decay"]
    m = exp(Context(seed=0, out_dir="."), exponents=[0.5], ns=[25, 100, 400], p=20000, measurement="theory")
    assert m["log10_cond[a=0.5,n=100]"] == pytest.approx(1.5 * 2)  # log10 of 100^(1 + a)
    summary = experiments._synthetic_summary([m])
    assert summary["cond_slope[a=0.5]"] == pytest.approx(1.5) and summary["variance_spread[a=0.5]"] < 0.15
    with pytest.raises(ValueError, match="measurement must be one of"):
        exp(Context(seed=0, out_dir="."), exponents=[0.5], ns=[25], p=200, measurement="exact")


def test_feature_laws_are_whitened_and_the_default_is_unchanged(tmp_path):
    import numpy as np

    for law in theory.FEATURES:
        x = theory.draw_features(np.random.default_rng(0), law, (400, 500))
        assert abs(x.mean()) < 0.02 and abs(x.var() - 1) < 0.02
    assert np.array_equal(theory.draw_features(np.random.default_rng(3), "gaussian", (4, 5)),
                          np.random.default_rng(3).standard_normal((4, 5)))  # the default stream: numbers unchanged
    with pytest.raises(ValueError, match="features must be one of"):
        theory.draw_features(np.random.default_rng(0), "cauchy", (2, 2))
    exp = paper.PAPER.experiments["polynomial_decay"]
    params = {"exponents": [0.5], "ns": [20, 40], "p": 500}
    gaussian = exp(Context(seed=0, out_dir=tmp_path), **params)
    rademacher = exp(Context(seed=0, out_dir=tmp_path), **params, features="rademacher")
    assert gaussian["variance[a=0.5,n=40]"] != rademacher["variance[a=0.5,n=40]"]


def test_the_bayes_and_planted_oracles(tmp_path):
    real = paper.PAPER.experiments["real_kernels"]
    small = {"laplace_ns": [20, 80], "gaussian_ns": [10, 20], "n_test": 100, "mp_max_n": 20}
    bayes = real(Context(seed=0, out_dir=tmp_path), **small, solver="bayes")
    assert bayes["excess_mse[kernel=laplace,n=80]"] == 0.0 and bayes["log10_excess_mse[kernel=gaussian,n=20]"] == -12
    assert experiments._real_summary([bayes])["laplace_mse_spread"] == 0.0
    cond = paper.PAPER.experiments["laplace_condition"]
    planted = cond(Context(seed=0, out_dir=tmp_path), dims=[1, 2], ns=[25, 100, 400], design="planted")
    for d in (1, 2):
        assert planted[f"separation_slope[d={d}]"] == pytest.approx(-2.0 / d, abs=0.05)  # q = n^(-2/d) exactly
        assert planted[f"cond_slope[d={d}]"] > 1 + 1.5 / d
    assert isinstance(claims.NO_PERFECT_FAILURE.reason, str)


def test_every_family_keeps_the_default_and_names_real_parameters():
    for exp in paper.PAPER.experiments.values():
        for family in exp.families():
            assert {} in family.at("quick").values() and 0 < family.share <= 1
            for member in family.at("quick"):
                exp.member_config(family, member, "quick")
    assert all(c.resolved_family is not None and c.resolved_oracle is not None for c in paper.CLAIMS)
