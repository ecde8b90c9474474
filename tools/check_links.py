"""Check every internal link of the built documentation site (offline).

    python tools/check_links.py site     # exit 1 and one line per broken link

Every ``href`` and ``src`` of every HTML page under the site folder that is not an external URL (``http(s):``,
``mailto:``, ...) must name a file inside the site (a folder means its ``index.html``; a path starting with ``/``
is read from the site's root), and a ``#fragment`` must
be an ``id`` (or ``name``) on the page it points to. External links are counted, not fetched.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag != "meta" else ():
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) is not None and not (tag == "link" and attrs.get("rel") in ("preconnect",)):
                self.links.append(attrs[key])


def _parse(path: Path, cache: dict[Path, _Page]) -> _Page:
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(errors="replace"))
        cache[path] = page
    return cache[path]


def broken_links(site: Path) -> tuple[list[str], int, int]:
    """(one line per broken link, internal links checked, external links seen)."""
    site = site.resolve()
    cache: dict[Path, _Page] = {}
    broken, internal, external = [], 0, 0
    for html in sorted(site.rglob("*.html")):
        for link in _parse(html, cache).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                external += parts.scheme in ("http", "https")
                continue
            internal += 1
            if not parts.path:
                target = html
            elif parts.path.startswith("/"):  # site-absolute (mkdocs' 404 page): from the site's root
                target = (site / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (html.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{html.relative_to(site)}: {link}"
            if site not in target.parents and target != site:
                broken.append(f"{where} (leaves the site)")
            elif not target.is_file():
                broken.append(f"{where} (no file {target.relative_to(site)})")
            elif parts.fragment and target.suffix == ".html" \
                    and unquote(parts.fragment) not in _parse(target, cache).ids:
                broken.append(f"{where} (no anchor #{parts.fragment} in {target.relative_to(site)})")
    return broken, internal, external


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    site = Path(argv[0] if argv else "site")
    if not (site / "index.html").is_file():
        print(f"{site}: no built site (run make docs)", file=sys.stderr)
        return 2
    broken, internal, external = broken_links(site)
    for line in broken:
        print(line, file=sys.stderr)
    pages = len(list(site.rglob("*.html")))
    print(f"{pages} pages, {internal} internal links checked, {len(broken)} broken, {external} external not fetched")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
