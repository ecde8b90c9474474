"""Shared by the ``tools/parity/record_<slug>.py`` scripts: find a local copy of the official code, write a fixture.

The official repositories are never part of this one. A recorder looks for ``$ICML24_PEERS/<name>`` (default:
``peers/`` beside the repository, as ``benchmarks/`` does), puts ``<copy>/_deps`` (the official code's own
dependencies, installed with ``pip install --target``) on ``sys.path``, runs the official functions on fixed
inputs and writes only their numbers to ``tests/parity/<slug>.json`` (format: ``tests/fixtures/parity_fixture.py``).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / "tests" / "parity"


def peers() -> Path:
    return Path(os.environ.get("ICML24_PEERS", ROOT.parent / "peers"))


def official_copy(name: str, marker: str) -> Path:
    """The local copy ``$ICML24_PEERS/<name>`` (it must hold ``marker``), its ``_deps`` and itself on ``sys.path``."""
    path = peers() / name
    if not (path / marker).exists():
        raise SystemExit(f"no local copy of {name} at {path} (expected {marker}); clone it there or set ICML24_PEERS")
    for folder in (path / "_deps", path):
        if folder.exists() and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    return path


def commit_of(path: Path) -> str:
    """The commit of the local copy: ``git rev-parse HEAD``, else the ``COMMIT`` file a snapshot export left."""
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return (path / "COMMIT").read_text().strip()


def write_fixture(slug: str, repository: str, commit: str, cases: list[dict[str, Any]], *,
                  third_party: bool = False, notes: str = "") -> Path:
    """Write ``tests/parity/<slug>.json`` with the source, how it was recorded, and the cases."""
    data = {
        "paper": slug,
        "source": {"repository": repository, "commit": commit, "third_party": third_party},
        "recorded": {"script": f"tools/parity/record_{slug.replace('-', '_')}.py", "date": date.today().isoformat(),
                     "machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version()},
        "notes": notes,
        "cases": cases,
    }
    PARITY.mkdir(parents=True, exist_ok=True)
    path = PARITY / f"{slug}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({len(cases)} cases)")
    return path
