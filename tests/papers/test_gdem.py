"""The gdem reproduction: one seed per run, the spread of means, no cache written, claims that can fail.

The shared smoke test (tests/papers/test_every_experiment.py) runs every smoke setting at seed 0 (accuracy on
CiteSeer with a few epochs); here the tiny CSBM stand-in runs through the runner.
"""

import math

import pytest

from icml24.core import Context
from icml24.core.params import parse_value
from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import gdem as paper


def finite_floats(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


def as_citeseer(metrics):
    return {k.replace("csbm_", "citeseer_"): v for k, v in metrics.items()}


def test_accuracy_on_the_stand_in_is_deterministic_and_writes_no_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    kwargs = dict(datasets=["csbm"], rates=[0.25, 0.5], eval_epochs=5, distill_epochs=5)
    first = paper.accuracy(Context(seed=0), **kwargs)
    assert finite_floats(first)
    assert {"csbm_whole", "csbm_gdem_r025", "csbm_random_r050", "csbm_herding_r050"} <= set(first)
    assert first["csbm_nodes_r025"] == 15.0
    again = paper.accuracy(Context(seed=0), **{**kwargs, "rates": [0.25]})
    assert {k: v for k, v in again.items() if "seconds" not in k} == {
        k: v for k, v in first.items() if "seconds" not in k and "r050" not in k}
    assert not any(tmp_path.rglob("*"))  # GDEM's eigenpairs stay in memory unless a cache_dir is given
    for claim in paper.CLAIMS[:2]:
        assert claim.evaluate(as_citeseer(first)).status in {"holds", "fails"}


@pytest.mark.parametrize("name", ["cross_architecture", "efficiency"])
def test_two_seeds_through_the_runner(name, tmp_path):
    exp = paper.PAPER.experiments[name]
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=tmp_path)]
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    summary = aggregate(records, exp)
    assert finite_floats(summary)
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}
    if name == "cross_architecture":
        assert records[0].metrics["gcn_acc"] != records[1].metrics["gcn_acc"]
        assert {"gcn_acc", "sgc_acc", "appnp_acc", "chebnet_acc", "mlp_acc", "gnn_spread"} <= set(summary)


def test_cross_architecture_summary_is_the_spread_of_means():
    per_seed = [{"gcn_acc": 70.0, "sgc_acc": 74.0, "appnp_acc": 72.0, "chebnet_acc": 72.0},
                {"gcn_acc": 74.0, "sgc_acc": 70.0, "appnp_acc": 72.0, "chebnet_acc": 72.0}]
    assert paper._spread_of_means(per_seed) == {"gnn_spread": 0.0, "gnn_mean": 72.0}  # each seed's spread is 4


def test_list_parameters_are_typed():
    assert parse_value(paper.accuracy, "rates", "0.25,0.5") == [0.25, 0.5]
    assert parse_value(paper.accuracy, "datasets", "citeseer,cora") == ["citeseer", "cora"]
    with pytest.raises(ValueError, match="reduction rate"):
        paper._gdem(0.3, 0)


@pytest.mark.parametrize("claim_index,bad", [
    (0, {"citeseer_gdem_r025": 69.3, "citeseer_gdem_r050": 72.4, "citeseer_whole": 72.2}),
    (1, {"citeseer_gdem_r025": 72.8, "citeseer_random_r025": 59.5, "citeseer_gdem_r050": 68.0,
         "citeseer_random_r050": 64.1}),
    (2, {"gnn_spread": 4.5}),
    (3, {"max_distill_seconds": 31.0}),
])
def test_every_claim_can_fail(claim_index, bad):
    assert paper.CLAIMS[claim_index].evaluate(bad).status == "fails"


def test_paper_record_and_settings():
    assert set(paper.PAPER.experiments) == {"accuracy", "cross_architecture", "efficiency"}
    assert len(paper.CLAIMS) == 4
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
    assert paper.accuracy.seeds["quick"] == 2 and paper.accuracy.seeds["full"] == 10
