"""The documentation site as a reader meets it (issue 41).

The site is built with ``mkdocs build --strict`` into a temporary folder, then

- every page's images exist and are not empty, and every internal link
  resolves: to a page of the site, and to an anchor on that page (mkdocs
  ``--strict`` checks the Markdown links, not the anchors of every link);
- where Chromium is installed, a real headless browser opens every page:
  every image loads (``naturalWidth`` above 0), no page is wider than the
  window, and with ``$DOCS_SCREENSHOTS`` set a full-page screenshot of each is
  written there, to be looked at. Without Chromium (or without Playwright, which
  drives it) that part is skipped with a message; ``.ci/run`` installs both
  where it can.

Needs the ``docs`` extra (mkdocs); skipped without it. CI runs it after its
docs build (``.ci/run``).
"""

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs", reason="the docs extra builds the site")

#: Builds the whole site (about 10 s): slow.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell")


class _Page(HTMLParser):
    """The ids, links and images of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", folder],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stderr
    return folder


def _parse(path):
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(page_path, site, ref):
    """The file an internal ``ref`` of ``page_path`` points at, and its anchor."""
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc or ref.startswith(("mailto:", "javascript:")):
        return None, None
    if not parts.path:
        return page_path, unquote(parts.fragment)
    base = site if parts.path.startswith("/") else page_path.parent  # 404.html's
    target = (base / unquote(parts.path).lstrip("/")).resolve()
    if target.is_dir():
        target = target / "index.html"
    return target, unquote(parts.fragment)


def test_every_image_exists_and_every_internal_link_resolves(site):
    pages = sorted(site.rglob("*.html"))
    parsed = {path.resolve(): _parse(path) for path in pages}
    assert len(pages) > 20
    broken = []
    for path, page in parsed.items():
        name = path.relative_to(site.resolve())
        for src in page.images:
            target, _ = _target(path, site, src)
            if target is None:
                continue
            if not target.is_file() or not target.stat().st_size:
                broken.append(f"{name}: image {src} is missing")
        for href in page.links:
            target, anchor = _target(path, site, href)
            if target is None:
                continue
            if not target.exists():
                broken.append(f"{name}: link {href} leads nowhere")
            elif anchor and target.suffix == ".html":
                ids = parsed.get(target) or _parse(target)
                if anchor not in ids.ids:
                    broken.append(f"{name}: link {href} names no anchor there")
    assert not broken, "\n".join(broken)


def _chromium():
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    return None


def _pages(site):
    """Every page of the site, as a path relative to it (not the 404 page)."""
    return sorted(
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if page.name != "404.html"
    )


def test_every_page_in_a_headless_browser(site):
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no Chromium on this machine (looked for "
            f"{', '.join(CHROMIUM)}); install the system package chromium to "
            "look at the site in a real browser"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright drives the browser"
    )
    shots = os.environ.get("DOCS_SCREENSHOTS")  # none unless asked: seconds each
    if shots is not None:
        shots = Path(shots)
        shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        pages = _pages(site)
        assert "index.html" in pages and "user-guide/index.html" in pages
        for name in pages:
            page.goto((site / name).as_uri(), wait_until="load")
            unloaded = page.evaluate(
                "Array.from(document.images)"
                ".filter(i => !i.complete || i.naturalWidth === 0)"
                ".map(i => i.getAttribute('src'))"
            )
            assert unloaded == [], f"{name}: images that did not load: {unloaded}"
            assert page.title()
            wide = page.evaluate(
                "document.documentElement.scrollWidth"
                " - document.documentElement.clientWidth"
            )
            assert wide <= 0, f"{name}: {wide} px wider than the window"
            if shots is not None:  # for a person to look at
                shot = shots / (name.replace("/", "-").replace(".html", ".png"))
                page.screenshot(path=str(shot), full_page=True)
                assert shot.stat().st_size > 10_000
        browser.close()
