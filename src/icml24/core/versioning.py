"""The code version of an experiment (what the store keys runs by) and the library versions of a run."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
from importlib import metadata
from pathlib import Path

from icml24.core.registry import Experiment

_VERSIONED_PACKAGES = ("icml24", "numpy", "scipy", "torch", "torch_geometric", "scikit-learn")


def code_version(exp: Experiment) -> str:
    """The package version and a hash of the code an experiment runs.

    The hash covers the experiment's module and the ``icml24`` code it imports (see ``code_files``: the method
    subpackages of the names it imports, each field's flat modules, the private helpers): fixing a method reruns
    the papers that use it instead of reporting results of the old code.
    """
    import icml24

    module = inspect.getmodule(exp.fn)
    path = getattr(module, "__file__", None)
    if path:
        return module_code_version(path)
    return f"{icml24.__version__}+{hashlib.sha256(exp.fn.__module__.encode()).hexdigest()[:8]}"


def module_code_version(path: str | Path) -> str:
    """The code version of every experiment of the paper module at ``path``, read from its source without
    importing it (``icml24 list`` finds the papers the store holds current runs of this way)."""
    import icml24

    return f"{icml24.__version__}+{_source_digest(str(path))}"


def paper_source_files(path: str | Path) -> list[Path]:
    """The files whose code a paper's runs depend on: a flat module itself; for a paper package
    (``papers/<slug>/``, given as its folder or any of its files) every module in it but ``claims.py``, which only
    reads metrics (its claims, regimes, nulls, oracles and families change no stored run: a null's or a member's
    overrides are part of its runs' configuration)."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if folder.parent.name == "papers" and (folder / "__init__.py").is_file():
        return sorted(f for f in folder.glob("*.py") if f.name != "claims.py")
    return [path]


@functools.cache
def _source_digest(module_path: str) -> str:
    import icml24

    package_root = Path(icml24.__file__).parent
    own = paper_source_files(module_path)
    files = set(own).union(*(code_files(f.read_text(), package_root) for f in own))
    sha = hashlib.sha256()
    for file in sorted(f for f in files if f.exists()):
        sha.update(str(file.relative_to(package_root) if file.is_relative_to(package_root) else file.name).encode())
        sha.update(file.read_bytes())
    return sha.hexdigest()[:8]


def code_files(source: str, package_root: Path) -> set[Path]:
    """The ``icml24`` files a paper module's code can reach, read from its imports.

    ``from icml24.F import name`` reaches the field's ``__init__`` and flat modules, plus the method subpackage
    that the field's lazy-export table names for ``name`` (``.genco.layer`` -> ``F/genco/``), so two methods in
    one field (GenCO and RPG, ACT and BiE) do not invalidate each other's stored runs and caches. An import the
    table cannot resolve (``import icml24.F``, a name it lacks) takes the whole field. The private helpers
    (``icml24/_*.py``) are always included.
    """
    files: set[Path] = set(package_root.glob("_*.py"))
    for field, names in _imported_names(source).items():
        folder = package_root / field
        if not folder.is_dir():
            files.add(folder.with_suffix(".py"))
            continue
        files.update(folder.glob("*.py"))  # __init__ and the flat modules every subpackage may import
        exports = _export_table(folder / "__init__.py")
        for name in names:
            target = exports.get(name) if name != "*" else None
            parts = target.lstrip(".").split(".") if target else []
            if parts and (folder / parts[0]).is_dir():
                files.update((folder / parts[0]).rglob("*.py"))
            elif not parts:
                files.update(folder.rglob("*.py"))
    return files


def _imported_names(source: str) -> dict[str, set[str]]:
    """Field -> names imported from it (``"*"``: the whole field) by ``source`` (``core`` excluded)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if len(parts) > 1 and parts[0] == "icml24" and parts[1] != "core":
                names = {a.name for a in node.names} if len(parts) == 2 else {"*"}
                found.setdefault(parts[1], set()).update(names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if len(parts) > 1 and parts[0] == "icml24" and parts[1] != "core":
                    found.setdefault(parts[1], set()).add("*")
    return found


def _imported_subpackages(source: str) -> set[str]:
    """Top-level ``icml24`` subpackages named by the import statements of ``source`` (``core`` excluded)."""
    return set(_imported_names(source))


def _export_table(init: Path) -> dict[str, str]:
    """The ``_EXPORTS`` literal of a field's ``__init__`` (read, not imported)."""
    if not init.exists():
        return {}
    for node in ast.walk(ast.parse(init.read_text())):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and node.value is not None:
            try:
                return dict(ast.literal_eval(node.value))
            except ValueError:
                return {}
    return {}


def library_versions() -> dict[str, str]:
    """Python's and the main libraries' versions, stored with every run."""
    found = {"python": ".".join(map(str, os.sys.version_info[:3]))}
    for name in _VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found
