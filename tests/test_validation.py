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
