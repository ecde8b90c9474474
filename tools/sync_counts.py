"""Write the number of papers and claims, read from the registry, into README.md and pyproject.toml.

    python tools/sync_counts.py          # rewrite both files
    python tools/sync_counts.py --check  # exit 1 if either is stale (tests/test_readme.py runs this)

The counts are never typed by hand: README holds them between ``<!-- count -->`` markers and pyproject's
description is rebuilt from the same numbers.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_README_COUNT = re.compile(r"<!-- count -->.*?<!-- /count -->", re.S)
_PYPROJECT_DESCRIPTION = re.compile(r'^description = ".*"$', re.M)


def counts() -> tuple[int, int]:
    from icml24.core.registry import discover

    papers = discover()
    return len(papers), sum(len(p.claims) for p in papers.values())


def synced_texts() -> dict[Path, str]:
    """The README and pyproject as they should read, by path."""
    num_papers, num_claims = counts()
    phrase = f"{num_papers} papers and {num_claims} claims today"
    readme = ROOT / "README.md"
    pyproject = ROOT / "pyproject.toml"
    readme_text = _README_COUNT.sub(f"<!-- count -->{phrase}<!-- /count -->", readme.read_text())
    description = (f'description = "Faithful, fast implementations of ICML 2024 methods ({phrase}), '
                   'and a one-command check of their claims"')
    pyproject_text = _PYPROJECT_DESCRIPTION.sub(description, pyproject.read_text())
    return {readme: readme_text, pyproject: pyproject_text}


def main(argv: list[str]) -> int:
    stale = [path for path, text in synced_texts().items() if path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.name} is stale: run python tools/sync_counts.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in synced_texts().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
