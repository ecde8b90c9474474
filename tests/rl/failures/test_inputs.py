"""Labels and model outputs at the boundary: no silent truncation, no model scored on classes it cannot predict."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from icml24.rl.failures import (
    FailureEnv,
    check_labels,
    clean_accuracy,
    exhaustive_failure_rates,
    failure_reward,
    train_classifier,
)


def test_whole_number_labels_pass_in_any_numeric_dtype():
    assert check_labels(np.array([0.0, 3.0, 9.0])).tolist() == [0, 3, 9]
    assert check_labels([1, 2]).dtype == np.int64


@pytest.mark.parametrize("labels, match", [
    (np.array([0.0, 1.5]), "fractional"),          # was truncated to 1
    (np.array([0, -1]), ">= 0"),
    (np.array(["a", "b"]), "LabelEncoder"),
    (np.array([True, False]), "integer class indices"),
    (np.array([[0, 1]]), "1-D"),
    (np.array([0.0, np.nan]), "NaN"),
])
def test_bad_labels_are_refused(labels, match):
    with pytest.raises(ValueError, match=match):
        check_labels(labels)


def test_float_labels_are_refused_everywhere_instead_of_truncated(nut):
    model, x_train, y_train, x, y, grid = nut
    half = y.astype(float) + 0.5
    for call in (lambda: FailureEnv(model, x, half, grid), lambda: exhaustive_failure_rates(model, x, half, grid),
                 lambda: clean_accuracy(model, x, half), lambda: train_classifier(x_train, y_train + 0.5, epochs=1),
                 lambda: failure_reward(torch.zeros(len(y), 10), half)):
        with pytest.raises(ValueError, match="fractional"):
            call()


def test_a_three_class_model_against_ten_class_labels_is_refused(nut):
    _, x_train, y_train, x, y, grid = nut
    keep = y_train < 3
    small = LogisticRegression(max_iter=300).fit(x_train[keep].reshape(keep.sum(), -1), y_train[keep])
    for call in (lambda: FailureEnv(small, x, y, grid), lambda: exhaustive_failure_rates(small, x, y, grid),
                 lambda: clean_accuracy(small, x, y)):
        with pytest.raises(ValueError, match="outputs 3 classes"):
            call()
    torch_small = train_classifier(x_train[keep], y_train[keep], epochs=1)
    with pytest.raises(ValueError, match="outputs 3 classes"):
        FailureEnv(torch_small, x, y, grid)


def test_a_model_giving_nan_scores_is_refused(nut):
    _, _, _, x, y, grid = nut

    class Broken(torch.nn.Module):
        def forward(self, images):
            return torch.full((len(images), 10), float("nan"))

    with pytest.raises(ValueError, match="non-finite"):
        FailureEnv(Broken(), x, y, grid)
