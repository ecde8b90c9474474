import math

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError, check_finite, check_fitted, check_positive


class _Estimator:
    directions_ = None


def test_not_fitted_is_value_and_attribute_error():
    with pytest.raises(NotFittedError, match="call fit"):
        check_fitted(_Estimator(), "directions_")
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    assert issubclass(NotFittedError, SklearnNotFittedError)  # ``except`` scikit-learn's catches ours


@pytest.mark.parametrize("bad", [math.nan, np.array([1.0, np.inf]), torch.tensor([float("nan")]), [[1.0, math.nan]]])
def test_check_finite_names_the_argument(bad):
    with pytest.raises(ValueError, match="rewards contains NaN"):
        check_finite("rewards", bad)


def test_check_finite_passes_clean_input_through():
    x = np.arange(3.0)
    assert check_finite("x", x) is x
    assert check_finite("labels", torch.arange(3)) is not None
    with pytest.raises(ValueError, match="gamma must be > 0"):
        check_positive("gamma", 0.0)
    assert check_positive("noise_std", 0.0, allow_zero=True) == 0.0


def test_certificate_and_distillation_inputs_that_gave_silent_numbers_are_refused():
    """Issue #45's list: broadcast lengths, NaN radii, alpha outside (0, 1), eigen_k = 0, NaN features, gamma < 0."""
    import numpy as np
    import torch
    from torch_geometric.data import Data

    from icml24.graph import GDEM, GeneralizedRP
    from icml24.graph.certify import clopper_pearson, samplewise_radius

    with pytest.raises(ValueError, match="same shape"):
        samplewise_radius(np.array([0.9, 0.8, 0.7]), np.array([0.1, 0.2]), 6, 0.9, 0.8)
    with pytest.raises(ValueError, match="no NaN"):
        samplewise_radius(np.array([np.nan]), np.array([0.1]), 6, 0.9, 0.8)
    for alpha in (2.0, -1.0, 0.0):
        with pytest.raises(ValueError, match="alpha"):
            clopper_pearson(np.array([90]), np.array([5]), 100, alpha)
    data = Data(x=torch.randn(6, 3), y=torch.tensor([0, 1, 0, 1, 0, 1]),
                edge_index=torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]),
                train_mask=torch.ones(6, dtype=torch.bool))
    with pytest.raises(ValueError, match="eigen_k"):
        GDEM(eigen_k=0).fit(data)
    bad = data.clone()
    bad.x[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        GDEM().fit(bad)
    with pytest.raises(ValueError, match="gamma"):
        GeneralizedRP(gamma=-1.0, steps=2).fit(data)


@pytest.mark.parametrize("size", [{"num_layers": -1}, {"num_heads": 0}, {"head_dim": 2.5}, {"num_layers": True}])
def test_simformer_refuses_a_degenerate_network(size):
    """Issue #45: Simformer(num_layers=-1) and num_heads=0 trained a degenerate network silently."""
    from icml24.sbi import Simformer

    model = Simformer(num_variables=3, **size).append_simulations(torch.zeros(4, 1), torch.zeros(4, 2))
    with pytest.raises(ValueError, match="positive integer"):  # stored as given, checked by train (issue #58)
        model.train(max_steps=0)


def test_check_positive_int():
    from icml24._validation import check_positive_int

    assert check_positive_int("k", 3) == 3
    for bad in (0, -2, 1.0, "2", None):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            check_positive_int("k", bad)


def test_rp_bad_inputs_are_clear():
    """Issue #48: odd k was silent with the iterative solver; NaN features and gamma=nan ended in a LinAlgError."""
    import torch

    from icml24.data import csbm
    from icml24.graph import GeneralizedRP, ResidualPropagation

    data = csbm(num_nodes=120, num_features=8, num_classes=3, homophily=0.8, random_state=0)
    for solver in ("iterative", "spectral"):
        with pytest.warns(RuntimeWarning, match="negative eigenvalue"):
            ResidualPropagation(steps=5, k=1, solver=solver).fit(data)
    bad = data.clone()
    bad.x[3, 2] = float("nan")
    with pytest.raises(ValueError, match="data.x contains NaN"):
        GeneralizedRP(steps=3, lr=1.0).fit(bad)
    with pytest.raises(ValueError, match="gamma"):
        GeneralizedRP(steps=3, gamma=float("nan")).fit(data)
    assert torch.isfinite(GeneralizedRP(steps=3, lr=1.0, k=2).fit(data).decision_function()).all()
