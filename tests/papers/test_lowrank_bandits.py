import math

import pytest

from icml24.core import Context
from icml24.papers import lowrank_bandits as paper

TINY = {
    "policy_evaluation": {"seeds": 2, "m": 12, "n": 10, "horizons": "500,1000"},
    "size_sweep": {"seeds": 2, "sizes": "5,10", "horizon": 800},
    "sample_complexity": {"seeds": 2, "sizes": "5,10", "horizons": "300,600,1200"},
    "best_policy": {"seeds": 2, "m": 12, "n": 10, "horizons": "500,8000"},
    "regret": {"seeds": 1, "m": 8, "n": 6, "horizons": "200,400"},
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_experiment_smoke_and_deterministic(name, tmp_path):
    exp = paper.PAPER.experiments[name]
    first = exp(Context(seed=0, out_dir=tmp_path), **TINY[name])
    assert first and all(isinstance(v, float) and math.isfinite(v) for v in first.values())
    assert exp(Context(seed=0, out_dir=tmp_path), **TINY[name]) == first
    for claim in paper.CLAIMS:
        if claim.experiment is exp and name != "policy_evaluation":
            assert claim.evaluate(first).status in {"holds", "fails"}


def test_every_experiment_has_a_claim_and_quick_config():
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    for exp in paper.PAPER.experiments.values():
        exp.config()
