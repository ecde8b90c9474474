import math

from icml24.core import Context
from icml24.papers import gdem as paper


def finite_floats(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


def as_citeseer(metrics):
    return {k.replace("csbm_", "citeseer_"): v for k, v in metrics.items()}


def test_accuracy_smoke_deterministic_and_claims(tmp_path):
    kwargs = dict(datasets="csbm", rates="0.25,0.5", runs=1, eval_epochs=5)
    first = paper.accuracy(Context(seed=0, out_dir=tmp_path), **kwargs)
    assert finite_floats(first)
    assert {"csbm_whole", "csbm_gdem_r025", "csbm_random_r050", "csbm_herding_r050"} <= set(first)
    assert first["csbm_nodes_r025"] == 15.0
    again = paper.accuracy(Context(seed=0), **{**kwargs, "rates": "0.25"})
    assert {k: v for k, v in again.items() if "seconds" not in k} == {
        k: v for k, v in first.items() if "seconds" not in k and "r050" not in k}
    for claim in paper.CLAIMS[:2]:
        assert claim.evaluate(as_citeseer(first)).status in {"holds", "fails"}


def test_cross_architecture_smoke(tmp_path):
    metrics = paper.cross_architecture(Context(seed=0, out_dir=tmp_path), dataset="csbm", rate=0.25, runs=1,
                                       eval_epochs=5)
    assert finite_floats(metrics)
    assert {"gcn_acc", "sgc_acc", "appnp_acc", "chebnet_acc", "mlp_acc", "gnn_spread"} <= set(metrics)
    assert paper.CLAIMS[2].evaluate(metrics).status in {"holds", "fails"}


def test_efficiency_smoke(tmp_path):
    metrics = paper.efficiency(Context(seed=0, out_dir=tmp_path), dataset="csbm", rates="0.25")
    assert finite_floats(metrics) and metrics["max_distill_seconds"] > 0
    assert paper.CLAIMS[3].evaluate(metrics).status in {"holds", "fails"}


def test_paper_record():
    assert set(paper.PAPER.experiments) == {"accuracy", "cross_architecture", "efficiency"}
    assert len(paper.CLAIMS) == 4
