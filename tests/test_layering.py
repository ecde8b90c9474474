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
        own = ["icml24", "papers", _paper_name(path)]  # a paper package's own files import each other
        for module, line in _imports(path):
            parts = module.split(".")
            if len(parts) > 2 and parts[:3] != own:  # icml24.graph.rp, icml24.core.context: a file, not the face
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
    slugs += [p.name for p in (SRC / "papers").iterdir() if (p / "__init__.py").is_file()]
    missing = [f"tests/papers/test_{s}.py" for s in slugs if not (TESTS / "papers" / f"test_{s}.py").exists()]
    bench = TESTS.parent / "benchmarks"
    missing += [f"benchmarks/bench_{s}.py" for s in slugs if not (bench / f"bench_{s}.py").exists()]
    assert not missing, "the new-paper checklist (ARCHITECTURE.md) asks for:\n" + "\n".join(missing)


def test_test_files_are_named_after_a_module():
    """tests/<field>/test_<module>.py mirrors src/icml24/<field>/<module>.py (or a folder, or a paper)."""
    modules = {p.stem for p in SRC.rglob("*.py")} | {p.name for p in SRC.rglob("*") if p.is_dir()}
    modules |= {m.lstrip("_") for m in modules}
    # house-rule tests
    extra = {"layering", "readme", "every_experiment", "nulls", "oracles", "docs", "fixtures", "benchmarks"}
    orphans = []
    for path in TESTS.rglob("test_*.py"):
        name = path.stem.removeprefix("test_")
        if name in extra or name in modules:
            continue
        if not any(name.startswith(m + "_") for m in modules if len(m) > 2):
            orphans.append(str(path.relative_to(TESTS.parent)))
    assert not orphans, "name test files after the module they test:\n" + "\n".join(orphans)


# --------------------------------------------------------------------------- one seed name (issue #46)
SEED_NAMES = ("seed", "rng", "generator", "gen")  # the names randomness had before ``random_state``
NOT_RANDOMNESS = {  # parameters with a seed-like name that are not a method's randomness
    "generative/genco/baselines.py:__init__(generator)",  # GenCO's generator is the generative model
    "generative/genco/genco.py:__init__(generator)",
    "generative/genco/training.py:__init__(generator)",
    "rl/failures/environment.py:reset(seed)",  # gymnasium's Env.reset(seed=...) API
}


def _seed_parameters(path: Path, root: Path) -> set[str]:
    """``file:function(param)`` for every public function or method (and ``__init__``) of ``path`` with a
    parameter named like a seed (``SEED_NAMES``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                not node.name.startswith("_") or node.name == "__init__"):
            for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                if arg.arg in SEED_NAMES:
                    found.add(f"{path.relative_to(root).as_posix()}:{node.name}({arg.arg})")
    return found


def _all_seed_parameters() -> set[str]:
    return {entry for field in FIELDS for path in _files(field) for entry in _seed_parameters(path, SRC)}


def test_methods_take_one_seed_argument_random_state():
    """ARCHITECTURE.md, Methods: randomness comes in as ``random_state`` (icml24._random), never seed/rng/generator."""
    new = _all_seed_parameters() - NOT_RANDOMNESS
    assert not new, "name the randomness parameter random_state (icml24._random.check_random_state / " \
                    "torch_generator / spawn):\n" + "\n".join(sorted(new))


@pytest.mark.parametrize("source, caught", [
    ("def fit(self, X, seed=0):\n    pass\n", {"graph/x.py:fit(seed)"}),
    ("def draw(n, rng):\n    pass\n", {"graph/x.py:draw(rng)"}),
    ("class A:\n    def __init__(self, generator=None):\n        pass\n", {"graph/x.py:__init__(generator)"}),
    ("def _private(rng):\n    pass\ndef fit(self, X, random_state=None):\n    pass\n", set()),
])
def test_the_seed_name_rule_reads_signatures(source, caught, tmp_path):
    (tmp_path / "graph").mkdir()
    path = tmp_path / "graph" / "x.py"
    path.write_text(source)
    assert _seed_parameters(path, tmp_path) == caught


# --------------------------------------------------------------------------- random_state defaults to None (#58)
SEEDED_BY_DEFAULT: set[str] = set()  # every random_state defaults to None (#58); an entry here is a defect


def _random_state_defaults(path: Path, root: Path) -> set[str]:
    """``file:[Class.]function(random_state=default)`` for every public function or method (and ``__init__``) of
    ``path`` whose ``random_state`` has a default other than None (a seed hidden in a signature)."""
    tree = ast.parse(path.read_text())
    owner = {id(f): c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                not node.name.startswith("_") or node.name == "__init__"):
            positional = node.args.posonlyargs + node.args.args
            pairs = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
            pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
            name = f"{owner[id(node)]}.{node.name}" if id(node) in owner else node.name
            found |= {f"{path.relative_to(root).as_posix()}:{name}(random_state={ast.unparse(default)})"
                      for arg, default in pairs if arg.arg == "random_state"
                      and not (isinstance(default, ast.Constant) and default.value is None)}
    return found


def test_random_state_defaults_to_none():
    """ARCHITECTURE.md, Methods: ``random_state=None`` (fresh entropy); a caller wanting a fixed draw passes the seed
    (papers pass ``ctx.child_seed(...)`` or the int the paper's numbers were recorded with)."""
    found = {entry for field in FIELDS for path in _files(field) for entry in _random_state_defaults(path, SRC)}
    assert not found - SEEDED_BY_DEFAULT, "default random_state to None and pass the seed at the call site:\n" + \
        "\n".join(sorted(found - SEEDED_BY_DEFAULT))
    assert not SEEDED_BY_DEFAULT - found, "fixed: remove from SEEDED_BY_DEFAULT:\n" + \
        "\n".join(sorted(SEEDED_BY_DEFAULT - found))


@pytest.mark.parametrize("source, caught", [
    ("def fit(X, random_state=0):\n    pass\n", {"graph/x.py:fit(random_state=0)"}),
    ("class A:\n    def __init__(self, *, random_state=42):\n        pass\n",
     {"graph/x.py:A.__init__(random_state=42)"}),
    ("def draw(n, random_state: int = 2020):\n    pass\n", {"graph/x.py:draw(random_state=2020)"}),
    ("def fit(X, random_state=None):\n    pass\ndef _private(random_state=0):\n    pass\n"
     "def run(*, random_state):\n    pass\n", set()),
])
def test_the_random_state_default_rule_reads_signatures(source, caught, tmp_path):
    (tmp_path / "graph").mkdir()
    path = tmp_path / "graph" / "x.py"
    path.write_text(source)
    assert _random_state_defaults(path, tmp_path) == caught


# --------------------------------------------------------------------------- no paper parses a metric key (#46)
KEY_PARSERS = ("split", "rsplit", "partition", "rpartition", "removeprefix", "removesuffix")
KEY_PARSE_ALLOWED = {  # (paper, the call's source): string parsing that does not read a metric key
    ("e4", 'spec.split(":")'),  # the experiment's "d:eps:T" item parameter, parsed once at the boundary
    ("e4", 'spec.partition(":")'),
    ("kernel_ges", 'name.removeprefix("cl_")'),  # a method name ("cl_cv") to causal-learn's score name
}


def _key_parsing_calls(path: Path) -> list[tuple[str, int]]:
    """(source, line) of every str.split-like call and every ``re`` call in a paper module."""
    source = path.read_text()
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            is_re = isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
            if node.func.attr in KEY_PARSERS or is_re:
                calls.append((ast.get_source_segment(source, node) or "", node.lineno))
    return calls


def _paper_name(path: Path) -> str:
    """The paper a file of papers/ belongs to: a flat module's stem, a paper package's folder name."""
    return path.parent.name if path.parent.name != "papers" else path.stem


def test_no_paper_parses_a_metric_key():
    """Structure lives in labels (``icml24.core.labelled``/``select``), not in key text a paper splits apart."""
    bad = [f"{_where(path, line)}: {call}" for path in _files("papers") for call, line in _key_parsing_calls(path)
           if (_paper_name(path), call) not in KEY_PARSE_ALLOWED]
    assert not bad, "label the metrics (labelled(name, **labels)) and read them with select(...):\n" + "\n".join(bad)


def test_the_key_parsing_rule_sees_splits_and_regexes(tmp_path):
    path = tmp_path / "x.py"
    path.write_text('import re\nsizes = [int(k.split("_n")[-1]) for k in m]\nr = re.fullmatch(r"a(\\d+)", k)\n'
                    'ok = labelled("a", n=1)\n')
    assert sorted(line for _, line in _key_parsing_calls(path)) == [2, 3]
