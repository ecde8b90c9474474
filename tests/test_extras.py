"""Issue #59: one extra per field. The table of icml24/_extras.py against the fields' imports and pyproject.toml, and
the message a field whose extra is missing gives (a missing module simulated with ``sys.modules[name] = None``)."""

import ast
import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from icml24._extras import DATA_EXTRAS, FIELD_MODULES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "icml24"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CORE = {"numpy", "scipy", "sklearn", "typer", "click", "rich", "tqdm", "threadpoolctl"}  # pip install icml24
FIELDS = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists() and p.name not in ("core", "papers",
                                                                                                     "data"))


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement string ("torch>=2.4  # why" -> "torch")."""
    for mark in "<>=!~[; ":
        requirement = requirement.split(mark)[0]
    return requirement.strip().lower().replace("_", "-")


def _third_party(paths) -> set[str]:
    """Top-level modules the files import (inside functions too), without the standard library and icml24."""
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
    return {name for name in found if name not in sys.stdlib_module_names and name != "icml24"}


def test_every_field_has_its_extra_and_all_and_dev_pull_them():
    extras = PYPROJECT["optional-dependencies"]
    assert set(FIELD_MODULES) == set(FIELDS)
    for name in [*FIELDS, "ray", "all", "dev", "docs"]:
        assert name in extras, f"pyproject.toml has no extra [{name}]"
    everything = extras["all"][0]
    assert _name(everything) == "icml24" and set(everything.split("[")[1].split("]")[0].split(",")) == {*FIELDS, "ray"}
    assert "icml24[all]" in extras["dev"] and {"pytest", "pytest-xdist"} <= {_name(r) for r in extras["dev"]}


def test_the_core_is_small():
    """numpy, scipy, scikit-learn, the CLI's typer/click/rich, tqdm and threadpoolctl: no torch, no field library."""
    names = {_name(r) for r in PYPROJECT["dependencies"]}
    assert names == {"numpy", "scipy", "scikit-learn", "typer", "click", "rich", "tqdm", "threadpoolctl"}


@pytest.mark.parametrize("field", FIELDS)
def test_a_field_imports_only_the_core_and_its_extra(field):
    """What a field's files import (AST, lazy imports included) is in the core or in its FIELD_MODULES entry."""
    imported = _third_party((SRC / field).rglob("*.py"))
    extra = imported - CORE - set(FIELD_MODULES[field])
    assert not extra, f"icml24.{field} imports {sorted(extra)}: add them to FIELD_MODULES and pyproject's [{field}]"


def test_the_shared_loaders_and_the_core_import_only_what_an_extra_brings():
    core_and_cli = _third_party([*(SRC / "core").rglob("*.py"), *SRC.glob("*.py")])
    assert core_and_cli - CORE <= {"torch", "matplotlib", "ray"}, core_and_cli  # each imported lazily, where needed
    loaders = _third_party((SRC / "data").rglob("*.py")) - CORE
    brought = {m for extra in set(DATA_EXTRAS.values()) for m in FIELD_MODULES[extra]}
    assert loaders <= brought, loaders - brought


@pytest.mark.parametrize("field", [f for f in FIELDS if FIELD_MODULES[f]])
def test_each_module_of_a_field_is_installed_by_its_extra(field):
    """Each FIELD_MODULES entry is a module of a distribution that pyproject's [field] lists."""
    listed = {_name(r) for r in PYPROJECT["optional-dependencies"][field]}
    owners = metadata.packages_distributions()
    for module in FIELD_MODULES[field]:
        dists = {_name(d) for d in owners.get(module, [])}
        assert dists & listed, f"{module} (from {sorted(dists) or 'no installed distribution'}) is not in [{field}]"


def test_every_field_extra_brings_the_figures():
    for field in FIELDS:
        assert "matplotlib" in {_name(r) for r in PYPROJECT["optional-dependencies"][field]}, field


_MISSING = """
import importlib, json, sys
module, target = sys.argv[1], sys.argv[2]
sys.modules[module] = None  # as if it were not installed
try:
    importlib.import_module(target)
    out = {"error": None}
except ImportError as exc:
    out = {"error": str(exc), "name": exc.name}
print(json.dumps(out))
"""


def _simulate(*args: str, code: str = _MISSING) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("field", [f for f in FIELDS if FIELD_MODULES[f]])
def test_importing_a_field_without_its_extra_names_the_extra(field):
    module = FIELD_MODULES[field][-1]
    out = _simulate(module, f"icml24.{field}")
    assert out["error"] == f"icml24.{field} needs {module}: pip install 'icml24[{field}]'"
    assert out["name"] == module


def test_a_missing_module_of_a_shared_loader_names_the_extra():
    code = _MISSING.replace("importlib.import_module(target)", "from icml24.data import planetoid; planetoid('cora')")
    out = _simulate("torch_geometric", "icml24.data", code=code)
    assert out["error"] == "icml24.data.planetoid needs torch_geometric: pip install 'icml24[graph]'"


def test_a_lazily_exported_name_whose_module_misses_a_library_names_the_extra(tmp_path, monkeypatch):
    """The lazy-export point: a field submodule (or a shared loader) that fails on a missing third-party module."""
    from icml24._lazy import _extra, lazy_exports

    (tmp_path / "icml24_fake_method.py").write_text("import icml24_not_installed_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    getattr_, _ = lazy_exports("icml24.rl", {"Method": "icml24_fake_method"})
    with pytest.raises(ImportError, match=r"^icml24.rl.Method needs icml24_not_installed_anywhere: "
                                          r"pip install 'icml24\[rl\]'$"):
        getattr_("Method")
    assert _extra("icml24.data", ".graphs") == "graph" and _extra("icml24.data", ".images") == "merging"
    assert _extra("icml24.sdr", ".refine") == "sdr"


def test_a_paper_that_cannot_import_names_its_extra():
    """`icml24 run rp` where torch is missing: the paper imports torch first, and the one-line error names the extra."""
    code = ("import sys\nsys.modules['torch'] = None\nfrom icml24.core import registry\n"
            "try:\n    registry.get_paper('rp')\nexcept ValueError as exc:\n    print(repr(str(exc)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "paper 'rp' failed to import" in proc.stdout and "pip install 'icml24[graph]'" in proc.stdout, proc


def test_ray_and_the_report_figures_say_what_to_install():
    code = ("import sys\nsys.modules['ray'] = None\nsys.modules['matplotlib'] = None\n"
            "from icml24.core.runner import require_ray\nfrom icml24._extras import require_module\n"
            "for call in (require_ray, lambda: require_module('matplotlib', 'the report')):\n"
            "    try:\n        call()\n    except (ImportError, ValueError) as exc:\n        print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = proc.stdout.splitlines()
    assert lines[0] == "--backend ray needs ray: pip install 'icml24[ray]'", proc.stderr
    assert lines[1].startswith("the report needs matplotlib: pip install matplotlib"), proc.stderr
