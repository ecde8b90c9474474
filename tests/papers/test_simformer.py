import math

import pytest
import torch

from icml24.core import Context
from icml24.papers import simformer as paper

TINY = dict(observations=1, num_samples=40, num_layers=1, train_steps=3, batch_size=32, sampling_steps=3)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models: one torch thread avoids spin-waiting on a busy machine (restored afterwards)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def metrics(one_thread, tmp_path_factory):
    out = tmp_path_factory.mktemp("simformer")
    return {
        "posterior_benchmark": paper.posterior_benchmark(
            Context(seed=0, out_dir=out), tasks="gaussian_linear,two_moons", budgets="10000", npe_epochs=1, **TINY),
        "all_conditionals": paper.all_conditionals(Context(seed=0, out_dir=out), budget=300, **TINY),
        "graph_vs_dense": paper.graph_vs_dense(Context(seed=0, out_dir=out), budget=300, **TINY),
    }


def test_metrics_are_finite_floats(metrics):
    for values in metrics.values():
        assert values and all(isinstance(v, float) and math.isfinite(v) for v in values.values())
    assert 0.0 <= metrics["graph_vs_dense"]["dense_c2st"] <= 1.0


def test_deterministic():
    first = paper.graph_vs_dense(Context(seed=3), budget=200, kinds="directed", **TINY)
    second = paper.graph_vs_dense(Context(seed=3), budget=200, kinds="directed", **TINY)
    assert first.keys() == second.keys()
    assert all(first[k] == second[k] for k in first if not k.endswith("seconds"))


def test_claims_evaluate(metrics):
    assert len(paper.CLAIMS) == 4
    for claim in paper.CLAIMS:
        verdict = claim.evaluate(metrics[claim.experiment.name])
        assert verdict.status in {"holds", "fails"}, verdict.message
