import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.kernels import InterpolationError, KernelRidgeless


def test_interpolates_training_data_with_residual_below_1e6():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 2)), rng.standard_normal(60)
    model = KernelRidgeless("laplace", 1.0).fit(X, y)
    assert model.residual_ < 1e-6 and model.precision_ == "float64" and model.float64_sufficient_
    assert np.max(np.abs(model.predict(X) - y)) < 1e-6


def test_gaussian_kernel_in_extended_precision_still_interpolates():
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((18, 1)), rng.standard_normal(18)
    model = KernelRidgeless("gaussian", 1.0, mp_max_n=30, mp_dps=60).fit(X, y)
    assert model.precision_ in ("longdouble", "mpmath") and not model.float64_sufficient_
    assert model.residual_ < 1e-6
    assert np.max(np.abs(model.predict(X) - y)) < 1e-6  # predictions use the same precision as the solve
    assert model.predict(rng.standard_normal((5, 1))).dtype == float


def test_clear_error_when_no_precision_is_enough():
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((80, 1)), rng.standard_normal(80)
    with pytest.raises(InterpolationError, match="numerically singular"):
        KernelRidgeless("gaussian", 1.0, precisions=("float64",)).fit(X, y)


def test_estimator_contract():
    model = KernelRidgeless("laplace")
    with pytest.raises(NotFittedError):
        model.predict(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="X contains NaN"):
        model.fit(np.array([[np.nan], [1.0]]), np.zeros(2))
    with pytest.raises(ValueError, match="rows"):
        model.fit(np.zeros((3, 1)), np.zeros(2))
    with pytest.raises(ValueError, match="kernel must be"):
        KernelRidgeless("poly")


def test_ridge_cv_leave_one_out_is_exact_and_regularizes():
    from icml24.kernels import KernelRidgeCV, kernel_matrix

    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 2))
    y = np.sin(X.sum(axis=1)) + 0.5 * rng.standard_normal(40)
    model = KernelRidgeCV("laplace", 1.0, ridges=(1e-2, 1e-1, 1.0)).fit(X, y)
    assert model.ridge_ in (1e-2, 1e-1, 1.0)  # the Laplace kernel's diagonal is 1
    K = kernel_matrix("laplace", X, X, 1.0)
    loo = []
    for i in range(40):  # brute-force leave-one-out at the chosen lambda
        keep = np.arange(40) != i
        alpha = np.linalg.solve(K[np.ix_(keep, keep)] + model.ridge_ * np.eye(39), y[keep])
        loo.append((K[i, keep] @ alpha - y[i]) ** 2)
    assert model.loo_mse_ == pytest.approx(np.mean(loo), rel=1e-8)
    assert np.max(np.abs(model.predict(X) - y)) > 0.1  # a ridge does not interpolate noisy labels
    with pytest.raises(NotFittedError):
        KernelRidgeCV().predict(X)
    with pytest.raises(ValueError, match="y contains NaN"):
        KernelRidgeCV().fit(X, np.full(40, np.nan))
