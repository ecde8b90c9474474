"""Lazy re-exports for the field packages: importing ``icml24.graph`` loads nothing until a name is used."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from icml24._extras import DATA_EXTRAS, FIELD_MODULES, install_hint


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` that import ``names[attr]`` on first access.

    ``names`` maps an exported name to the submodule (relative, e.g. ``".rp"``) that defines it. A submodule that
    fails for a missing third-party module says which extra installs it (``icml24._extras``).
    """

    def __getattr__(attr: str) -> Any:
        if attr not in names:
            raise AttributeError(f"module {package!r} has no attribute {attr!r}")
        try:
            module = importlib.import_module(names[attr], package)
        except ModuleNotFoundError as exc:
            extra = _extra(package, names[attr])
            if extra is None or not exc.name or exc.name.split(".")[0] == "icml24":
                raise
            raise ImportError(f"{package}.{attr} needs {exc.name.split('.')[0]}: {install_hint(extra)}",
                              name=exc.name) from exc
        return getattr(module, attr)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__


def _extra(package: str, submodule: str) -> str | None:
    """The extra of ``package``'s ``submodule``: the field's own, or the one of the shared loader."""
    field = package.split(".")[1] if package.count(".") == 1 else ""
    if field in FIELD_MODULES:
        return field
    return DATA_EXTRAS.get(importlib.util.resolve_name(submodule, package))
