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
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.fit(np.zeros((3, 1)), np.zeros(2))
    with pytest.raises(ValueError, match="kernel must be"):
        KernelRidgeless("poly").fit(np.zeros((3, 1)), np.zeros(3))  # parameters are validated in fit


def test_noise_free_gaussian_past_float64_raises_instead_of_returning_wrong_coefficients():
    """n = 100 Gaussian-kernel interpolation of noise-free sin(x): the float64 residual passes (~1e-10) while
    cond(K) ~ 1e39, so alpha is wrong; the condition check refuses float64 and longdouble."""
    from icml24.kernels import gaussian_bandwidth_for_decay

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 1))
    y = np.sin(X[:, 0])
    with pytest.raises(InterpolationError) as info:
        KernelRidgeless("gaussian", gaussian_bandwidth_for_decay(0.1)).fit(X, y)
    message = str(info.value)
    assert "float64 residual" in message and "cond" in message and "mpmath skipped" in message
    residual64 = float(message.split("float64 residual ")[1].split(" ")[0])
    assert residual64 < 1e-6  # the residual alone would have accepted float64


def test_noise_free_interpolation_escalates_and_agrees_with_a_higher_precision_solve():
    rng = np.random.default_rng(3)
    X = np.sort(rng.standard_normal((30, 1)), axis=0)
    y = np.sin(X[:, 0])
    model = KernelRidgeless("gaussian", 0.5, mp_max_n=30, mp_dps=60).fit(X, y)
    assert not model.float64_sufficient_ and model.condition_ * 10.0**-60 <= 1e-6
    reference = KernelRidgeless("gaussian", 0.5, mp_max_n=30, mp_dps=90, precisions=("mpmath",)).fit(X, y)
    ours = np.array([float(v) for v in model.alpha_]) if model.precision_ == "mpmath" else model.alpha_.astype(float)
    exact = np.array([float(v) for v in reference.alpha_])
    assert np.max(np.abs(ours - exact)) <= 1e-6 * np.max(np.abs(exact))  # the coefficients, not just the residual
    float64 = np.linalg.solve(np.exp(-np.subtract.outer(X[:, 0], X[:, 0]) ** 2 / 0.5), y)
    assert np.max(np.abs(float64 - exact)) > 0.5 * np.max(np.abs(exact))  # what the residual check let through


def test_is_a_scikit_learn_estimator():
    from sklearn.base import clone
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import cross_val_score

    from icml24.kernels import KernelRidgeCV

    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 5))
    y = np.sin(X.sum(axis=1)) + 0.1 * rng.standard_normal(80)
    rungs = ["float64"]
    model = KernelRidgeless("gaussian", 1.0, precisions=rungs)
    assert model.precisions is rungs  # stored verbatim
    assert clone(model).get_params() == model.get_params()
    assert clone(model.set_params(bandwidth=2.0)).bandwidth == 2.0
    scores = cross_val_score(KernelRidgeless("laplace", 1.0), X, y, cv=3)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    assert np.all(np.isfinite(cross_val_score(KernelRidgeCV("laplace", 1.0), X, y, cv=3)))
    ours = KernelRidgeless("gaussian", 1.0).fit(X, y)
    theirs = KernelRidge(alpha=0.0, kernel="rbf", gamma=0.5).fit(X, y)
    assert ours.float64_sufficient_
    assert np.max(np.abs(ours.predict(X[:10]) - theirs.predict(X[:10]))) < 1e-6


@pytest.mark.parametrize("params,match", [
    ({"kernel": "poly"}, "kernel must be"),
    ({"bandwidth": 0.0}, "bandwidth must be > 0"),
    ({"bandwidth": "1"}, "bandwidth must be a positive number"),
    ({"bandwidth": float("nan")}, "bandwidth contains NaN"),
    ({"tol": -1.0}, "tol must be > 0"),
    ({"forward_tol": 0.0}, "forward_tol must be > 0"),
    ({"precisions": ("float16",)}, "precisions must be"),
    ({"precisions": ()}, "precisions must be"),
    ({"mp_max_n": 0}, "mp_max_n must be a positive integer"),
    ({"mp_dps": 2.5}, "mp_dps must be a positive integer"),
])
def test_bad_parameters_are_named_at_fit(params, match):
    X, y = np.zeros((3, 1)) + np.arange(3)[:, None], np.arange(3.0)
    with pytest.raises(ValueError, match=match):
        KernelRidgeless(**params).fit(X, y)


def test_bad_data_is_named():
    """scikit-learn's messages (``validate_data``): empty, 1-d, sparse, complex X, y=None, a 2-d y, wrong width."""
    from scipy import sparse

    model = KernelRidgeless()
    X, y = np.arange(4.0)[:, None], np.arange(4.0)
    with pytest.raises(ValueError, match="0 sample"):
        model.fit(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        model.fit(X[:, 0], y)
    with pytest.raises(TypeError, match="dense data is required"):
        model.fit(sparse.csr_matrix(X), y)
    with pytest.raises(ValueError, match="Complex data not supported"):
        model.fit(X + 1j, y)
    with pytest.raises(ValueError, match="requires y to be passed"):
        model.fit(X, None)
    with pytest.raises(ValueError, match="1d array"):
        model.fit(np.zeros((3, 1)), np.zeros((3, 2)))
    fitted = KernelRidgeless().fit(X, y)
    with pytest.raises(ValueError, match="expecting 1 features"):
        fitted.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="X contains NaN"):
        fitted.predict(np.array([[np.inf]]))


def test_not_fitted_is_scikit_learns_not_fitted_error():
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    from icml24.kernels import KernelRidgeCV

    for model in (KernelRidgeless(), KernelRidgeCV()):
        with pytest.raises(SklearnNotFittedError):
            model.predict(np.zeros((1, 1)))


def test_ridge_cv_leave_one_out_is_exact_and_regularizes():
    from icml24.kernels import KernelRidgeCV, kernel_matrix

    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 2))
    y = np.sin(X.sum(axis=1)) + 0.5 * rng.standard_normal(40)
    with pytest.raises(ValueError, match="ridges must be > 0"):
        KernelRidgeCV(ridges=(1.0, -1.0)).fit(X, y)
    with pytest.raises(ValueError, match="kernel must be"):
        KernelRidgeCV(kernel="poly").fit(X, y)
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
