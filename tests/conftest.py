import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
os.environ.setdefault("ICML24_DATA", str(SHARED_DATA))
