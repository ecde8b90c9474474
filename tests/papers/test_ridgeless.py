import math

import pytest

from icml24.core import Context
from icml24.papers import ridgeless as paper


def _claim(start: str):
    found = [c for c in paper.CLAIMS if c.text.startswith(start)]
    assert len(found) == 1, start
    return found[0]


POLY_GOOD = {"poly_a0p5_decay_a": 0.5, "poly_a1_decay_a": 1.0, "poly_a0p5_cond_slope": 1.55, "poly_a1_cond_slope": 2.05,
             "poly_a0p5_variance_spread": 0.08, "poly_a1_variance_spread": 0.05, "poly_a0p5_points_used": 5.0,
             "poly_a1_points_used": 5.0, "in_bounds_fraction": 1.0, "in_bounds_points": 50.0}
EXP_GOOD = {"exp_a0p1_decay_a": 0.1, "exp_a0p2_decay_a": 0.2, "exp_a0p1_points_used": 6.0, "exp_a0p2_points_used": 4.0,
            "exp_a0p1_cond_slope_per_a": 1.07, "exp_a0p2_cond_slope_per_a": 1.05,
            "exp_a0p1_variance_slope_per_a": 1.05, "exp_a0p2_variance_slope_per_a": 1.04,
            "in_bounds_fraction": 1.0, "in_bounds_points": 50.0}
REAL_GOOD = {"laplace_mse_spread": 0.2, "gaussian_solved_points": 5.0, "gaussian_log10_mse_rise": 7.0}
COND_GOOD = {"cond_slope[d=1]": 2.9, "cond_slope[d=1]_std": 0.3, "cond_slope[d=2]": 1.9, "cond_slope[d=2]_std": 0.2,
             "num_seeds": 10.0}

CASES = [  # claim prefix, good metrics, a plausible bad variant (what the claim must catch)
    ("Polynomial decay: the slope", POLY_GOOD, {"poly_a1_cond_slope": 1.0}),  # cond ~ n, not n^{1+a}
    ("Polynomial decay: the slope", POLY_GOOD, {"poly_a0p5_cond_slope": 1.8}),
    ("Polynomial decay: the variance", POLY_GOOD, {"poly_a1_variance_spread": 0.6}),  # V grows with n
    ("Polynomial decay: the slope", POLY_GOOD, {"poly_a0p5_points_used": 2.0}),  # too few resolved n for a slope
    ("Polynomial decay: the variance", POLY_GOOD, {"poly_a1_points_used": 2.0}),
    ("Exponential decay", EXP_GOOD, {"exp_a0p2_variance_slope_per_a": 0.05}),  # V flat: tempered, not catastrophic
    ("Exponential decay", EXP_GOOD, {"exp_a0p1_cond_slope_per_a": 0.5}),
    ("Exponential decay", EXP_GOOD, {"exp_a0p2_points_used": 2.0}),  # too few resolved points to call a slope
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
    assert claim.evaluate({"cond_slope[d=1]": 2.9, "num_seeds": 3.0}).status == "error"  # d = 2 not measured
    assert set(claim.evaluate(dict(COND_GOOD)).measured) == set(COND_GOOD)


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
    assert method["poly_a0p5_decay_exponential"] == 0.0 and null["poly_a0p5_decay_exponential"] == 1.0
    assert null["poly_a0p5_n20_log10_cond"] > method["poly_a0p5_n20_log10_cond"] + 2  # same slot names, other law
    real = paper.PAPER.experiments["real_kernels"]
    small = {"laplace_ns": [20, 80], "gaussian_ns": [10], "n_test": 100, "mp_max_n": 20}
    ridgeless = real(Context(seed=0, out_dir=tmp_path), **small)
    ridge = real(Context(seed=0, out_dir=tmp_path), **small, solver="ridge")
    assert ridge["laplace_n80_ridge"] > 0 and ridge["laplace_n80_excess_mse"] < ridgeless["laplace_n80_excess_mse"]
    swapped = real(Context(seed=0, out_dir=tmp_path), **small, exponential_slot_kernel="laplace")
    assert swapped["gaussian_decay_exponential"] == 0.0 and ridgeless["gaussian_decay_exponential"] == 1.0
    assert swapped["laplace_n80_excess_mse"] == ridgeless["laplace_n80_excess_mse"]  # the Laplace slot is untouched


def _seed(slope_offset: float, tag="poly_a1", a=1.0, exponential=False):
    d = {f"{tag}_decay_a": a, f"{tag}_decay_exponential": float(exponential)}
    for n in (25, 50, 100, 200):
        x = n if exponential else math.log(n)
        d[f"{tag}_n{n}_log10_cond"] = ((a if exponential else 1 + a) * x + slope_offset) / math.log(10)
        d[f"{tag}_n{n}_variance"] = a * n if exponential else 1.0 + 0.01 * slope_offset
        d[f"{tag}_n{n}_in_bounds"] = 1.0
    return d


def test_summary_slopes_of_seed_means():
    seeds_poly = [_seed(0.0), _seed(1.0)]
    out = paper._synthetic_summary(seeds_poly)
    assert out["poly_a1_cond_slope"] == pytest.approx(2.0)
    assert out["poly_a1_variance_spread"] == pytest.approx(0.0)
    assert out["in_bounds_fraction"] == 1.0 and out["in_bounds_points"] == 8
    with_bounds = [{**d, "poly_a1_n25_log10_cond_lower": 1.0, "poly_a1_n25_log10_cond_upper": 3.5} for d in seeds_poly]
    assert paper._synthetic_summary(with_bounds)["cond_band_decades_max"] == pytest.approx(2.5)
    seeds = [_seed(0.0, "exp_a0p1", 0.1, True), _seed(2.0, "exp_a0p1", 0.1, True)]
    del seeds[1]["exp_a0p1_n200_log10_cond"]  # a point one seed could not resolve is left out of the fit
    out = paper._synthetic_summary(seeds)
    assert out["exp_a0p1_points_used"] == 3
    assert out["exp_a0p1_cond_slope_per_a"] == pytest.approx(1.0)
    assert out["exp_a0p1_variance_slope_per_a"] == pytest.approx(1.0)


def test_tiny_runs_are_finite_deterministic_and_flag_unsolvable_points(tmp_path):
    exp = paper.PAPER.experiments["exponential_decay"]
    params = {"exponents": [0.3], "ns": [10, 40, 160], "p": 600}
    first = exp(Context(seed=0, out_dir=tmp_path), **params)
    assert first == exp(Context(seed=0, out_dir=tmp_path), **params)
    assert all(isinstance(v, float) and math.isfinite(v) for v in first.values())
    assert first["exp_a0p3_decay_a"] == 0.3 and first["exp_a0p3_decay_exponential"] == 1.0
    assert first["exp_a0p3_n10_float64_sufficient"] == 1.0 and first["exp_a0p3_n10_precision_digits"] > 15
    assert "exp_a0p3_n160_log10_cond" not in first and first["exp_a0p3_n160_estimate_reliable"] == 0.0  # a n = 48
    real = paper.PAPER.experiments["real_kernels"]
    out = real(Context(seed=0, out_dir=tmp_path), laplace_ns=[20, 40], gaussian_ns=[10, 60], n_test=100,
               mp_max_n=20)
    assert out["laplace_n40_solved"] == 1.0 and out["gaussian_n60_solved"] == 0.0
    assert "gaussian_n60_excess_mse" not in out and out["gaussian_decay_a_theory"] == 0.1
    assert (tmp_path / "real_kernels_cond_and_test_error.png").exists()
