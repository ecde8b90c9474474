"""Read every paper page of the built site in headless Chromium and check that each claim row shows its verdicts.

    python tools/check_site_verdicts.py [site] [--browser /usr/bin/chromium]

Serves ``site/`` (``make docs`` builds it) on localhost, loads each ``papers/<slug>/`` page in headless Chromium
(``--dump-dom``: the page as the browser rendered it, after its scripts) and reads the claims table. A row passes
when its quick cell is a verdict (holds, fails, error; a full-setting claim points to its paper-scale cell), its
paper-scale cell is a verdict or says "no full run recorded" with the measured cost of a seed, and no cell says
"not run yet". Prints one line per page and the totals; exit status 1 when a row does not pass, 2 when no browser
or no built site is there (install Debian's ``chromium``, run ``make docs``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html.parser
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICT_WORDS = ("holds", "fails", "error")
QUICK, FULL = "Verdict (quick)", "Verdict (paper scale)"
# Chromium in a closed network: no background connections, no first-run work (see the machine's notes)
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


class _Tables(html.parser.HTMLParser):
    """The text of every table cell, as tables -> rows -> cells."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def claim_rows(dom: str) -> list[dict[str, str]]:
    """The claims table's rows (header -> cell text) of one rendered page; none when it has no claims table."""
    parser = _Tables()
    parser.feed(dom)
    for table in parser.tables:
        if table and QUICK in table[0]:
            header = table[0]
            return [dict(zip(header, row, strict=False)) for row in table[1:] if len(row) == len(header)]
    return []


def markdown_claim_rows(text: str) -> list[dict[str, str]]:
    """The same rows read from a generated ``docs/papers/_claims/<slug>.md`` (before mkdocs renders it): cells split
    on unescaped pipes, bold and code marks dropped as the browser's text drops them."""
    table = [[" ".join(c.replace("\\|", "|").replace("**", "").replace("`", "").split())
              for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
             for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]
    for start, row in enumerate(table):
        if QUICK in row:
            return [dict(zip(row, cells, strict=False)) for cells in table[start + 1:] if len(cells) == len(row)]
    return []


def row_problems(row: dict[str, str]) -> list[str]:
    """What a claim row lacks: a quick verdict, a paper-scale verdict or the measured reason for its absence, and
    no "not run yet" in any cell."""
    problems = []
    quick, full = row.get(QUICK, ""), row.get(FULL, "")
    if not (quick.startswith(VERDICT_WORDS) or quick.startswith("- (a full-setting claim")
            or quick.startswith("STALE")):
        problems.append(f"no quick verdict ({quick[:80]!r})")
    measured = "without finishing" in full or "per seed recorded" in full
    if not (full.startswith(VERDICT_WORDS) or full.startswith("STALE") or
            (full.startswith("no full run recorded") and measured)):
        problems.append(f"no paper-scale verdict or measured cost ({full[:80]!r})")
    problems += [f"{name}: not run yet" for name, text in row.items() if "not run yet" in text]
    return problems


def render(url: str, browser: str) -> str:
    """The DOM of ``url`` after headless Chromium rendered it."""
    with tempfile.TemporaryDirectory(prefix="icml24-chromium-") as profile:
        done = subprocess.run([browser, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                              capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or "<table" not in done.stdout and "<body" not in done.stdout:
        raise RuntimeError(f"{browser} could not render {url} (exit status {done.returncode}): "
                           f"{done.stderr.strip()[-300:]}")
    return done.stdout


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` over HTTP on a free localhost port, for as long as the block runs; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per page is printed by the checker, not one per request
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--browser", default=shutil.which("chromium") or shutil.which("chromium-browser") or "")
    args = parser.parse_args(argv)
    pages = sorted(p.parent.name for p in (args.site / "papers").glob("*/index.html"))
    if not pages:
        print(f"error: no built paper pages under {args.site}/papers: run make docs first", file=sys.stderr)
        return 2
    if not args.browser or not Path(args.browser).exists():
        print("error: no Chromium found: install Debian's chromium (apt-get install chromium) or pass --browser",
              file=sys.stderr)
        return 2
    rows_total, failing = 0, 0
    with serve(args.site) as base:
        for slug in pages:
            rows = claim_rows(render(f"{base}/papers/{slug}/", args.browser))
            problems = [(i, p) for i, row in enumerate(rows, 1) for p in row_problems(row)]
            rows_total += len(rows)
            failing += len({i for i, _ in problems})
            verdicts = sum(row.get(QUICK, "").startswith(VERDICT_WORDS) for row in rows)
            full = sum(row.get(FULL, "").startswith(VERDICT_WORDS) for row in rows)
            print(f"{slug}: {len(rows)} claim rows, {verdicts} quick verdicts, {full} paper-scale verdicts"
                  + "".join(f"\n  claim {i}: {p}" for i, p in problems))
    print(f"{len(pages)} pages read in headless Chromium ({args.browser}): {rows_total} claim rows, "
          f"{failing} without their verdicts")
    return 1 if failing or not rows_total else 0


if __name__ == "__main__":
    sys.exit(main())
