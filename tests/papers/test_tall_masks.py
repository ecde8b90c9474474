import math

import pytest

from icml24.core import Context
from icml24.papers import tall_masks as paper

TINY = {"seeds": 1, "task_counts": "2,3", "hidden": 32, "pretrain_epochs": 2, "finetune_epochs": 1}


def _finite(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.fixture(scope="module")
def tiny_metrics(tmp_path_factory):
    return paper.merging(Context(seed=0, out_dir=tmp_path_factory.mktemp("tm")), **TINY)


def test_merging_smoke(tiny_metrics):
    assert _finite(tiny_metrics)
    for method in ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties"):
        assert f"t3_{method}_norm_acc" in tiny_metrics
    fractions = [tiny_metrics[f"t3_{k}_frac"] for k in ("catastrophic", "selfish", "general")]
    assert sum(fractions) == pytest.approx(1.0)
    assert tiny_metrics["t3_storage_ratio"] == pytest.approx((64 + 3) / 96, rel=1e-3)


def test_deterministic(tiny_metrics, tmp_path):
    again = paper.merging(Context(seed=0, out_dir=tmp_path), **TINY)
    keys = [k for k in again if not k.endswith("seconds")]
    assert {k: again[k] for k in keys} == {k: tiny_metrics[k] for k in keys}


def test_claims_evaluate(tiny_metrics):
    renamed = {k.replace("t3_", "t14_").replace("t2_", "t8_"): v for k, v in tiny_metrics.items()}
    renamed.update({k.replace("t14_", "t8_"): v for k, v in renamed.items() if k.startswith("t14_")})
    for claim in paper.CLAIMS:
        assert claim.evaluate(renamed).status in {"holds", "fails"}, claim.text


def test_mnist1d_and_ablation_smoke(tmp_path):
    pytest.importorskip("mnist1d")
    m = paper.merging_mnist1d(Context(seed=1, out_dir=tmp_path), **TINY)
    assert _finite(m)
    a = paper.finetune_strength(Context(seed=1, out_dir=tmp_path), seeds=1, epochs="1", num_tasks=2, hidden=16)
    assert _finite(a) and "e1_tall_ta_norm_acc" in a


def test_bad_task_counts():
    with pytest.raises(ValueError, match="task_counts"):
        paper.merging(Context(seed=0), task_counts="1,99")
