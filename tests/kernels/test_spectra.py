import numpy as np
import pytest

from icml24.kernels import eigendecay, fit_eigendecay, gaussian_features


def test_eigendecay_laws_and_errors():
    poly = eigendecay("polynomial", 1.0, 5)
    assert np.allclose(poly, np.arange(1, 6, dtype=float) ** -2.0)
    expo = eigendecay("exponential", 0.5, 5)
    assert np.allclose(expo, np.exp(-0.5 * np.arange(1, 6)))
    assert eigendecay("exponential", 1.0, 2000)[-1] == 0.0  # underflow is 0, not a negative or NaN
    with pytest.raises(ValueError, match="kind"):
        eigendecay("linear", 1.0, 5)
    with pytest.raises(ValueError, match="a must be"):
        eigendecay("polynomial", -1.0, 5)


def test_fit_recovers_prescribed_decay():
    assert fit_eigendecay(eigendecay("polynomial", 0.7, 300), "polynomial") == pytest.approx(0.7, abs=1e-9)
    assert fit_eigendecay(eigendecay("exponential", 0.3, 50), "exponential") == pytest.approx(0.3, abs=1e-9)
    assert np.isnan(fit_eigendecay(np.array([1.0, 0.0, 0.0]), "exponential"))


def test_features_are_seeded_and_rejects_nan():
    a = gaussian_features(4, 6, np.random.default_rng(1))
    assert a.shape == (4, 6) and np.array_equal(a, gaussian_features(4, 6, np.random.default_rng(1)))
    with pytest.raises(ValueError, match="eigenvalues contains NaN"):
        fit_eigendecay(np.array([1.0, np.nan, 0.1]), "polynomial")
