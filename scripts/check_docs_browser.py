"""``make docs-check``: the built site as a reader sees it, in Debian's Chromium.

Serves ``build/docs/html`` on the loopback (a free port), opens every page with Playwright
driving ``/usr/bin/chromium`` (Playwright's own browser download does not work here), and
fails when a page logs a console error, fails to load a resource of the site, or shows an
image that did not render. Then types ``AIHCCreateJobOperator`` into the search box and
requires a result linking to its reference entry. Saves two screenshots (the operator's
how-to page and the search results) under ``--screenshots``.

Usage: ``python scripts/check_docs_browser.py build/docs/html --screenshots DIR``.
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SEARCHED = "AIHCCreateJobOperator"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(site: Path) -> ThreadingHTTPServer:
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_page(page: Page, url: str) -> list[str]:
    """What is wrong with one page: console errors, failed requests, broken images."""
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status}: {r.url}"))
    page.goto(url, wait_until="load")
    broken = page.evaluate(
        "() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
        ".map(i => i.getAttribute('src'))"
    )
    problems += [f"broken image: {src}" for src in broken]
    return problems


def search(page: Page, base: str, shot: Path) -> str | None:
    """Search as a reader does; a problem, or None when the operator's entry is found."""
    page.goto(f"{base}/index.html")
    box = page.locator("input[name=q]").first
    box.fill(SEARCHED)
    box.press("Enter")
    page.wait_for_url("**/search.html*")
    hit = page.locator(f"#search-results a:has-text('{SEARCHED}')").first
    try:
        hit.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path=str(shot), full_page=True)
        return f"the search for {SEARCHED} found nothing (screenshot: {shot})"
    page.screenshot(path=str(shot), full_page=False)
    href = hit.get_attribute("href") or ""
    return None if "airflow_provider_aihc" in href or "create_job" in href else f"hit: {href}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("site", type=Path)
    parser.add_argument("--screenshots", type=Path, default=Path("build/docs-screenshots"))
    args = parser.parse_args()
    pages = sorted(p.relative_to(args.site).as_posix() for p in args.site.rglob("*.html"))
    pages = [p for p in pages if not p.startswith("_")]
    args.screenshots.mkdir(parents=True, exist_ok=True)
    server = serve(args.site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    failures: list[str] = []
    failed_pages: set[str] = set()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                for name in pages:
                    page = context.new_page()
                    problems = check_page(page, f"{base}/{name}")
                    failures += [f"{name}: {p}" for p in problems]
                    failed_pages |= {name} if problems else set()
                    if name == "operators/create_job.html":
                        shot = args.screenshots / "create-job-operator.png"
                        page.screenshot(path=str(shot))
                    page.close()
                page = context.new_page()
                problem = search(page, base, args.screenshots / "search.png")
                if problem:
                    failures.append(problem)
                    failed_pages.add("search")
            finally:
                browser.close()
    finally:
        server.shutdown()
    for failure in failures:
        print(failure)
    print(
        f"docs-check: {len(pages)} pages opened in Chromium and the search for {SEARCHED}; "
        f"screenshots in {args.screenshots}"
    )
    checks = len(pages) + 1
    print(f"docs-check: {checks - len(failed_pages)} passed, {len(failed_pages)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
