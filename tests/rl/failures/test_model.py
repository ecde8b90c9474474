import math

import numpy as np
import pytest
import torch

from icml24.rl.failures import clean_accuracy, failure_reward, train_classifier


def test_reward_is_ten_abs_log_odds_on_failure_and_minus_one_otherwise():
    p = 0.8
    logits = torch.log(torch.tensor([[p, 1 - p], [p, 1 - p]]))
    reward, failure, prediction = failure_reward(logits, [1, 0])
    assert failure.tolist() == [True, False] and prediction.tolist() == [0, 0]
    assert math.isclose(float(reward[0]), 10 * abs(math.log(p / (1 - p + 1e-7))), rel_tol=1e-5)
    assert float(reward[1]) == -1.0


def test_reward_is_finite_for_a_certain_wrong_prediction_and_grows_with_confidence():
    logits = torch.tensor([[100.0, 0.0], [2.0, 0.0], [0.5, 0.0]])
    reward, failure, _ = failure_reward(logits, [1, 1, 1])
    assert failure.all() and torch.isfinite(reward).all()
    assert reward[0] > reward[1] > reward[2] > 0
    assert math.isclose(float(reward[0]), 10 * math.log(1 / 1e-7), rel_tol=1e-3)  # the 1e-7 guard


def test_trained_classifier_is_accurate_on_held_out_digits(nut):
    model, _, _, x_test, y_test, _ = nut
    assert clean_accuracy(model, x_test, y_test) > 0.9


def test_training_rejects_nan_and_mismatched_labels():
    x = np.zeros((4, 8, 8), dtype=np.float32)
    x[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="images contains NaN"):
        train_classifier(x, np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="one label each"):
        train_classifier(np.zeros((4, 8, 8)), np.zeros(3, dtype=int))


def test_random_state_seeds_the_weights_and_the_batch_order():
    from icml24.rl.failures.model import DigitClassifier

    x = np.random.default_rng(0).random((64, 8, 8)).astype(np.float32)
    y = np.arange(64) % 3
    weights = [train_classifier(x, y, epochs=1, random_state=s).head.weight for s in (3, 3, 4)]
    assert torch.equal(weights[0], weights[1]) and not torch.equal(weights[0], weights[2])
    # an int is torch.Generator().manual_seed(int); a torch Generator is used as is
    same = DigitClassifier(random_state=torch.Generator().manual_seed(3)).head.weight
    assert torch.equal(DigitClassifier(random_state=3).head.weight, same)
