"""A small digits model under test shared by the failure-landscape tests (trained once per session, ~1 s)."""

import numpy as np
import pytest
import torch

from icml24.data import digits
from icml24.rl.failures import digit_concepts, train_classifier


@pytest.fixture(scope="session")
def nut():
    """``(model, x_train, y_train, x_test, y_test, grid)`` on a fixed split of scikit-learn digits."""
    x, y, shape = digits()
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    train, test = order[:800], order[800:1000]
    model = train_classifier(x[train], y[train], epochs=15, random_state=0)
    return model, x[train], y[train], x[test], y[test], digit_concepts()


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Small models on a shared 2-core machine: one intra-op thread, restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
