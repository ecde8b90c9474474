"""Record what each quickstart prints, below it on the page, so the site shows it and it cannot go stale.

    python tools/docs_outputs.py           # run every ```python block of docs/ that prints; write its Output block
    python tools/docs_outputs.py --check   # exit 1 if a shown output no longer matches what its block prints

A block's output is the ```text title="Output" fence right after it (blank lines between allowed).
``tests/test_docs.py`` runs every block and compares with ``matches``: the text around the numbers exactly (spaces
collapsed) and each number to the precision it is shown at, give or take one unit of its last shown digit (a value on
a rounding boundary may print either way on another machine's kernels). A quickstart prints only the digits its
result can carry across machines (a trained model's accuracy to 3 decimals, a diffusion sampler's mean to 1).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = ("_claims", "_record", "_deviations")
OUTPUT_FENCE = '```text title="Output"'
# a python block, then optionally its output block (only blank lines between them)
_BLOCK = re.compile(r"^```python[^\n]*\n(?P<code>.*?)^```\n(?P<gap>\n*)"
                    r'(?P<output>^```text title="Output"\n(?P<shown>.*?)^```\n)?', re.S | re.M)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if not set(p.relative_to(DOCS).parts) & set(GENERATED))


def blocks(text: str) -> list[re.Match]:
    """Every python block of a page with its output block (``match['shown']`` is None when it has none)."""
    return list(_BLOCK.finditer(text))


def run_block(code: str, where: str) -> str:
    """What the block prints (stdout), run as written in a fresh namespace with torch on one thread."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, where, "exec"), {"__name__": "__docs__"})
    finally:
        torch.set_num_threads(threads)
    return printed.getvalue()


def _unit(number: str) -> float:
    """One unit of the last digit shown: 0.001 for '0.512', 1 for '186', 1e-05 for '1.0e-05'."""
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) - decimals)


def matches(shown: str, printed: str) -> str | None:
    """``None`` when ``printed`` agrees with ``shown`` (text exactly, numbers to the shown precision), else why not."""
    shown_text, printed_text = (" ".join(_NUMBER.sub("#", s).split()) for s in (shown, printed))
    if shown_text != printed_text:
        one_line = (" ".join(s.split())[:300] for s in (shown, printed))
        return "the text differs:\n  shown:   {}\n  printed: {}".format(*one_line)
    for a, b in zip(_NUMBER.findall(shown), _NUMBER.findall(printed)):
        if abs(float(a) - float(b)) > _unit(a) * (1 + 1e-9):
            return f"{b} printed where {a} is shown (one unit of its last digit is {_unit(a):g})"
    return None


def rewrite(page: Path) -> bool:
    """Run the page's printing blocks and write their output blocks; True when the page changed."""
    text = page.read_text()
    pieces, last = [], 0
    for i, block in enumerate(blocks(text)):
        printed = run_block(block["code"], f"{page.relative_to(ROOT)}:python block {i + 1}")
        end = block.start("output") if block["output"] else block.end()
        pieces.append(text[last:end])
        if printed.strip():
            if not block["output"]:
                pieces.append("" if block["gap"] else "\n")  # a blank line between the code and its output
            pieces.append(f"{OUTPUT_FENCE}\n{printed.rstrip()}\n```\n")
            if not block["output"]:
                pieces.append("\n")  # and one after it, before the page goes on
        last = block.end()
    new = "".join(pieces) + text[last:]
    if new != text:
        page.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a shown output is stale; write nothing")
    args = parser.parse_args(argv)
    stale = []
    for page in pages():
        if args.check:
            for i, block in enumerate(blocks(page.read_text())):
                where = f"{page.relative_to(ROOT)} block {i + 1}"
                printed = run_block(block["code"], where)
                why = (matches(block["shown"] or "", printed) if printed.strip() or block["shown"] else None)
                if why:
                    stale.append(f"{where}: {why}")
        elif rewrite(page):
            print(f"wrote the outputs of {page.relative_to(ROOT)}")
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
