"""The shared transformer face: scikit-learn's estimator checks, input checks, whitening, normalization."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from icml24._validation import NotFittedError
from icml24.sdr import DCOVSDR, MAVE, OPG, SAVE, SIR, DirectionalRegression, HellingerSDR
from icml24.sdr._base import normalize_directions, slice_moments, whiten

ESTIMATORS = [SIR(), SAVE(), DirectionalRegression(), OPG(), MAVE(max_iter=3), DCOVSDR(n_starts=5, random_state=0),
              HellingerSDR(sa_maxiter=50, nm_maxfev=50, random_state=0)]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_not_fitted_and_nan_messages(estimator):
    X = np.random.default_rng(0).standard_normal((40, 3))
    with pytest.raises(NotFittedError):
        estimator.transform(X)
    with pytest.raises(NotFittedError):
        _ = estimator.directions_
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        estimator.fit(bad, X[:, 0])
    with pytest.raises(ValueError, match="y contains NaN"):
        estimator.fit(X, np.r_[X[1:, 0], np.inf])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_feature_names_out_and_pandas_output(estimator):
    """Fit on a DataFrame: ``get_feature_names_out`` names the d reduced columns after the class, and with
    ``set_output(transform="pandas")`` transform returns a DataFrame with those columns, the input's index and
    the array output's values."""
    from sklearn.base import clone

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.standard_normal((60, 3)), columns=["age", "dose", "weight"], index=np.arange(100, 160))
    y = X["age"] + 0.5 * X["dose"] + 0.1 * rng.standard_normal(60)
    plain = clone(estimator).fit(X, y)
    prefix = type(estimator).__name__.lower()
    names = plain.get_feature_names_out()
    assert list(names) == [f"{prefix}{k}" for k in range(plain.directions_.shape[1])]
    assert list(plain.feature_names_in_) == ["age", "dose", "weight"]
    frame = clone(estimator).set_output(transform="pandas").fit(X, y).transform(X)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(names) and frame.index.equals(X.index)
    np.testing.assert_array_equal(frame.to_numpy(), plain.transform(X))
    assert isinstance(plain.transform(X), np.ndarray)  # the default output is unchanged


def test_whiten_gives_identity_covariance_and_handles_collinearity():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4)) @ rng.standard_normal((4, 4))
    Z, root = whiten(X)
    np.testing.assert_allclose(np.cov(Z, rowvar=False), np.eye(4), atol=1e-10)
    np.testing.assert_allclose(Z, (X - X.mean(0)) @ root)
    collinear = np.column_stack([X, X[:, 0] + X[:, 1]])
    assert np.all(np.isfinite(whiten(collinear)[0]))


def test_normalize_directions_sign_and_length():
    out = normalize_directions(np.array([[0.0, -3.0], [-2.0, 4.0]]))
    np.testing.assert_allclose(out, [[0.0, -0.6], [1.0, 0.8]])
    np.testing.assert_allclose(normalize_directions(np.array([3.0, -4.0])), [[-0.6], [0.8]])


def test_slice_moments():
    Z = np.array([[0.0, 1], [2, 3], [4, 5], [10, 10]])
    weights, means, covs = slice_moments(Z, np.array([0, 0, 0, 1]))
    np.testing.assert_allclose(weights, [0.75, 0.25])
    np.testing.assert_allclose(means, [[2, 3], [10, 10]])
    np.testing.assert_allclose(covs[0], np.cov(Z[:3], rowvar=False))
    np.testing.assert_allclose(covs[1], 0.0)


def loop_slice_moments(Z, labels):
    """The textbook definition, one slice and one observation at a time."""
    n, p = Z.shape
    h = labels.max() + 1
    weights, means, covs = np.zeros(h), np.zeros((h, p)), np.zeros((h, p, p))
    for k in range(h):
        rows = [z for z, label in zip(Z, labels) if label == k]
        if not rows:
            continue
        weights[k] = len(rows) / n
        means[k] = sum(rows) / len(rows)
        covs[k] = sum(np.outer(z - means[k], z - means[k]) for z in rows) / max(len(rows) - 1, 1)
    return weights, means, covs


@pytest.mark.parametrize("seed", range(5))
def test_slice_moments_match_the_definition_on_uneven_slices(seed):
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 7, 30, 61][seed:] + [1, 5, 40][:seed]  # uneven, always with a one-point slice
    labels = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))  # slices interleaved among the rows
    Z = rng.standard_normal((labels.size, 4)) * [1.0, 5.0, 0.1, 2.0] + rng.standard_normal(4)
    for got, want in zip(slice_moments(Z, labels), loop_slice_moments(Z, labels), strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    skipped = np.where(labels >= 2, labels + 1, labels)  # label 2 has no row: weight 0, zero moments, no NaN
    weights, means, covs = slice_moments(Z, skipped)
    assert weights[2] == 0 and not means[2].any() and not covs[2].any()
    for got, want in zip(slice_moments(Z, skipped), loop_slice_moments(Z, skipped), strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
