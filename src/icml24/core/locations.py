"""Where a paper's method lives: the field modules whose classes and functions its paper module uses.

Read from the paper module itself (the names it imports from field packages, resolved to the module that defines
them), so ``icml24 show SLUG`` and the README's table cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect

from icml24.core.registry import Paper

_NOT_METHODS = ("core", "papers", "cli", "data")  # the harness and the datasets are not where a method lives


def method_locations(paper: Paper) -> dict[str, list[str]]:
    """``{defining module: [classes, then functions]}`` of the field-package names the paper module uses."""
    if not paper.module:
        return {}
    module = importlib.import_module(paper.module)
    found: dict[str, tuple[list[str], list[str]]] = {}
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        home = getattr(obj, "__module__", "") or ""
        parts = home.split(".")
        if parts[0] != "icml24" or len(parts) < 2 or parts[1] in _NOT_METHODS or parts[1].startswith("_"):
            continue
        classes, functions = found.setdefault(home, ([], []))
        (classes if inspect.isclass(obj) else functions).append(name)
    return {home: sorted(c) + sorted(f) for home, (c, f) in sorted(found.items())}


def main_classes(paper: Paper) -> list[str]:
    """The classes among the paper's method names (what a user instantiates), in module order."""
    module = importlib.import_module(paper.module) if paper.module else None
    return [n for names in method_locations(paper).values() for n in names if inspect.isclass(getattr(module, n))]
