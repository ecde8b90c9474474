"""Smoke test of the collective-cert reproduction with tiny settings."""

import math
import os
from pathlib import Path

import pytest

from icml24.core import Context
from icml24.papers import collective_cert as paper

HAVE_DATA = (Path(os.environ.get("ICML24_DATA", "/nonexistent")) / "collective-cert" / "cora_ml.npz").is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="set ICML24_DATA to the folder holding collective-cert/")
TINY_OWN = {"dataset": "citeseer", "num_samples": 200, "epochs": 5, "patience": 2, "target_seeds": 1, "rhos": "20",
            "timing_rho": 4}


def finite(metrics):
    return all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


def untimed(metrics):
    return {k: v for k, v in metrics.items() if "seconds" not in k}


def claims_of(experiment):
    return [c for c in paper.CLAIMS if c.experiment is experiment]


@needs_data
def test_official_votes_smoke(tmp_path):
    m = paper.official_votes(Context(seed=0, out_dir=tmp_path), target_seeds=1, rhos="20,50,100,160", full_lp_rho=4)
    assert finite(m)
    assert m["lp2_optimum_gap"] < 1e-4 and m["collective_rho20"] == pytest.approx(0.95)
    for claim in claims_of(paper.official_votes):
        assert claim.evaluate(m).status in {"holds", "fails"}


@needs_data
def test_own_smoothing_smoke_and_determinism(tmp_path):
    first = paper.own_smoothing(Context(seed=0, out_dir=tmp_path), **TINY_OWN)
    assert finite(first) and first["rho_5pct"] == 106
    second = paper.own_smoothing(Context(seed=0, out_dir=tmp_path), **TINY_OWN)
    assert untimed(first) == untimed(second)
    for claim in claims_of(paper.own_smoothing):
        assert claim.evaluate(first).status in {"holds", "fails"}


def test_soundness_smoke(tmp_path):
    m = paper.soundness(Context(seed=0, out_dir=tmp_path), cases=2)
    assert finite(m) and m == paper.soundness(Context(seed=0, out_dir=tmp_path), cases=2)
    assert paper.CLAIMS[-1].evaluate(m).status in {"holds", "fails"}
