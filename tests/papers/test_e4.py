"""Smoke test of the E4 reproduction: tiny settings, finite metrics, determinism, claims evaluate."""

import math

from icml24.core import Context
from icml24.papers import e4 as paper

TINY_EOO = {"instances": "2:0.2:2000", "seeds": 2, "sequential_max_horizon": 500}
TINY_RANDOM = {"instances": "5:3", "horizon": 2000, "seeds": 2, "algorithms": "e4,phaelimd,rs-oful"}


def test_end_of_optimism_smoke(tmp_path):
    metrics = paper.end_of_optimism_regret(Context(seed=0, out_dir=tmp_path), **TINY_EOO)
    assert all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())
    assert "eoo_d2_eps0p2_e4_regret" in metrics and (tmp_path / "regret_eoo_d2_eps0p2.png").exists()


def test_random_smoke_deterministic(tmp_path):
    first = paper.random_regret(Context(seed=3, out_dir=tmp_path), **TINY_RANDOM)
    second = paper.random_regret(Context(seed=3, out_dir=tmp_path), **TINY_RANDOM)
    assert {k: v for k, v in first.items() if not k.endswith("seconds")} == {
        k: v for k, v in second.items() if not k.endswith("seconds")}


def test_claims_evaluate(tmp_path):
    eoo = paper.end_of_optimism_regret(Context(seed=0, out_dir=tmp_path), instances="2:0.01:2000", seeds=1,
                                       algorithms="e4,phaelimd,rs-oful,endoa")
    rnd = paper.random_regret(Context(seed=0, out_dir=tmp_path), instances="50:20", horizon=1000, seeds=1,
                              algorithms="e4,phaelimd,rs-oful")
    for claim in paper.CLAIMS:
        metrics = eoo if claim.experiment is paper.end_of_optimism_regret else rnd
        assert claim.evaluate(metrics).status in {"holds", "fails"}
