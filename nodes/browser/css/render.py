"""Full-page screenshots of a project folder in Chromium, served at a fake origin.

Why route interception and not file:// or a local server: the browser pack's rule is that a page
only reaches the hosts of its sandbox, and a fake origin answered from the working folder needs no
port, no server process and no file access by the browser. Every request goes through one route:
the origin's paths are answered from the folder (never outside it), everything else is aborted.
Each screenshot gets a fresh browser context, so no cache or state survives between renders.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from playwright.async_api import Browser, Playwright, Route, async_playwright

from nodes.browser.sandbox import Sandbox

__all__ = ["ORIGIN", "VIEWPORT", "Renderer"]

ORIGIN = "http://css-project.test"
VIEWPORT = (1280, 800)  # the width is VAB's; the height only matters below the full page
CHROMIUM = "/usr/bin/chromium"
_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--no-first-run", "--mute-audio", "--font-render-hinting=none",
         "--disable-lcd-text"]


class Renderer:
    """One headless Chromium; ``screenshot(folder)`` renders ``folder/index.html`` as a PNG."""

    def __init__(self, executable: str = CHROMIUM, viewport: tuple[int, int] = VIEWPORT) -> None:
        self.executable, self.viewport = executable, viewport
        self.sandbox = Sandbox([ORIGIN])
        self._pw: Playwright | None = None
        self._browser: Browser | None = None

    async def start(self) -> None:
        """Launch Chromium once; later calls are no-ops."""
        if self._browser is not None:
            return
        if not os.access(self.executable, os.X_OK):
            raise FileNotFoundError(f"Chromium not found at {self.executable}")
        self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=self.executable, headless=True, args=_ARGS)

    async def close(self) -> None:
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

    async def screenshot(self, folder: str | Path, page: str = "index.html") -> bytes:
        """PNG bytes of the full page ``folder/page`` at the renderer's width."""
        await self.start()
        assert self._browser is not None
        root = Path(folder).resolve()
        context = await self._browser.new_context(
            viewport={"width": self.viewport[0], "height": self.viewport[1]}, device_scale_factor=1,
            service_workers="block", java_script_enabled=False)
        try:
            await context.route("**/*", lambda route: self._serve(route, root))
            tab = await context.new_page()
            await tab.goto(f"{ORIGIN}/{page}", wait_until="load")
            return await tab.screenshot(full_page=True, animations="disabled", caret="hide")
        finally:
            await context.close()

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
