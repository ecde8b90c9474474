"""OPG and MAVE: local-linear gradients recover single indices; MAVE refines its OPG start."""

import numpy as np
import pytest

from icml24.sdr import MAVE, OPG, single_index_data, subspace_distance
from icml24.sdr.mave import _local_linear


def test_local_linear_is_exact_on_a_linear_response():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 2))
    y = 1.5 + Z @ np.array([2.0, -1.0])
    diff = Z[None, :, :] - Z[:, None, :]
    w = rng.random((30, 30))
    intercepts, slopes = _local_linear(w / w.sum(1, keepdims=True), diff, y)
    np.testing.assert_allclose(intercepts, y, rtol=1e-5, atol=1e-5)  # up to the 1e-8 relative ridge
    np.testing.assert_allclose(slopes, np.tile([2.0, -1.0], (30, 1)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("model", ["linear", "quadratic", "sine"])
def test_recover_single_index(model):
    errors = {"opg": [], "mave": []}
    for seed in range(3):
        X, y, beta = single_index_data(model, np.random.default_rng(seed), n=300)
        mave = MAVE().fit(X, y)
        errors["mave"].append(subspace_distance(mave.directions_, beta))
        errors["opg"].append(subspace_distance(OPG().fit(X, y).directions_, beta))
        assert subspace_distance(mave.opg_directions_, OPG().fit(X, y).directions_) < 1e-8
        assert 1 <= mave.n_iter_ <= 30
    assert np.mean(errors["mave"]) < 0.15
    assert np.mean(errors["mave"]) <= np.mean(errors["opg"]) + 0.02


def test_two_directions():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 5))
    y = X[:, 0] + np.sin(X[:, 1]) * 2 + 0.1 * rng.standard_normal(300)
    est = MAVE(n_directions=2).fit(X, y)
    truth = np.eye(5)[:, :2]
    assert est.directions_.shape == (5, 2) and subspace_distance(est.directions_, truth) < 0.3
    with pytest.raises(ValueError, match="n_directions"):
        OPG(n_directions=0).fit(X, y)
