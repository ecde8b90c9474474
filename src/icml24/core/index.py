"""The papers' static index (``icml24/papers/index.json``): what ``icml24 list`` and ``icml24 show`` print, read
without importing a paper module, a field package or torch (``list`` took 7-10 CPU seconds importing them all).

``python tools/paper_index.py`` writes it from the registry; ``tests/core/test_index.py`` fails when it is stale.
At run time the index is trusted only where it is current: a paper module edited since it was written (its source
hash differs), one it lacks and a paper registered in this process (the tests' toy papers) are described from the
imported module instead, so the CLI never prints stale text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

from icml24._extras import module_extras
from icml24.core import registry
from icml24.core.registry import Paper
from icml24.core.store import Store
from icml24.core.versioning import module_code_version

PACKAGE = "icml24.papers"
FORMAT = 1


def package_dir(package: str = PACKAGE) -> Path:
    """The folder of the paper modules (found, not imported beyond the package itself)."""
    spec = importlib.util.find_spec(package)
    return Path(next(iter(spec.submodule_search_locations)))


def index_path(package: str = PACKAGE) -> Path:
    return package_dir(package) / "index.json"


def source_hash(path: Path) -> str:
    """What the index keeps of a paper's source: a hash of its module's bytes (of a paper package: every module's,
    ``claims.py`` included, with their names)."""
    sha = hashlib.sha256()
    for file in _sources(path):
        sha.update(file.name.encode() if path.is_dir() else b"")
        sha.update(file.read_bytes())
    return sha.hexdigest()[:16]


def _sources(path: Path) -> list[Path]:
    """A flat paper module, or every module of a paper package (its folder)."""
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


def source_text(path: Path) -> str:
    """The source of a paper module, or of every module of a paper package."""
    return "\n".join(file.read_text() for file in _sources(path))


def records_dir(path: Path) -> Path:
    """Where a paper's recorded runs live: ``records/`` in a paper package, beside a flat module."""
    return (path if path.is_dir() else path.parent) / "records"


def describe(paper: Paper) -> dict[str, Any]:
    """The index entry of ``paper`` (a registered Paper; its module is imported to find where its methods live)."""
    from icml24.core.locations import method_locations
    from icml24.core.params import type_name

    path = _module_path(paper.module)
    return {
        "slug": paper.slug,
        "title": paper.title,
        "authors": paper.authors,
        "venue": paper.venue,
        "code": paper.code,
        "summary": paper.summary,
        "module": paper.module,
        "source": source_hash(path) if path else "",
        "extras": module_extras(source_text(path)) if path else [],
        "deviations": list(paper.deviations),
        "locations": method_locations(paper),
        "experiments": [{
            "name": exp.name,
            "doc": exp.doc.splitlines()[0] if exp.doc else "",
            "parameters": {name: type_name(kind) for name, kind in exp.parameters().items()},
            "seeds": dict(exp.seeds),
            "settings": {"quick": str(exp.quick), "full": str(exp.full)},
        } for exp in paper.experiments.values()],
        "claims": [{
            "id": number,
            "text": claim.text,
            "paper": claim.paper,
            "experiment": claim.experiment.name,
            "setting": claim.setting,
            "null": None if claim.resolved_null is None else {"label": claim.resolved_null.label,
                                                             "overrides": str(claim.resolved_null.overrides)},
        } for number, claim in enumerate(paper.claims, 1)],
        "regimes": [{"text": m.text, "experiment": m.experiment.name, "metrics": list(m.metrics)}
                    for m in paper.regimes],
    }


def build(package: str = PACKAGE) -> dict[str, Any]:
    """The index of every paper module of ``package``, each imported (one that fails to import: ValueError)."""
    papers = [registry.get_paper(slug) for slug in sorted(registry.paper_modules(package))]
    return {"format": FORMAT, "papers": [describe(paper) for paper in papers]}


def render(index: dict[str, Any]) -> str:
    return json.dumps(index, indent=1, ensure_ascii=False) + "\n"


def stored(package: str = PACKAGE) -> dict[str, dict[str, Any]]:
    """Slug -> entry of the index file as written (empty when it is missing, unreadable or of another format)."""
    try:
        data = json.loads(index_path(package).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    return {entry["slug"]: entry for entry in data.get("papers", [])}


def _module_path(module: str) -> Path | None:
    """The file of a flat paper module or the folder of a paper package, without importing it (None for a module
    that is not one of the package's)."""
    package, _, name = module.rpartition(".")
    if package != PACKAGE:
        return None
    folder = package_dir(package) / name
    if (folder / "__init__.py").is_file():
        return folder
    path = package_dir(package) / f"{name}.py"
    return path if path.is_file() else None


def _current(entry: dict[str, Any] | None, module: str) -> bool:
    path = _module_path(module)
    return entry is not None and entry.get("module") == module and path is not None and \
        entry.get("source") == source_hash(path)


def entry(slug: str, package: str = PACKAGE) -> dict[str, Any]:
    """The description of paper ``slug``: the index's where it is current, else from its imported module (a
    mistyped or broken paper: the ValueError of ``registry.get_paper``)."""
    live = registry.registered()
    if slug in live and live[slug].module != registry.paper_modules(package).get(slug):
        return describe(live[slug])  # a paper registered by hand (a test's toy paper)
    modules = registry.paper_modules(package)
    if slug in modules:
        found = stored(package).get(slug)
        if _current(found, modules[slug]):
            return found
    return describe(registry.get_paper(slug))


def entries(package: str = PACKAGE) -> dict[str, dict[str, Any]]:
    """Slug -> description of every paper, by slug: the package's (from the index where it is current) and any
    registered in this process. A changed module that fails to import (``registry.BROKEN`` says why) keeps its
    index entry; one the index lacks is left out."""
    modules = registry.paper_modules(package)
    index = stored(package)
    found: dict[str, dict[str, Any]] = {}
    for slug, module in modules.items():
        if _current(index.get(slug), module):
            found[slug] = index[slug]
            continue
        try:
            found[slug] = describe(registry.get_paper(slug))
        except ValueError:  # recorded in registry.BROKEN (list warns); the index's entry, if any, stands in
            if slug in index:
                found[slug] = index[slug]
    for slug, paper in registry.registered().items():
        if slug not in found:
            found[slug] = describe(paper)
    return dict(sorted(found.items()))


def judged(found: dict[str, dict[str, Any]], store: Store) -> list[str]:
    """The papers of ``found`` whose verdicts ``store`` can make other than ``not run``, to be imported and judged:
    those with runs at the current code version, those whose full-only claims have a recorded run in the repository
    (``papers/<slug>/records/``), and those already imported in this process."""
    live = registry.registered()
    chosen = []
    for slug, info in found.items():
        path = _module_path(info["module"])
        if slug in live or path is None:
            chosen.append(slug)
        elif store.records(paper=slug, code_version=module_code_version(path)):
            chosen.append(slug)
        elif any(claim["setting"] == "full" and (records_dir(path) / f"{slug}_{claim['experiment']}_full.json")
                 .is_file() for claim in info["claims"]):
            chosen.append(slug)
    return chosen
