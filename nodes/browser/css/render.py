"""Full-page screenshots of a project folder in Chromium, served at a fake origin.

Why route interception and not file:// or a local server: the browser pack's rule is that a page
only reaches the hosts of its sandbox, and a fake origin answered from the working folder needs no
port, no server process and no file access by the browser. Every request goes through one route:
the origin's paths are answered from the folder (never outside it), everything else is aborted.

Why one page per folder, kept between renders: a VAB-CSS step renders the same working folder again
after each edit, and a fresh browser context per render cost a new renderer process each time
(most of a step on a loaded machine). The page has JavaScript disabled and is answered only by the
route, so it keeps nothing between renders that a fresh context would not have: every render is a
new navigation, and routing disables the HTTP cache, so every file is read afresh from the folder.
The last ``keep`` folders keep their page; older ones are closed.

Why an edit reloads only its stylesheet: a VAB-CSS step changes one rule of one linked sheet, and
navigating again re-parses the HTML and re-requests every file for a page that only needs its
style recomputed. When nothing but linked stylesheets changed since the last render (their bytes
compared, every other file's mtime and size), those links load their file again (a new query
string, answered from the folder like any request) and the page is captured once they have loaded;
anything else (the HTML, an image, an imported sheet, a sheet that will not load) navigates afresh.
The pixels are the same either way (tests/test_css_render.py compares both on every project).

Why the screenshot is taken over CDP and not with ``page.screenshot``: the pixels are the same
(``Page.captureScreenshot`` of the full page, as Playwright takes it, after the same preparation:
finite animations finished, infinite ones cancelled, carets hidden, fonts loaded), but Chromium's
``optimizeForSpeed`` PNG encoding takes about half the time, and the preparation and the page size
take one evaluation instead of four round trips.
"""

from __future__ import annotations

import asyncio
import base64
import io
import mimetypes
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import numpy as np
from PIL import Image
from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Playwright, Route, async_playwright

from nodes.browser.chromium import close_chromium
from nodes.browser.sandbox import Sandbox

__all__ = ["ORIGIN", "VIEWPORT", "Renderer", "decode"]

ORIGIN = "http://css-project.test"
VIEWPORT = (1280, 800)  # the width is VAB's; the height only matters below the full page
CHROMIUM = "/usr/bin/chromium"
_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--no-first-run", "--mute-audio", "--font-render-hinting=none",
         "--disable-lcd-text"]

# What page.screenshot(full_page=True, animations="disabled", caret="hide") does in the page before
# capturing (Playwright's own preparation, in one evaluation), then the full page's size as
# Playwright measures it. Runs in Playwright's evaluation world, which works with JavaScript disabled.
_PREPARE_JS = """
async () => {
  const roots = [];
  const collect = (root) => {
    roots.push(root);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    do {
      const node = walker.currentNode;
      if (node instanceof Element && node.shadowRoot) collect(node.shadowRoot);
    } while (walker.nextNode());
  };
  collect(document);
  for (const root of roots)
    root.querySelectorAll('input,textarea,[contenteditable]').forEach(
      (el) => el.style.setProperty('caret-color', 'transparent', 'important'));
  const cancelled = new Set();
  const still = (root) => {
    for (const a of root.getAnimations()) {
      if (!a.effect || a.playbackRate === 0 || cancelled.has(a)) continue;
      try {
        if (Number.isFinite(a.effect.getComputedTiming().endTime)) a.finish();
        else { a.cancel(); cancelled.add(a); }
      } catch (e) {}
    }
  };
  for (const root of roots) {
    still(root);
    root.addEventListener('transitionrun', () => still(root));
    root.addEventListener('animationstart', () => still(root));
  }
  try { await document.fonts.ready; } catch (e) {}
  const b = document.body, d = document.documentElement;
  if (!b || !d) return null;
  return {width: Math.max(b.scrollWidth, d.scrollWidth, b.offsetWidth, d.offsetWidth, b.clientWidth, d.clientWidth),
          height: Math.max(b.scrollHeight, d.scrollHeight, b.offsetHeight, d.offsetHeight, b.clientHeight,
                           d.clientHeight)};
}
"""


def decode(png: bytes) -> np.ndarray:
    """The RGB pixels of PNG bytes (uint8, height x width x 3)."""
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


# The page's stylesheet links, by the folder path they load (percent-decoded, as ``_serve`` reads it).
_LINKS_JS = """
() => [...document.querySelectorAll('link[rel~="stylesheet"]')].map((l) => new URL(l.href).pathname)
"""

# Load the links of ``paths`` again (a new query string, so the route serves the file afresh); the
# page's JavaScript is off, and with it events and timers, so whether the new sheets have loaded is
# polled (_LOADED_JS) rather than awaited.
_RESTYLE_JS = """
([paths, version]) => {
  let n = 0;
  for (const l of document.querySelectorAll('link[rel~="stylesheet"]')) {
    if (!paths.includes(new URL(l.href).pathname)) continue;
    const url = new URL(l.href);
    url.searchParams.set('v', String(version));
    l.href = url.href;
    n += 1;
  }
  return n;
}
"""
_LOADED_JS = """
(paths) => [...document.querySelectorAll('link[rel~="stylesheet"]')]
  .filter((l) => paths.includes(new URL(l.href).pathname))
  .every((l) => l.sheet && l.sheet.href === l.href)
"""
RESTYLE_POLL_S = 0.002
RESTYLE_TIMEOUT_S = 5.0  # a sheet that does not load in this time: the page is loaded afresh instead


@dataclass(slots=True)
class _Files:
    """What a folder held when its page was last rendered: every file's (mtime, size), and the
    bytes of its stylesheets (an edit within one mtime tick keeps the size of a file, not its bytes)."""

    stats: dict[str, tuple[int, int]]
    sheets: dict[str, bytes]

    @classmethod
    def read(cls, root: Path) -> _Files:
        stats, sheets = {}, {}
        for path in sorted(root.rglob("*")):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                st = path.stat()
                stats[rel] = (st.st_mtime_ns, st.st_size)
                if path.suffix.lower() == ".css":
                    sheets[rel] = path.read_bytes()
        return cls(stats, sheets)

    def changed_sheets(self, now: _Files) -> set[str] | None:
        """The stylesheets that changed since, or None where anything else did (or nothing did)."""
        if self.stats.keys() != now.stats.keys():
            return None
        others = [rel for rel in self.stats if rel not in self.sheets and self.stats[rel] != now.stats[rel]]
        changed = {rel for rel, text in now.sheets.items() if self.sheets.get(rel) != text}
        return changed if changed and not others else None


@dataclass(slots=True)
class _View:
    """One folder's page: its context (routed to the folder), its tab and a CDP session on it, and
    the files and stylesheet links it was rendered from (``None`` until the first load)."""

    context: BrowserContext
    tab: Page
    cdp: CDPSession
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    files: _Files | None = None
    links: set[str] = field(default_factory=set)  # the linked stylesheets, folder-relative
    version: int = 0


class Renderer:
    """One headless Chromium; ``screenshot(folder)`` renders ``folder/index.html`` as a PNG,
    ``pixels(folder)`` as RGB pixels (decoded in a thread, off the event loop)."""

    def __init__(self, executable: str = CHROMIUM, viewport: tuple[int, int] = VIEWPORT, keep: int = 4,
                 restyle: bool = True) -> None:
        self.executable, self.viewport, self.keep, self.restyle = executable, viewport, max(1, keep), restyle
        self.sandbox = Sandbox([ORIGIN])
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._views: OrderedDict[tuple[Path, str], _View] = OrderedDict()
        self._opening = asyncio.Lock()  # two first renders of one folder open one page

    async def start(self) -> None:
        """Launch Chromium once; later calls are no-ops."""
        if self._browser is not None:
            return
        if not os.access(self.executable, os.X_OK):
            raise FileNotFoundError(f"Chromium not found at {self.executable}")
        self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=self.executable, headless=True, args=_ARGS)

    async def close(self) -> None:
        await close_chromium(self._pw, self._browser, [view.context for view in self._views.values()])
        self._views.clear()
        self._pw = self._browser = None

    async def __aenter__(self) -> Renderer:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _view(self, root: Path, page: str) -> _View:
        """The page kept for ``root/page``, opened when missing; the least recently used beyond
        ``keep`` are closed."""
        await self.start()
        async with self._opening:
            return await self._open(root, page)

    async def _open(self, root: Path, page: str) -> _View:
        assert self._browser is not None
        key = (root, page)
        if key in self._views:
            self._views.move_to_end(key)
            return self._views[key]
        context = await self._browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]}, device_scale_factor=1,
            service_workers="block", java_script_enabled=False)
        await context.route("**/*", lambda route: self._serve(route, root))
        tab = await context.new_page()
        view = self._views[key] = _View(context, tab, await context.new_cdp_session(tab))
        while len(self._views) > self.keep:
            _, old = self._views.popitem(last=False)
            async with old.lock:
                await old.context.close()
        return view

    async def screenshot(self, folder: str | Path, page: str = "index.html") -> bytes:
        """PNG bytes of the full page ``folder/page`` at the renderer's width, loaded afresh."""
        root = Path(folder).resolve()
        view = await self._view(root, page)
        async with view.lock:
            await self._load(view, root, page)
            size = await view.tab.evaluate(_PREPARE_JS)
            if not size:  # no body to measure: the viewport, as page.screenshot takes it
                size = {"width": self.viewport[0], "height": self.viewport[1]}
            fits = size["width"] <= self.viewport[0] and size["height"] <= self.viewport[1]
            shot = await view.cdp.send("Page.captureScreenshot", {
                "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": not fits,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        return base64.b64decode(shot["data"])

    async def _load(self, view: _View, root: Path, page: str) -> None:
        """Bring the page up to date with the folder: where only linked stylesheets changed since the
        last render (a VAB-CSS edit), load those sheets again in place; otherwise navigate afresh."""
        files = await asyncio.to_thread(_Files.read, root)
        changed = view.files.changed_sheets(files) if self.restyle and view.files is not None else None
        view.files = None  # until this load is known to have worked
        if changed is not None and changed <= view.links:
            view.version += 1
            paths = ["/" + quote(rel) for rel in sorted(changed)]
            if await view.tab.evaluate(_RESTYLE_JS, [paths, view.version]) >= len(paths):
                deadline = asyncio.get_running_loop().time() + RESTYLE_TIMEOUT_S
                while asyncio.get_running_loop().time() < deadline:
                    if await view.tab.evaluate(_LOADED_JS, paths):
                        view.files = files
                        return
                    await asyncio.sleep(RESTYLE_POLL_S)
        await view.tab.goto(f"{ORIGIN}/{page}", wait_until="load")
        view.links = {unquote(path).lstrip("/") for path in await view.tab.evaluate(_LINKS_JS)}
        view.files = files

    async def pixels(self, folder: str | Path, page: str = "index.html") -> np.ndarray:
        """RGB pixels of the full page ``folder/page``; the PNG is decoded in a worker thread."""
        return await asyncio.to_thread(decode, await self.screenshot(folder, page))

    async def _serve(self, route: Route, root: Path) -> None:
        """Answer the fake origin from ``root``; abort what the sandbox refuses or the folder lacks."""
        url = route.request.url
        if self.sandbox.refusal(url, navigation=False) is not None:
            await route.abort("blockedbyclient")
            return
        path = (root / unquote(urlsplit(url).path).lstrip("/")).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            await route.fulfill(status=404, body="not found", content_type="text/plain")
            return
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/"):
            kind += "; charset=utf-8"
        await route.fulfill(status=200, body=path.read_bytes(), content_type=kind)
