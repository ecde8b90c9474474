"""rp against the official code (chr26195/ResidualPropagation): RP and Generalized RP steps on a fixed graph."""

from __future__ import annotations

import numpy as np
import pytest
from parity_fixture import assert_close, case, load_fixture
from rp_parity_inputs import CASES, small_graph

from icml24.graph import GeneralizedRP, ResidualPropagation

FIXTURE = load_fixture("rp")


def _model(algorithm, k, alpha, gamma, lr, steps, solver):
    if algorithm == "grp":
        return GeneralizedRP(steps=steps, lr=lr, k=k, alpha=alpha, gamma=gamma, normalize=True, solver=solver)
    return ResidualPropagation(steps=steps, lr=lr, k=k, alpha=alpha, solver=solver)


@pytest.mark.parametrize("solver", ["iterative", "spectral"])
@pytest.mark.parametrize("name, algorithm, k, alpha, gamma, lr, steps", CASES)
def test_steps_match_the_official_loop(name, algorithm, k, alpha, gamma, lr, steps, solver):
    recorded = case(FIXTURE, name)
    data = small_graph()
    no_val = data.clone()
    del no_val.val_mask  # without validation the last step is kept: the official loop's state after `steps` steps
    model = _model(algorithm, k, alpha, gamma, lr, steps, solver).fit(no_val)
    assert_close(model.decision_function().numpy(), recorded["values"]["scores"], recorded["tolerance"],
                 f"{name} ({solver}) scores after {steps} steps")
    with_val = _model(algorithm, k, alpha, gamma, lr, steps, solver).fit(data)
    official = np.asarray(recorded["values"]["val_accuracy"])
    # float32 official accuracies (k / 10): a real difference is at least 0.1
    assert_close(with_val.val_accuracy_, official, 1e-6, f"{name} ({solver}) validation accuracy per step")


def test_the_cases_differ():
    """The recorded scores differ between cases, so each parameter reaches the comparison."""
    scores = [np.asarray(case(FIXTURE, c[0])["values"]["scores"]) for c in CASES]
    assert all(np.abs(a - b).max() > 1e-3 for i, a in enumerate(scores) for b in scores[i + 1:])
