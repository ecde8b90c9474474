"""A user's own model as the model under test: scikit-learn classifiers through predict_proba, torch modules as
they are, and a clear error naming the interface for anything else."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from icml24.rl.failures import (
    INTERFACE,
    FailureEnv,
    ProbaClassifier,
    RandomSearch,
    as_classifier,
    clean_accuracy,
    exhaustive_failure_rates,
)


@pytest.fixture(scope="module")
def logreg(nut):
    _, x_train, y_train, _, _, _ = nut
    return LogisticRegression(max_iter=300).fit(x_train.reshape(len(x_train), -1), y_train)


def test_predict_proba_becomes_log_probabilities_whose_softmax_is_the_probability(nut, logreg):
    _, _, _, x, y, _ = nut
    scores = as_classifier(logreg)(torch.from_numpy(x))
    proba = logreg.predict_proba(x.reshape(len(x), -1))
    np.testing.assert_allclose(scores.softmax(-1).numpy(), proba, atol=1e-5)
    assert clean_accuracy(logreg, x, y) == pytest.approx(logreg.score(x.reshape(len(x), -1), y))


def test_a_sklearn_model_is_explored_and_its_ground_truth_matches_a_per_image_computation(nut, logreg):
    _, _, _, x, y, grid = nut
    truth = exhaustive_failure_rates(logreg, x[:30], y[:30], grid)
    action = int(np.argmax(truth.rates))
    moved = grid.perturb_actions(torch.from_numpy(x[:30]), np.full(30, action)).reshape(30, -1).numpy()
    assert truth.rates[action] == pytest.approx(float((logreg.predict(moved) != y[:30]).mean()))
    env = FailureEnv(logreg, x[:30], y[:30], grid, precompute=True)
    result = RandomSearch().explore(env, 200, random_state=0)
    assert result.num_queries == 200 and 0 < result.failures_per_query < 1


def test_a_model_fitted_on_some_classes_puts_its_columns_at_their_class_index(nut):
    _, x_train, y_train, _, _, _ = nut
    keep = np.isin(y_train, [2, 5, 7])
    clf = LogisticRegression(max_iter=300).fit(x_train[keep].reshape(keep.sum(), -1), y_train[keep])
    scores = ProbaClassifier(clf)(torch.from_numpy(x_train[keep][:20]))
    assert scores.shape == (20, 8) and set(scores.argmax(-1).tolist()) <= {2, 5, 7}
    assert torch.isfinite(scores).all()


def test_torch_modules_pass_through_and_unsupported_objects_name_the_interface(nut, logreg):
    model = nut[0]
    assert as_classifier(model) is model
    with pytest.raises(TypeError, match="predict_proba") as err:
        as_classifier(object())
    assert INTERFACE in str(err.value)
    with pytest.raises(TypeError, match="probability=True"):
        as_classifier(SVC())  # predict, but no predict_proba until probability=True
    with pytest.raises(TypeError, match="nn.Module"):
        FailureEnv(lambda images: images, nut[3], nut[4], nut[5])
