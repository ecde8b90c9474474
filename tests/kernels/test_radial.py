import mpmath
import numpy as np
import pytest

from icml24.kernels import gaussian_bandwidth_for_decay, gaussian_mehler_decay, kernel_matrix


def test_kernels_agree_across_precisions():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((4, 2)), rng.standard_normal((3, 2))
    for name in ("laplace", "gaussian"):
        k64 = kernel_matrix(name, X, Y, 0.7)
        kld = kernel_matrix(name, X, Y, 0.7, precision="longdouble")
        kmp = kernel_matrix(name, X, Y, 0.7, precision="mpmath", dps=30)
        assert kld.dtype == np.longdouble and np.allclose(k64, kld.astype(float), rtol=1e-14)
        assert np.allclose(k64, np.array(kmp.tolist(), dtype=float), rtol=1e-14)
    d = np.linalg.norm(X[0] - Y[1])
    assert kernel_matrix("laplace", X, Y, 2.0)[0, 1] == pytest.approx(np.exp(-d / 2.0))
    assert isinstance(kernel_matrix("gaussian", X, Y, 1.0, precision="mpmath")[0, 0], mpmath.mpf)


def test_mehler_decay_inverse_and_value():
    assert gaussian_mehler_decay(1.0) == pytest.approx(-np.log(0.5 / (0.25 + 0.5 + np.sqrt(0.0625 + 0.25))))
    for a in (0.05, 0.1, 1.0):
        assert gaussian_mehler_decay(gaussian_bandwidth_for_decay(a, 2.0), 2.0) == pytest.approx(a)


def test_mehler_rate_matches_empirical_spectrum():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((1500, 1))
    a = 0.3
    spectrum = np.linalg.eigvalsh(kernel_matrix("gaussian", X, X, gaussian_bandwidth_for_decay(a)))[::-1] / 1500
    ratios = spectrum[3:15] / spectrum[2:14]
    assert np.median(ratios) == pytest.approx(np.exp(-a), rel=0.05)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="kernel must be"):
        kernel_matrix("cosine", np.zeros((2, 1)), np.zeros((2, 1)), 1.0)
    with pytest.raises(ValueError, match="X contains NaN"):
        kernel_matrix("laplace", np.array([[np.nan]]), np.zeros((2, 1)), 1.0)
    with pytest.raises(ValueError, match="same number of columns"):
        kernel_matrix("laplace", np.zeros((2, 1)), np.zeros((2, 2)), 1.0)


def test_fused_squared_distances_equal_the_numpy_formula_bit_for_bit():
    from icml24.kernels._pairwise import squared_distances
    from icml24.kernels.radial import squared_distances_numpy

    rng = np.random.default_rng(7)
    for d in (1, 3, 17):
        X, Y = 3 * rng.standard_normal((23, d)), rng.standard_normal((11, d)) + 1e-9
        assert np.array_equal(squared_distances(X, Y), squared_distances_numpy(X, Y))
    X = rng.standard_normal((5, 2))
    assert np.all(np.diag(squared_distances(X, X)) == 0.0)  # exact differences: no cancellation on the diagonal
