import numpy as np
import pytest

from icml24.kernels import InterpolationError, extended_lu_solve, honest_solve, kernel_matrix, precision_digits


def _gaussian_builder(X, bandwidth):
    return lambda precision: kernel_matrix("gaussian", X, X, bandwidth, precision=precision, dps=60)


def test_well_conditioned_solves_in_float64_with_tiny_residual():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 2)), rng.standard_normal(30)
    solve = honest_solve(lambda p: kernel_matrix("laplace", X, X, 1.0, precision=p), y)
    assert solve.precision == "float64" and solve.float64_sufficient
    assert solve.residual < 1e-6 and solve.attempts == [("float64", solve.residual, solve.condition)]
    assert 1 < solve.condition < 1e6
    K = kernel_matrix("laplace", X, X, 1.0)
    assert np.linalg.norm(K @ solve.alpha - y) / np.linalg.norm(y) < 1e-6


def test_ill_conditioned_kernel_climbs_the_ladder_and_interpolates():
    rng = np.random.default_rng(1)
    X, y = np.sort(rng.standard_normal((20, 1)), axis=0), rng.standard_normal(20)
    solve = honest_solve(_gaussian_builder(X, 1.0), y, mp_dps=60)
    assert solve.precision == "mpmath" and not solve.float64_sufficient
    assert [p for p, _, _ in solve.attempts] == ["float64", "longdouble", "mpmath"]
    assert solve.attempts[0][1] > 1e-6 and solve.residual < 1e-6


def test_refuses_instead_of_regularizing():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((40, 1)), rng.standard_normal(40)
    with pytest.raises(InterpolationError, match=r"mpmath skipped \(n=40.*refusing to return a regularized"):
        honest_solve(_gaussian_builder(X, 1.0), y, mp_max_n=10)
    # the silent alternative: lstsq "succeeds" but does not interpolate
    K = kernel_matrix("gaussian", X, X, 1.0)
    alpha = np.linalg.lstsq(K, y, rcond=None)[0]
    assert np.linalg.norm(K @ alpha - y) / np.linalg.norm(y) > 1e-6


def test_extended_lu_matches_float64_and_beats_it_when_ill_conditioned():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((25, 25))
    b = rng.standard_normal(25)
    assert np.allclose(extended_lu_solve(A, b).astype(float), np.linalg.solve(A, b), rtol=1e-10)
    X = np.linspace(-1, 1, 12)[:, None]
    K = kernel_matrix("gaussian", X, X, 0.5, precision="longdouble")
    y = rng.standard_normal(12)
    x_ld = extended_lu_solve(K, y)
    x_64 = np.linalg.solve(K.astype(float), y)
    res = [np.linalg.norm((K @ np.asarray(x, dtype=np.longdouble) - y).astype(float)) for x in (x_ld, x_64)]
    assert res[0] < res[1]


def test_digits_and_argument_checks():
    assert precision_digits("float64") == pytest.approx(15.65, abs=0.01)
    assert precision_digits("mpmath", dps=40) == 40
    with pytest.raises(ValueError, match="y contains NaN"):
        honest_solve(lambda p: np.eye(2), np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="precisions must be"):
        honest_solve(lambda p: np.eye(2), np.ones(2), precisions=("float16",))


def test_condition_check_rejects_a_rung_whose_residual_passes():
    """Smooth labels on a numerically singular K: the float64 residual is tiny, the condition estimate is not."""
    X = np.linspace(-2, 2, 40)[:, None]
    y = np.cos(X[:, 0])
    with pytest.raises(InterpolationError, match="float64 residual"):
        honest_solve(_gaussian_builder(X, 1.0), y, precisions=("float64",))
    loose = honest_solve(_gaussian_builder(X, 1.0), y, precisions=("float64",), forward_tol=1e300)
    assert loose.residual < 1e-6  # only the condition check stood in the way
    with pytest.raises(ValueError, match="forward_tol must be > 0"):
        honest_solve(_gaussian_builder(X, 1.0), y, forward_tol=0.0)


def test_longdouble_condition_estimate_matches_the_true_one():
    from icml24.kernels.solve import extended_lu_apply, extended_lu_factor, hager_inverse_norm

    rng = np.random.default_rng(4)
    A = rng.standard_normal((20, 20)) + 5 * np.eye(20)
    LU, perm = extended_lu_factor(A)
    b = rng.standard_normal(20)
    assert np.allclose(extended_lu_apply(LU, perm, b, transpose=True).astype(float), np.linalg.solve(A.T, b))
    estimate = hager_inverse_norm(lambda v, t: extended_lu_apply(LU, perm, v, transpose=t), 20)
    exact = np.linalg.norm(np.linalg.inv(A), 1)
    assert exact / 3 <= estimate <= exact * (1 + 1e-12)  # a lower bound, within 3x
