"""Issue #59: one field's extra installs into a fresh virtual environment without torch, and the field's quickstart
(from its page in docs/papers/) runs there; so do `icml24 list`, `show` and a small `run` of one of its papers.

Slow: a venv and a non-editable pip install each (pip may download from the registry; its cache is reused), about a
minute each with the cache warm. The package is built from a copy of the checkout's pyproject.toml, README.md and
src/, so that the build writes no build/ or egg-info into the checkout.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _quickstart(page: str) -> str:
    """The python block of the page's Quickstart section."""
    text = (ROOT / "docs" / "papers" / page).read_text()
    return re.search(r"```python\n(.*?)```", text[text.index("## Quickstart"):], re.S).group(1)


def _env() -> dict[str, str]:
    """This environment without what points into the test venv or the fixtures."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run(*argv, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


def _fresh_venv(tmp_path: Path, extra: str) -> Path:
    """A new venv with ``icml24[extra]`` installed (not editable): its python."""
    source = tmp_path / "icml24-source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", venv, cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = _run(python, "-m", "pip", "install", "-q", f"{source}[{extra}]", cwd=tmp_path, timeout=900)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    no_torch = _run(python, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)",
                    cwd=tmp_path)
    assert no_torch.returncode == 0, f"icml24[{extra}] installed torch"
    return python


def test_the_sdr_extra_installs_without_torch_and_its_quickstart_runs(tmp_path):
    python = _fresh_venv(tmp_path, "sdr")
    quickstart = _run(python, "-c", _quickstart("hellinger-sdr.md"), cwd=tmp_path)
    assert quickstart.returncode == 0, quickstart.stderr
    assert "direction" in quickstart.stdout and "Hellinger correlation" in quickstart.stdout
    icml24 = python.parent / "icml24"
    listing = _run(icml24, "list", cwd=tmp_path)
    assert listing.returncode == 0 and "hellinger-sdr" in listing.stdout and "kernel-ges" in listing.stdout
    assert "warning" not in listing.stderr, listing.stderr  # every paper listed, none imported
    shown = _run(icml24, "show", "rp", cwd=tmp_path)
    assert shown.returncode == 0 and "Install: pip install 'icml24[graph]'" in shown.stdout
    field = _run(python, "-c", "import icml24.graph", cwd=tmp_path)
    assert "ImportError: icml24.graph needs torch and torch_geometric: pip install 'icml24[graph]'" in field.stderr
    paper = _run(icml24, "run", "rp", "--dry-run", "--store", tmp_path / "s.sqlite", cwd=tmp_path)
    assert paper.returncode == 2 and "pip install 'icml24[graph]'" in paper.stderr and "Traceback" not in paper.stderr


def test_the_bandits_extra_installs_without_torch_and_runs_e4(tmp_path):
    """The bandit methods are numpy only: no torch, the E4 quickstart, and one small run of an e4 experiment (its
    smoke parameters) through the runner, the store and the claims' verdicts."""
    python = _fresh_venv(tmp_path, "bandits")
    quickstart = _run(python, "-c", _quickstart("e4.md"), cwd=tmp_path)
    assert quickstart.returncode == 0, quickstart.stderr
    assert "regret" in quickstart.stdout and "batches" in quickstart.stdout
    run = _run(python.parent / "icml24", "run", "e4:random_regret", "--seeds", "0", "--backend", "inline", "--store",
               tmp_path / "s.sqlite", "--set", "instances=50:20", "--set", "horizon=1000", "--set",
               "algorithms=e4,e4-gamma10,phaelimd,endoa", cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"\b(holds|fails)\b", run.stdout), run.stdout
