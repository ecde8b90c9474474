"""Write the papers' static index, src/icml24/papers/index.json, from the registry (icml24.core.index).

    python tools/paper_index.py          # rewrite it (imports every paper module)
    python tools/paper_index.py --check  # exit 1 if it is stale (tests/core/test_index.py runs the same check)

`icml24 list` and `icml24 show` read the index instead of importing the paper modules (and with them torch and the
field packages); a paper module edited since the index was written is imported instead, so a stale index costs
time, never a wrong listing.
"""

from __future__ import annotations

import sys

from icml24.core import index


def main(argv: list[str]) -> int:
    path = index.index_path()
    try:
        text = index.render(index.build())
    except ValueError as exc:  # a paper module that fails to import
        print(f"error: {exc}", file=sys.stderr)
        return 1
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if "--check" in argv:
        if current != text:
            print(f"{path} is stale: run python tools/paper_index.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
