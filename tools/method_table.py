"""Rewrite the README's "Where each method lives" table from the paper modules (icml24.core.locations).

    python tools/method_table.py          # tests/test_readme.py fails when the table is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- methods:start -->", "<!-- methods:end -->"


def table() -> str:
    from icml24.core import registry
    from icml24.core.locations import method_classes

    rows = ["| paper | module | classes |", "|---|---|---|"]
    for slug in sorted(registry.paper_modules()):
        paper = registry.get_paper(slug)  # a paper that fails to import stops the table (ValueError says why)
        for home, classes in method_classes(paper).items():
            rows.append(f"| {slug} | `{home}` | {', '.join(f'`{c}`' for c in classes)} |")
    return "\n".join(rows)


def rewrite(text: str) -> str:
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> int:
    readme = ROOT / "README.md"
    try:
        new = rewrite(readme.read_text())
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    readme.write_text(new)
    print("README.md: method table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
