import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
os.environ.setdefault("ICML24_DATA", str(SHARED_DATA))


@pytest.fixture()
def toy():
    """The toy paper of tests/fixtures, registered for the CLI and the runner (never part of the package)."""
    import toy_paper

    from icml24.core.registry import register_module

    register_module(toy_paper)
    return toy_paper



@pytest.fixture()
def claims_can_fail():
    """``check(claims, good, bad)``: each claim holds on its experiment's good metrics and fails once its bad dict
    (a plausible bad outcome, aligned with ``claims``) is merged in (ARCHITECTURE.md: a claim must be able to fail)."""

    def check(claims, good: dict[str, dict[str, float]], bad: list[dict[str, float]]) -> None:
        assert len(claims) == len(bad)
        for claim, worse in zip(claims, bad, strict=True):
            metrics = good[claim.experiment.name]
            assert claim.evaluate(metrics).status == "holds", claim.text
            assert claim.evaluate({**metrics, **worse}).status == "fails", claim.text

    return check
