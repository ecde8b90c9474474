import numpy as np
import pytest
import torch

from icml24.rl.failures import (
    ExplorationResult,
    FailureLandscape,
    LastLayerFinetuner,
    OracleFeedback,
    PromptFeedback,
    clean_accuracy,
    exhaustive_failure_rates,
)


def _landscape(grid, top):
    actions = np.repeat(np.arange(125), 4)
    failures = np.isin(actions, top) & (np.arange(len(actions)) % 4 < 3)
    return FailureLandscape(grid).fit(ExplorationResult(actions, failures, np.where(failures, 9.0, -1.0)))


def test_oracle_feedback_is_deterministic_and_picks_the_truest_shown_mode(nut):
    grid = nut[-1]
    land = _landscape(grid, [5, 17, 90])
    truth = np.linspace(0, 0.5, 125)  # action 90 has the highest true rate of the three
    picks = [OracleFeedback(truth, candidates=3)(land) for _ in range(3)]
    assert picks == [[90], [90], [90]]
    assert OracleFeedback(truth, candidates=3, modes=2)(land) == [90, 17]
    tied = np.zeros(125)
    assert OracleFeedback(tied, candidates=3)(land) == [5]  # ties: lower index
    with pytest.raises(ValueError, match="modes <= candidates"):
        OracleFeedback(truth, candidates=2, modes=3)


def test_prompt_feedback_reads_ranks_and_rejects_nonsense(nut):
    grid = nut[-1]
    land = _landscape(grid, [5, 17, 90])
    shown = []
    assert PromptFeedback(3, input_fn=lambda _: "2", print_fn=shown.append)(land) == [int(land.top_actions(3)[1])]
    assert len(shown) == 3 and "failures" in shown[0]
    assert PromptFeedback(3, input_fn=lambda _: "", print_fn=lambda s: None)(land) == [int(land.top_actions(1)[0])]
    with pytest.raises(ValueError, match="ranks"):
        PromptFeedback(3, input_fn=lambda _: "7", print_fn=lambda s: None)(land)


def test_last_layer_finetuning_fades_the_chosen_mode_and_keeps_features(nut):
    model, x_train, y_train, x_test, y_test, grid = nut
    before = exhaustive_failure_rates(model, x_test, y_test, grid)
    mode = int(np.argmax(before.rates))
    tuner = LastLayerFinetuner(epochs=12, random_state=torch.Generator().manual_seed(0)).fit(
        model, x_train, y_train, grid, [mode])
    after = exhaustive_failure_rates(tuner.model_, x_test, y_test, grid)
    assert after.rates[mode] < 0.6 * before.rates[mode]
    assert clean_accuracy(tuner.model_, x_test, y_test) > clean_accuracy(model, x_test, y_test) - 0.05
    for p, q in zip(model.features.parameters(), tuner.model_.features.parameters()):
        assert torch.equal(p, q)  # only the head changed
    assert not torch.equal(model.head.weight, tuner.model_.head.weight)


def test_finetuner_refuses_models_without_a_head_and_bad_actions(nut):
    model, x_train, y_train, _, _, grid = nut
    with pytest.raises(TypeError, match="head"):
        LastLayerFinetuner().fit(torch.nn.Linear(64, 10), x_train, y_train, grid, [0])
    with pytest.raises(ValueError, match="actions must be"):
        LastLayerFinetuner().fit(model, x_train, y_train, grid, [200])
    with pytest.raises(ValueError, match="probability"):
        LastLayerFinetuner(probability=2.0).fit(model, x_train, y_train, grid, [0])


@pytest.mark.parametrize("kwargs, match", [({"lr": float("nan")}, "lr"), ({"lr": 0.0}, "lr"), ({"lr": -1.0}, "lr"),
                                           ({"momentum": float("nan")}, "momentum"), ({"momentum": 1.0}, "momentum")])
def test_finetuner_refuses_a_nan_or_non_positive_learning_rate(kwargs, match, nut):
    model, x_train, y_train, _, _, grid = nut
    with pytest.raises(ValueError, match=match):
        LastLayerFinetuner(**kwargs).fit(model, x_train, y_train, grid, [0])


def test_finetuner_refuses_float_labels_and_labels_beyond_the_head(nut):
    from sklearn.linear_model import LogisticRegression

    model, x_train, y_train, _, _, grid = nut
    with pytest.raises(ValueError, match="fractional"):
        LastLayerFinetuner(epochs=1).fit(model, x_train, y_train + 0.5, grid, [0])
    with pytest.raises(ValueError, match="head has 10 outputs"):
        LastLayerFinetuner(epochs=1).fit(model, x_train, y_train + 1, grid, [0])
    clf = LogisticRegression(max_iter=300).fit(x_train.reshape(len(x_train), -1), y_train)
    with pytest.raises(TypeError, match="torch nn.Module with a `features` module"):
        LastLayerFinetuner(epochs=1).fit(clf, x_train, y_train, grid, [0])
