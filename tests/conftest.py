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

