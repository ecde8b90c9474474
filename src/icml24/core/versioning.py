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

    The hash covers the experiment's module and every file of each ``icml24`` field package it imports
    (``icml24.graph``, ``icml24.data``, ...; ``icml24.core`` aside) and the package's private helpers
    (``icml24/_*.py``): fixing a method reruns the papers that use it instead of reporting results of the old code.
    """
    import icml24

    module = inspect.getmodule(exp.fn)
    path = getattr(module, "__file__", None)
    digest = _source_digest(path) if path else hashlib.sha256(exp.fn.__module__.encode()).hexdigest()[:8]
    return f"{icml24.__version__}+{digest}"


@functools.cache
def _source_digest(module_path: str) -> str:
    import icml24

    package_root = Path(icml24.__file__).parent
    source = Path(module_path).read_text()
    files = {Path(module_path)}
    for subpackage in sorted(_imported_subpackages(source)):
        folder = package_root / subpackage
        files.update(folder.rglob("*.py") if folder.is_dir() else [folder.with_suffix(".py")])
        if folder.is_dir():
            files.update(package_root.glob("_*.py"))  # helpers every field package may use (_validation, _lazy)
    sha = hashlib.sha256()
    for file in sorted(f for f in files if f.exists()):
        sha.update(file.name.encode())
        sha.update(file.read_bytes())
    return sha.hexdigest()[:8]


def _imported_subpackages(source: str) -> set[str]:
    """Top-level ``icml24`` subpackages named by the import statements of ``source`` (``core`` excluded)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    parts = (name.split(".") for name in names)
    return {p[1] for p in parts if len(p) > 1 and p[0] == "icml24" and p[1] != "core"}


def library_versions() -> dict[str, str]:
    """Python's and the main libraries' versions, stored with every run."""
    found = {"python": ".".join(map(str, os.sys.version_info[:3]))}
    for name in _VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found
