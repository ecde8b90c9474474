"""Lazy re-exports for the field packages: importing ``icml24.graph`` loads nothing until a name is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` that import ``names[attr]`` on first access.

    ``names`` maps an exported name to the submodule (relative, e.g. ``".rp"``) that defines it.
    """

    def __getattr__(attr: str) -> Any:
        if attr not in names:
            raise AttributeError(f"module {package!r} has no attribute {attr!r}")
        module = importlib.import_module(names[attr], package)
        return getattr(module, attr)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
