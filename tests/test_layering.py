"""The house rules of ARCHITECTURE.md, checked on the source by its imports (AST), so they cannot rot.

Floors: ``core`` (knows no field) < field packages and ``data`` (methods; never import ``core`` or ``papers``)
< ``papers`` (reproductions; import ``icml24.core`` and the fields' package faces only) < ``cli``.
"""

import ast
import re
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "icml24"
TESTS = Path(__file__).resolve().parent
FIELDS = sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()
                and p.name not in ("core", "papers"))
MAX_LINES = 500  # "one file until ~400 lines": past this a file must be split along a seam


def _imports(path: Path, relative: bool = True) -> list[tuple[str, int]]:
    """``icml24`` modules a file imports, relative imports resolved against the file's package
    (``from ..core.context import C`` in ``graph/rp.py`` gives icml24.core.context); ``from a.b import c`` gives a.b
    and, where ``a.b`` is a package, a.b.c (c may be a module). ``relative=False``: absolute imports only."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    package = parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.ImportFrom) and relative:
            base = package[:len(package) - (node.level - 1)] if node.level <= len(package) else []
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                found.append((module, node.lineno))
            else:  # from . import x, y: the modules x and y of the package
                found.extend((f"{module}.{alias.name}", node.lineno) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(name, line) for name, line in found if name == "icml24" or name.startswith("icml24.")]


def _files(folder: str) -> list[Path]:
    return sorted((SRC / folder).rglob("*.py"))


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(SRC.parent)}:{line}"


def test_core_knows_no_field_and_no_paper():
    bad = [f"{_where(p, n)} imports {m}" for p in _files("core") for m, n in _imports(p)
           if m.split(".")[1:2] and m.split(".")[1] not in ("core",) and not m.split(".")[1].startswith("_")]
    assert not bad, "core/ must not import field packages or papers:\n" + "\n".join(bad)


SHARED = ("data",)  # what every field package may import besides itself (and the private helpers, icml24._*)


def _field_violations(path: Path, field: str) -> list[str]:
    """Imports of ``path`` (a file of ``field``) that climb to core/papers/cli or reach another field package."""
    bad = []
    for module, line in _imports(path):
        top = module.split(".")[1] if module.count(".") else ""
        if top in ("core", "papers", "cli"):
            bad.append(f"{_where(path, line)} imports {module}: a method package may not import core, papers or cli")
        elif top and top != field and not top.startswith("_") and top not in SHARED:
            bad.append(f"{_where(path, line)} imports {module}: one field package may not import another "
                       f"(move the shared piece to icml24.{SHARED[0]} or a private helper icml24._*)")
    return bad


@pytest.mark.parametrize("field", FIELDS)
def test_fields_import_neither_core_nor_another_field(field):
    bad = [v for p in _files(field) for v in _field_violations(p, field)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("source, caught", [
    ("from ..core.context import Context\n", "may not import core"),
    ("from ...core import Context\n", "may not import core"),
    ("from .. import papers\n", "may not import core, papers"),
    ("from ..merging import TaskVector\n", "one field package may not import another"),
    ("from icml24.sbi import Simformer\n", "one field package may not import another"),
    ("from .._validation import check_finite\nfrom ..data import load_planetoid\nfrom .rp import X\n", None),
])
def test_the_layering_rule_reads_relative_imports(source, caught, tmp_path, monkeypatch):
    """The checker itself: it resolves relative imports (a file two levels deep in graph/ climbing to core)."""
    fake = tmp_path / "icml24"
    (fake / "graph" / "certify").mkdir(parents=True)
    path = fake / "graph" / "certify" / "x.py" if source.startswith("from ...") else fake / "graph" / "x.py"
    path.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    found = _field_violations(path, "graph")
    assert (caught is None and not found) or (caught is not None and found and caught in found[0]), found


@pytest.mark.parametrize("field", FIELDS)
def test_one_import_style_inside_a_package(field):
    """Inside a field package its own modules are imported relatively (``from .rp import``); other packages by name."""
    bad = [f"{_where(p, n)} imports {m}; write a relative import" for p in _files(field)
           for m, n in _imports(p, relative=False) if m.split(".")[1:2] == [field]]
    assert not bad, "\n".join(bad)


def test_papers_import_package_faces_only():
    bad = []
    for path in _files("papers"):
        for module, line in _imports(path):
            parts = module.split(".")
            if len(parts) > 2:  # icml24.graph.rp, icml24.core.context: a file, not the face
                bad.append(f"{_where(path, line)} imports {module}; import from icml24.{parts[1]} instead")
    assert not bad, "papers/ import from a package's face (icml24.graph), never its files:\n" + "\n".join(bad)


def test_papers_use_the_one_seed_parameter_and_thread_idiom():
    """No private seed idioms, list parsers or hand-placed thread limits in papers/ (the runner and ctx own them)."""
    rules = {
        r"SeedSequence": "use ctx.child_seed(*keys) / ctx.rng(*keys)",
        r"default_rng\(\s*\[": "use ctx.rng(*keys)",
        r"\bseed\s*\+\s*ctx\.seed|ctx\.seed\s*[+*]": "use ctx.child_seed(*keys)",
        r"manual_seed\(": "use ctx.torch_generator(*keys)",
        r"limit_threads": "declare threads= on the @experiment",
        r"\.split\(\s*[\"'][,;][\"']\s*\)": "declare a list[...] parameter; --set parses it",
    }
    bad = []
    for path in _files("papers"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            bad += [f"{_where(path, number)}: {fix}: {line.strip()}" for pattern, fix in rules.items()
                    if re.search(pattern, line)]
    assert not bad, "\n".join(bad)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _global_seed_calls(path: Path) -> list[int]:
    """Lines calling torch.manual_seed / np.random.seed / random.seed outside a ``with ...fork_rng(...)`` block."""
    tree = ast.parse(path.read_text())
    protected: set[int] = set()
    for node in ast.walk(tree):
        managers = [getattr(item.context_expr, "func", item.context_expr) for item in getattr(node, "items", [])]
        if isinstance(node, ast.With) and any("fork_rng" in _dotted(m) for m in managers):
            protected.update(id(inner) for inner in ast.walk(node))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in protected:
            name = _dotted(node.func)
            if name in ("torch.manual_seed", "np.random.seed", "numpy.random.seed", "random.seed",
                        "torch.random.manual_seed"):
                lines.append(node.lineno)
    return lines


def test_methods_never_touch_global_rng():
    bad = [f"{_where(path, line)}" for field in FIELDS for path in _files(field) for line in _global_seed_calls(path)]
    assert not bad, "a method seeds a generator, or wraps a library that needs global state in " \
                    "torch.random.fork_rng():\n" + "\n".join(bad)


def test_files_stay_small():
    big = [f"{p.relative_to(SRC.parent)} ({n} lines)" for p in SRC.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not big, "split these along a seam (ARCHITECTURE.md, file vs folder):\n" + "\n".join(big)


def test_every_paper_has_its_test_and_benchmark_files():
    slugs = [p.stem for p in (SRC / "papers").glob("*.py") if not p.stem.startswith("_")]
    missing = [f"tests/papers/test_{s}.py" for s in slugs if not (TESTS / "papers" / f"test_{s}.py").exists()]
    bench = TESTS.parent / "benchmarks"
    missing += [f"benchmarks/bench_{s}.py" for s in slugs if not (bench / f"bench_{s}.py").exists()]
    assert not missing, "the new-paper checklist (ARCHITECTURE.md) asks for:\n" + "\n".join(missing)


def test_test_files_are_named_after_a_module():
    """tests/<field>/test_<module>.py mirrors src/icml24/<field>/<module>.py (or a folder, or a paper)."""
    modules = {p.stem for p in SRC.rglob("*.py")} | {p.name for p in SRC.rglob("*") if p.is_dir()}
    modules |= {m.lstrip("_") for m in modules}
    extra = {"layering", "readme", "every_experiment", "nulls", "docs", "fixtures"}  # house-rule tests
    orphans = []
    for path in TESTS.rglob("test_*.py"):
        name = path.stem.removeprefix("test_")
        if name in extra or name in modules:
            continue
        if not any(name.startswith(m + "_") for m in modules if len(m) > 2):
            orphans.append(str(path.relative_to(TESTS.parent)))
    assert not orphans, "name test files after the module they test:\n" + "\n".join(orphans)
