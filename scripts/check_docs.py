"""Checks of the built documentation site that Sphinx's own warnings do not make.

1. Every internal link and image of every page resolves: the file exists in the build, and
   an ``#anchor`` names an element of that page. External links are counted, not fetched
   (there is no internet here, and a site's availability is not this project's test).
2. Every public class and function of the package (``scripts/docs_api.py``) has an entry in
   the API reference (the built ``objects.inv``).

Usage: ``python scripts/check_docs.py build/docs/html``. Exits non-zero naming each problem.
"""

from __future__ import annotations

import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_api import public_modules, public_names


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(str(values[key]))
        for key in ("href", "src"):
            if values.get(key) and not (tag == "a" and key == "src"):
                self.links.append((tag, str(values[key])))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def check_links(site: Path) -> tuple[list[str], int, int]:
    pages = {path: _parse(path) for path in site.rglob("*.html")}
    problems, internal, external = [], 0, 0
    for path, page in pages.items():
        for tag, link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                external += parts.scheme in ("http", "https")
                continue
            internal += 1
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {tag} {link}"
            if not target.exists():
                problems.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: no #{parts.fragment} on that page")
    return problems, internal, external


def inventory(site: Path) -> set[str]:
    """The object names of the site's ``objects.inv``."""
    data = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = data.index(b"\n", header_end) + 1
    names = set()
    for line in zlib.decompress(data[header_end:]).decode().splitlines():
        name, role = line.split(" ", 2)[:2]
        if role.startswith("py:"):
            names.add(name)
    return names


def check_api(site: Path) -> tuple[list[str], int]:
    documented = inventory(site)
    wanted = [name for module in public_modules() for name in public_names(module)]
    missing = [f"no API reference entry: {name}" for name in wanted if name not in documented]
    return missing, len(wanted)


def main(site: Path) -> int:
    problems, internal, external = check_links(site)
    missing, public = check_api(site)
    for problem in problems + missing:
        print(problem)
    print(
        f"docs: {internal} internal links and images checked, {external} external not fetched; "
        f"{public - len(missing)} of {public} public classes and functions in the API reference"
    )
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
