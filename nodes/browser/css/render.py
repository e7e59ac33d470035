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
from urllib.parse import unquote, urlsplit

import numpy as np
from PIL import Image
from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Playwright, Route, async_playwright

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


@dataclass(slots=True)
class _View:
    """One folder's page: its context (routed to the folder), its tab and a CDP session on it."""

    context: BrowserContext
    tab: Page
    cdp: CDPSession
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Renderer:
    """One headless Chromium; ``screenshot(folder)`` renders ``folder/index.html`` as a PNG,
    ``pixels(folder)`` as RGB pixels (decoded in a thread, off the event loop)."""

    def __init__(self, executable: str = CHROMIUM, viewport: tuple[int, int] = VIEWPORT, keep: int = 4) -> None:
        self.executable, self.viewport, self.keep = executable, viewport, max(1, keep)
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
        for view in self._views.values():
            await view.context.close()
        self._views.clear()
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        if self._pw is not None:
            await self._pw.stop()
            self._pw = None

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
        view = await self._view(Path(folder).resolve(), page)
        async with view.lock:
            await view.tab.goto(f"{ORIGIN}/{page}", wait_until="load")
            size = await view.tab.evaluate(_PREPARE_JS)
            if not size:  # no body to measure: the viewport, as page.screenshot takes it
                size = {"width": self.viewport[0], "height": self.viewport[1]}
            fits = size["width"] <= self.viewport[0] and size["height"] <= self.viewport[1]
            shot = await view.cdp.send("Page.captureScreenshot", {
                "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": not fits,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        return base64.b64decode(shot["data"])

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
