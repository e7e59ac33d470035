"""The agent's first-person frame: prismarine-viewer's page (js/view.js) in a headless Chromium.

VAB's MineRL observation is a 640x360 RGB picture of the player's view (origin_resolution in
VAB's jarvis.yaml), so that is the default size here. The page is three.js on WebGL, which a
headless Chromium without a GPU draws with SwiftShader, on the CPU: a frame costs CPU time, so the
page sleeps between frames (no animation loop running while the model thinks) and wakes for
``frame()``.

A picture taken at the wrong moment shows a half-meshed world or the camera still turning, so
``frame()`` first asks the page whether it shows the bot's world as it is now (js/view_page.js:
every chunk and block update sent has been meshed, textures are loaded, the camera is at the bot's
pose, and it has been drawn since) and fails with the page's own account of what is missing when
it does not within ``timeout_s``.

The class is async: the environment node's ``reset``/``step`` are coroutines on the node's event
loop, so it awaits ``frame()`` there once per round and hands the array to ``render()``; no thread
is needed.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from playwright.async_api import Browser, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

__all__ = ["CHROMIUM", "FRAME_SIZE", "FrameTiming", "View", "ViewError"]

#: the Chromium binary, as the rest of the project finds it (Debian's chromium package)
CHROMIUM = "/usr/bin/chromium"
#: (width, height): MineRL's and so VAB's observation size
FRAME_SIZE = (640, 360)

# WebGL without a GPU: ANGLE on SwiftShader, asked for by name (newer Chromiums stop falling back
# to it on their own). Timers and frames must not be throttled in a page nobody looks at.
CHROMIUM_ARGS = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--no-first-run",
                 "--mute-audio", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows"]


class ViewError(RuntimeError):
    """The view page could not be opened or did not draw in time; the message says what was missing."""


@dataclass(slots=True)
class FrameTiming:
    """Where the last ``frame()`` spent its time, in milliseconds."""

    draw_ms: float  # until the page had drawn the bot's world as it is now
    read_ms: float  # reading the picture back from the page
    total_ms: float
    meshes: int  # meshes in the scene (chunk sections and entities): a rough measure of the work drawn
    phases: dict[str, int]  # the page's own account of draw_ms: ms from the start to each phase's end
    meshing: dict[str, int]  # the meshing worker's ms spent meshing for this frame (meshMs), and sections meshed


class View:
    """A headless Chromium showing one bot's first-person view at ``url`` (js/view.js's
    ``startView``), read back on demand at a fixed ``size``."""

    def __init__(self, url: str, *, size: tuple[int, int] = FRAME_SIZE, executable: str = CHROMIUM,
                 timeout_s: float = 30.0) -> None:
        width, height = size
        if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
            raise ValueError(f"View size must be two positive integers (width, height), got {size!r}")
        if timeout_s <= 0:
            raise ValueError(f"View timeout_s must be positive, got {timeout_s!r}")
        self.url = url
        self.size = (width, height)
        self.executable = executable
        self.timeout_s = timeout_s
        self.last: FrameTiming | None = None
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._page: Page | None = None
        self._console: list[str] = []

    async def __aenter__(self) -> View:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch Chromium and open the view page (idempotent)."""
        if self._page is not None:
            return
        if not os.access(self.executable, os.X_OK):
            raise FileNotFoundError(f"Chromium not found at {self.executable} (View executable); install Debian's "
                                    "chromium package (bash setup.sh does) or point it at a Chromium binary")
        try:
            self._pw = await async_playwright().start()
            self._browser = await self._pw.chromium.launch(executable_path=self.executable, headless=True,
                                                           args=CHROMIUM_ARGS)
            width, height = self.size
            self._page = await self._browser.new_page(viewport={"width": width, "height": height},
                                                      device_scale_factor=1)
            self._page.on("console", self._keep_console)
            self._page.on("pageerror", lambda err: self._console.append(f"page error: {err}"))
            await self._page.goto(self.url, wait_until="load", timeout=self.timeout_s * 1000)
            if not await self._page.evaluate("() => typeof window.framebusView === 'object'"):
                raise ViewError(f"{self.url} is not a framebus view page (no window.framebusView): "
                                "is it served by js/view.js's startView?")
        except PlaywrightError as err:
            await self.close()
            raise ViewError(f"could not open the view page {self.url}: {err}{self._console_tail()}") from err
        except BaseException:
            await self.close()
            raise

    async def frame(self) -> np.ndarray:
        """The bot's view now: uint8, height x width x 3 (RGB). Waits until the page has drawn the
        world as it is now; ViewError past ``timeout_s``, naming what the page still lacked."""
        if self._page is None:
            await self.start()
        page = self._page
        assert page is not None
        started = time.perf_counter()
        timeout_ms = int(self.timeout_s * 1000)
        try:
            drawn: dict[str, Any] = await asyncio.wait_for(
                page.evaluate("ms => window.framebusView.waitDrawn(ms)", timeout_ms), self.timeout_s + 5)
            drawn_at = time.perf_counter()
            picture: dict[str, Any] = await page.evaluate("() => window.framebusView.pixels()")
        except PlaywrightError as err:
            raise ViewError(f"the view at {self.url} did not give a frame: {_first_line(err)}"
                            f"{self._console_tail()}") from err
        except asyncio.TimeoutError as err:
            raise ViewError(f"the view page at {self.url} stopped answering (no reply in {self.timeout_s + 5:.0f} s)"
                            f"{self._console_tail()}") from err
        finally:
            await self._sleep_page()
        width, height = picture["width"], picture["height"]
        if (width, height) != self.size:
            raise ViewError(f"the view page drew {width}x{height}, the view's size is {self.size[0]}x{self.size[1]}")
        rgb = np.frombuffer(base64.b64decode(picture["data"]), dtype=np.uint8).reshape(height, width, 3)
        done = time.perf_counter()
        self.last = FrameTiming(draw_ms=(drawn_at - started) * 1000, read_ms=(done - drawn_at) * 1000,
                                total_ms=(done - started) * 1000, meshes=int(drawn.get("meshes", 0)),
                                phases=dict(drawn.get("phases", {})), meshing=dict(drawn.get("meshing", {})))
        return rgb

    async def close(self) -> None:
        """Close the page, the browser and Playwright (idempotent); each step bounded, so that a
        browser that stopped answering cannot hold the episode's end."""
        page, browser, pw = self._page, self._browser, self._pw
        self._page = self._browser = self._pw = None
        for step in (page.close() if page else None, browser.close() if browser else None,
                     pw.stop() if pw else None):
            if step is None:
                continue
            try:
                await asyncio.wait_for(step, 10)
            except (PlaywrightError, asyncio.TimeoutError):
                pass  # gone already, or hung: stopping Playwright below ends its processes

    async def _sleep_page(self) -> None:
        if self._page is None:
            return
        try:
            await self._page.evaluate("() => window.framebusView && window.framebusView.sleep()")
        except PlaywrightError:
            pass  # the page is gone; the next frame() says so

    def _keep_console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self._console.append(f"console {message.type}: {message.text}")
            del self._console[:-20]

    def _console_tail(self) -> str:
        return ("; the page said: " + " | ".join(self._console[-5:])) if self._console else ""


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    # Playwright prefixes the page's own error with the call; the page's message is what names the cause
    for marker in ("Error: ", ):
        if marker in text:
            text = text.split(marker, 1)[1]
    return text.splitlines()[0] if text else type(err).__name__
