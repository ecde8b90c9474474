"""Write the number of papers and claims, read from the registry, into README.md and pyproject.toml.

    python tools/sync_counts.py          # rewrite both files
    python tools/sync_counts.py --check  # exit 1 if either is stale (tests/test_readme.py runs this)

The counts are never typed by hand: README holds them between ``<!-- count -->`` markers and pyproject's
description is rebuilt from the same numbers; the claims the committed results snapshot judges as holding go
between ``<!-- verdicts -->`` markers.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_README_COUNT = re.compile(r"<!-- count -->.*?<!-- /count -->", re.S)
_README_VERDICTS = re.compile(r"<!-- verdicts -->.*?<!-- /verdicts -->", re.S)
_PYPROJECT_DESCRIPTION = re.compile(r'^description = ".*"$', re.M)


def counts() -> tuple[int, int]:
    from icml24.core.registry import discover

    papers = discover()
    return len(papers), sum(len(p.claims) for p in papers.values())


def snapshot_phrase() -> str:
    """What the committed results snapshot judges: claims holding at quick and at full, the papers with a full run
    (the same verdicts as the docs home's table, computed from the snapshot's per-seed rows)."""
    from icml24.core.registry import discover
    from icml24.core.snapshot import SNAPSHOT_FOLDER, snapshot_store
    from icml24.core.summary import evaluate_per_setting, held_at

    papers = discover()
    if not any(SNAPSHOT_FOLDER.glob("*.json")):
        return "no results snapshot is committed yet"
    store, stale = snapshot_store(papers, SNAPSHOT_FOLDER)
    with store:
        results = {slug: evaluate_per_setting(paper, store) for slug, paper in papers.items()}
    quick = [held_at(r["quick"], "quick") for r in results.values()]
    full = {slug: held_at(r["full"], "full") for slug, r in results.items() if held_at(r["full"], "full")[1]}
    held, judged = (sum(c[i] for c in quick) for i in (0, 1))
    text = f"at quick settings {held} of the {judged} claims judged hold"
    if full:
        text += (f"; at the paper's scale {sum(h for h, _ in full.values())} of {sum(j for _, j in full.values())} "
                 f"hold, over the {len(full)} {'paper' if len(full) == 1 else 'papers'} with a recorded full run "
                 f"({', '.join(sorted(full))})")
    return text + (f" ({len(stale)} experiments judged on STALE rows)" if stale else "")


def synced_texts() -> dict[Path, str]:
    """The README and pyproject as they should read, by path."""
    num_papers, num_claims = counts()
    phrase = f"{num_papers} papers and {num_claims} claims today"
    readme = ROOT / "README.md"
    pyproject = ROOT / "pyproject.toml"
    readme_text = _README_COUNT.sub(f"<!-- count -->{phrase}<!-- /count -->", readme.read_text())
    readme_text = _README_VERDICTS.sub(f"<!-- verdicts -->{snapshot_phrase()}<!-- /verdicts -->", readme_text)
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
