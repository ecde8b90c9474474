"""Where a paper's method lives: the field modules whose classes and functions its paper module uses.

Read from the paper module itself (the names it imports from field packages, resolved to the module that defines
them), so ``icml24 show SLUG`` and the README's table cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from icml24.core.registry import Paper

_NOT_METHODS = ("core", "papers", "cli", "data")  # the harness and the datasets are not where a method lives


def method_locations(paper: Paper) -> dict[str, list[str]]:
    """``{defining module: [classes, then functions]}`` of the field-package names the paper module uses."""
    if not paper.module:
        return {}
    found: dict[str, tuple[list[str], list[str]]] = {}
    names = _paper_names(paper.module)
    # a base class the paper derives its own from (e4's optimal-arm oracle from BatchedPolicy) is not a method it uses
    extended = {base for obj in names.values() if inspect.isclass(obj) and obj.__module__.startswith(paper.module)
                for base in obj.__mro__[1:]}
    for name, obj in names.items():
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)) or obj in extended:
            continue
        home = getattr(obj, "__module__", "") or ""
        parts = home.split(".")
        if parts[0] != "icml24" or len(parts) < 2 or parts[1] in _NOT_METHODS or parts[1].startswith("_"):
            continue
        classes, functions = found.setdefault(home, ([], []))
        (classes if inspect.isclass(obj) else functions).append(name)
    return {home: sorted(c) + sorted(f) for home, (c, f) in sorted(found.items())}


def method_classes(paper: Paper) -> dict[str, list[str]]:
    """``{defining module: [classes]}``: the classes among the paper's method names (what a user instantiates)."""
    names_used = _paper_names(paper.module) if paper.module else {}
    found = {home: [n for n in names if inspect.isclass(names_used.get(n))]
             for home, names in method_locations(paper).items()}
    return {home: classes for home, classes in found.items() if classes}


def main_classes(paper: Paper) -> list[str]:
    """The classes among the paper's method names, in module order."""
    return [n for classes in method_classes(paper).values() for n in classes]


def _paper_names(module_name: str) -> dict[str, object]:
    """The public names of a paper module or, for a paper package, of the package and each of its modules."""
    module = importlib.import_module(module_name)
    names = dict(vars(module))
    for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
        for name, obj in vars(importlib.import_module(f"{module_name}.{info.name}")).items():
            names.setdefault(name, obj)
    return names
