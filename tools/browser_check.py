"""Render every page of the built site (``make docs`` -> site/) in headless Chromium and check what a reader sees.

    python tools/browser_check.py [site] [--screenshots DIR]

Per page: the browser's DOM after scripts ran has a title heading, every code block is highlighted (Pygments spans
inside ``.highlight``), and no page shows a Python traceback or mkdocstrings' "could not be found". Needs Debian's
``chromium`` (``apt-get install chromium``); exits 2 without it, 1 when a page fails.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path


def render(browser: str, page: Path) -> str:
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.resolve().as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120).stdout


def problems(dom: str) -> list[str]:
    found = []
    if not re.search(r"<h1[ >]", dom):
        found.append("no <h1> title")
    blocks = dom.count('class="highlight"')
    spans = len(re.findall(r'<span class="(?:k|kn|kc|n|nb|s\d?|mi|mf|o|p)">', dom))
    if blocks and not spans:
        found.append(f"{blocks} code block(s) without highlighting")
    for marker in ("Traceback (most recent call last)", "could not be found"):
        if marker in dom:
            found.append(f"shows {marker!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="site", type=Path)
    parser.add_argument("--screenshots", type=Path, default=None, help="also save a PNG of each page here")
    args = parser.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("error: no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    pages = sorted(p for p in args.site.rglob("index.html") if "assets" not in p.parts)
    failed, highlighted = 0, 0
    for page in pages:
        dom = render(browser, page)
        highlighted += dom.count('class="highlight"')
        issues = problems(dom) if dom else ["the browser returned no DOM"]
        if issues:
            failed += 1
            print(f"{page.relative_to(args.site)}: {'; '.join(issues)}")
        if args.screenshots is not None:
            args.screenshots.mkdir(parents=True, exist_ok=True)
            name = "_".join(page.relative_to(args.site).parts[:-1]) or "home"
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600",
                            f"--screenshot={args.screenshots / (name + '.png')}", page.resolve().as_uri()],
                           capture_output=True, timeout=120)
    print(f"{len(pages)} pages rendered in {Path(browser).name}, {highlighted} highlighted code blocks, "
          f"{failed} with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
