"""One browser and its episodes, with no bus in sight: what the environment node drives, and what
a benchmark drives directly to measure the bus's overhead against plain Playwright.

``BrowserSession`` owns Chromium (one per process). ``open_episode`` makes a fresh context for a
task (viewport, geolocation, login cookies, one tab per start URL) behind the sandbox's route;
the returned ``BrowserEpisode`` executes parsed actions, captures observations and answers the
judges' questions about its final page.
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from nodes.browser import axtree, som
from nodes.browser.actions import Action, ActionError, playwright_keys
from nodes.browser.chromium import close_chromium
from nodes.browser.sandbox import Sandbox
from nodes.browser.settle import WATCH_JS, RequestTracker, settle

__all__ = ["AND", "BrowserEpisode", "BrowserSession", "Capture", "EpisodeSpec", "Settings"]

CAPTURE_TRIES = 3  # reads of a page whose document keeps being replaced, before the error stands
START_RETRY_S = 15.0  # how long a start page on a site that refuses connections is tried again

AND = " |AND| "
CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage", "--no-first-run", "--mute-audio",
                 "--disable-features=Translate,MediaRouter,OptimizationHints"]


@dataclass(frozen=True, slots=True)
class Settings:
    """How the browser behaves, the same for every episode."""

    executable: str = "/usr/bin/chromium"
    settle_timeout_s: float = 5.0
    quiet_ms: int = 30
    frame_quality: int | None = None  # None: frames from lossless PNG; 1-100: from JPEG at that quality


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """What one episode starts from: VWA's per-task browser fields, placeholders already resolved."""

    start_urls: tuple[str, ...] = ("about:blank",)
    viewport: tuple[int, int] = (1280, 2048)
    geolocation: dict[str, float] | None = None
    storage_state: str | dict[str, Any] | None = None  # a Playwright storage-state file, or the state itself
    intent: str = ""
    images: tuple[str, ...] = ()


@dataclass(slots=True)
class Capture:
    """One observation of the focused tab; ``targets`` maps the ids an action may name to the
    viewport point a click on that id hits."""

    data: dict[str, Any] = field(default_factory=dict)
    frame: np.ndarray | None = None
    targets: dict[int, tuple[float, float]] = field(default_factory=dict)
    id_space: str | None = None
    marks: som.SomPage | None = None


class BrowserSession:
    """Playwright and one headless Chromium, started once and shared by every episode."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._pw: Playwright | None = None
        self._browser: Browser | None = None

    async def start(self) -> None:
        if self._browser is not None:
            return
        if not os.access(self.settings.executable, os.X_OK):
            raise FileNotFoundError(f"Chromium not found at {self.settings.executable} (param chromium); "
                                    "install Debian's chromium package or point the param at a Chromium binary")
        self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=self.settings.executable, headless=True,
                                                       args=CHROMIUM_ARGS)

    async def close(self) -> None:
        await close_chromium(self._pw, self._browser)
        self._pw = self._browser = None

    async def open_episode(self, spec: EpisodeSpec, sandbox: Sandbox) -> BrowserEpisode:
        """A fresh context for ``spec``: its tabs opened and settled, the first one focused."""
        await self.start()
        assert self._browser is not None
        options: dict[str, Any] = {"viewport": {"width": spec.viewport[0], "height": spec.viewport[1]},
                                   "device_scale_factor": 1, "accept_downloads": False,
                                   "service_workers": "block"}
        if spec.geolocation is not None:
            options.update(geolocation=spec.geolocation, permissions=["geolocation"])
        if spec.storage_state is not None:
            if isinstance(spec.storage_state, str) and not Path(spec.storage_state).is_file():
                raise FileNotFoundError(f"storage_state {spec.storage_state} does not exist (the login cookies "
                                        "of the task's site; WebArena and VWA make them with auto_login.py)")
            options["storage_state"] = spec.storage_state
        context = await self._browser.new_context(**options)
        await context.add_init_script(WATCH_JS)  # what settle() reads: the page's own pending work
        episode = BrowserEpisode(context, sandbox, self.settings, spec)
        await episode.open_tabs()
        return episode


class BrowserEpisode:
    """One episode's browser context: its tabs, the focused one, and the last observation's ids."""

    def __init__(self, context: BrowserContext, sandbox: Sandbox, settings: Settings, spec: EpisodeSpec) -> None:
        self.context, self.sandbox, self.settings, self.spec = context, sandbox, settings, spec
        self.pages: list[Page] = []
        self.current = 0
        self.tracker = RequestTracker()
        self.blocked: list[tuple[str, str]] = []  # (url, why) of refused navigations since the last action
        self._cdp: dict[Page, Any] = {}
        self.tracker.attach(context)
        context.on("page", self._opened)

    # -- tabs -------------------------------------------------------------------------------------
    def _opened(self, page: Page) -> None:
        """Every new page of the context (a new_tab, a target=_blank link, window.open) is a tab the
        agent sees; it never leaves the context, so the sandbox's route covers it."""
        if page not in self.pages:
            self.pages.append(page)
            page.on("close", self._closed)

    def _closed(self, page: Page) -> None:
        if page in self.pages:
            index = self.pages.index(page)
            self.pages.remove(page)
            if index < self.current or self.current >= len(self.pages):
                self.current = max(0, self.current - 1)
        self._cdp.pop(page, None)

    @property
    def page(self) -> Page:
        return self.pages[self.current]

    async def open_tabs(self) -> None:
        await self.context.route("**/*", self._route)
        for url in self.spec.start_urls:
            page = await self.context.new_page()
            self._opened(page)
            if url != "about:blank":
                if (why := self.sandbox.refusal(url)) is not None:
                    raise ValueError(f"start URL {url}: {why}")
                await self._open_start(page, url)
        for page in self.pages:
            await self._settle(page)
        self.current = 0
        await self.page.bring_to_front()

    async def _open_start(self, page: Page, url: str) -> None:
        """A start page whose site refuses connections is tried again for START_RETRY_S: a site node
        that crashed is back within a second or two (its supervisor restarts it), and an episode
        starting meanwhile should wait for it, not take the env down."""
        deadline = asyncio.get_running_loop().time() + START_RETRY_S
        while True:
            try:
                await page.goto(url, wait_until="commit", timeout=self.settings.settle_timeout_s * 1000)
                return
            except PlaywrightError as exc:
                if "ERR_CONNECTION_REFUSED" not in str(exc) or asyncio.get_running_loop().time() > deadline:
                    raise
            await asyncio.sleep(0.25)

    async def _route(self, route: Any) -> None:
        request = route.request
        why = self.sandbox.refusal(request.url, navigation=False)
        try:
            if why is None:
                await route.continue_()
            elif request.is_navigation_request():
                # "204 No Content" to a navigation leaves the tab on the page it was on, where an
                # abort would put Chromium's error page in its place
                self.blocked.append((request.url, why))
                await route.fulfill(status=204, body="")
            else:
                await route.abort("blockedbyclient")
        except PlaywrightError:
            pass  # the page or context closed while the request waited

    async def _settle(self, page: Page) -> bool:
        if page.is_closed():
            return True
        return await settle(page, self.tracker, self.settings.settle_timeout_s, self.settings.quiet_ms)

    async def close(self) -> None:
        try:
            await self.context.close()
        except PlaywrightError:
            pass  # the browser went first

    # -- actions ----------------------------------------------------------------------------------
    async def execute(self, action: Action, targets: dict[int, tuple[float, float]]) -> str | None:
        """Apply one action to the focused tab and wait for the page to settle; the error message
        for the agent when it could not be applied (None: it was)."""
        self.blocked.clear()
        before = list(self.pages)
        try:
            error = await self._apply(action, targets)
        except ActionError as exc:
            error = str(exc)
        except PlaywrightError as exc:
            error = f"{action.name} failed: {str(exc).splitlines()[0][:300]}"
        if not self.pages:  # the page closed itself (window.close): keep one tab open
            self._opened(await self.context.new_page())
            self.current = 0
        await self._settle(self.page)
        opened = [p for p in self.pages if p not in before]
        if opened and self.page is not opened[-1]:  # the action opened a tab: VWA moves the focus there
            self.current = self.pages.index(opened[-1])
            await self.page.bring_to_front()
            await self._settle(self.page)
        if error is None and self.blocked:
            url, why = self.blocked[0]
            error = f"navigation to {url[:200]} was blocked: {why}"
        return error

    async def _apply(self, action: Action, targets: dict[int, tuple[float, float]]) -> str | None:
        page, timeout = self.page, self.settings.settle_timeout_s * 1000
        name = action.name
        if name in ("click", "hover", "type"):
            assert action.element is not None
            if action.element not in targets:
                return f"element [{action.element}] is not on the current page"
            x, y = targets[action.element]
            if name == "hover":
                await page.mouse.move(x, y)
                return None
            if name == "click" and await page.evaluate(_OPENS_TAB_JS, [x, y]):
                await self._click_expecting_tab(page, x, y)
            else:
                await page.mouse.click(x, y)
            if name == "type":
                await page.keyboard.type(action.text)  # typed as keystrokes: text is data, never code
                if action.enter:
                    await page.keyboard.press("Enter")
        elif name == "press":
            await page.keyboard.press(playwright_keys(action.text))
        elif name == "scroll":
            sign = -1 if action.text == "up" else 1
            await page.evaluate("(s) => { const el = document.scrollingElement || document.body;"
                                " el.scrollTop = el.scrollTop + s * window.innerHeight; }", sign)
        elif name == "new_tab":
            page = await self.context.new_page()
            self._opened(page)
        elif name == "tab_focus":
            assert action.tab is not None
            if not 0 <= action.tab < len(self.pages):
                return f"there is no tab {action.tab}; the tabs are 0..{len(self.pages) - 1}"
            self.current = action.tab
            await self.page.bring_to_front()
        elif name == "close_tab":
            await page.close()
            if not self.pages:
                self._opened(await self.context.new_page())
            self.current = len(self.pages) - 1
            await self.page.bring_to_front()
        elif name == "goto":
            url = action.text.strip()
            if (why := self.sandbox.refusal(url)) is not None:
                return f"goto {url[:200]} refused: {why}"
            await page.goto(url, wait_until="commit", timeout=timeout)
        elif name == "go_back":
            await page.go_back(wait_until="commit", timeout=timeout)
        elif name == "go_forward":
            await page.go_forward(wait_until="commit", timeout=timeout)
        else:
            return f"{name} is not a browser action"
        return None

    async def _click_expecting_tab(self, page: Page, x: float, y: float) -> None:
        """Click a link that opens another tab, and wait for that tab (the browser announces it a
        little after the click; the focus must not be decided before it exists)."""
        try:
            async with self.context.expect_page(timeout=self.settings.settle_timeout_s * 1000):
                await page.mouse.click(x, y)
        except PlaywrightError:
            pass  # no tab came after all (a blocked or prevented navigation): the click stands

    # -- observations -----------------------------------------------------------------------------
    async def cdp(self, page: Page) -> Any:
        if page not in self._cdp:
            self._cdp[page] = await self.context.new_cdp_session(page)
        return self._cdp[page]

    async def screenshot_png(self) -> bytes:
        """The focused tab's viewport as PNG (CDP directly: Playwright's screenshot waits for fonts and
        animations we do not need, and cannot ask for the faster encoder)."""
        return await self._screenshot({"format": "png", "optimizeForSpeed": True})

    async def _screenshot(self, options: dict[str, Any]) -> bytes:
        cdp = await self.cdp(self.page)
        reply = await cdp.send("Page.captureScreenshot", options)
        return base64.b64decode(reply["data"])

    async def screenshot_for_frame(self) -> bytes:
        """The viewport encoded as the frames are asked for: PNG, or JPEG when a quality is set
        (cheaper to encode and decode; the judges' screenshots stay PNG)."""
        quality = self.settings.frame_quality
        if quality is None:
            return await self.screenshot_png()
        return await self._screenshot({"format": "jpeg", "quality": quality, "optimizeForSpeed": True})

    async def titles(self) -> list[str]:
        return list(await asyncio.gather(*(_title(page) for page in self.pages)))

    async def capture(self, wanted: set[str], frame: str | None, id_space: str | None,
                      captions: dict[str, str] | None = None) -> Capture:
        """The focused tab seen as ``wanted``; a document replaced while it was read (a navigation
        that started after the step's settle, as a form submit can on a loaded machine) is settled
        and read again, so the agent sees the page the action led to and the env never fails on it."""
        for attempt in range(CAPTURE_TRIES):
            try:
                return await self._capture_once(wanted, frame, id_space, captions)
            except PlaywrightError:
                if attempt + 1 == CAPTURE_TRIES or self.page.is_closed():
                    raise
                await self._settle(self.page)
        raise AssertionError("unreachable")

    async def _capture_once(self, wanted: set[str], frame: str | None, id_space: str | None,
                            captions: dict[str, str] | None = None) -> Capture:
        """The focused tab seen as ``wanted`` (som, axtree, html, url, tabs), with a ``frame``
        (screenshot, som or None) and the element ids of ``id_space`` (som, axtree or None).

        The screenshot is asked for at once with the page script that rewrites image alts and
        collects the SoM elements (the alts change no loaded image's pixels), so the browser's
        compositing overlaps the script; the tree and the HTML show the rewritten alts, so they are
        read after it, together with the tab titles."""
        page, cap = self.page, Capture(id_space=id_space)
        width, height = self.spec.viewport
        need_som = "som" in wanted or frame == "som" or id_space == "som"
        need_tree = "axtree" in wanted or id_space == "axtree"
        if "url" in wanted:
            cap.data["url"] = page.url
        shot = asyncio.ensure_future(self.screenshot_for_frame()) if frame is not None else None
        marks: som.SomPage | None = None
        try:
            if need_som:
                records = await page.evaluate(som.COLLECT_JS, [*som.COLLECT_ARGS, captions or {}])
                marks = cap.marks = som.mark_page(records, width, height)
                if "som" in wanted:
                    cap.data["som"] = marks.text
                if id_space == "som":
                    cap.targets = marks.centers()
            elif need_tree:
                await page.evaluate(som.ALT_JS, captions or {})
        except BaseException:
            if shot is not None:
                shot.cancel()
            raise
        reads: dict[str, Any] = {}
        if shot is not None:
            reads["frame"] = shot
        if "tabs" in wanted:
            reads["tabs"] = self.titles()
        if need_tree:
            reads["tree"] = self._tree(page)
        if "html" in wanted:
            reads["html"] = page.content()
        got = dict(zip(reads, await asyncio.gather(*reads.values())))
        if "tabs" in got:
            cap.data["tabs"], cap.data["tab"] = got["tabs"], self.current
        if "tree" in got:
            tree = await asyncio.to_thread(axtree.render, *got["tree"], (width, height))
            if "axtree" in wanted:
                cap.data["axtree"] = tree.text
            if id_space == "axtree":
                cap.targets = tree.centers
        if "html" in got:
            cap.data["html"] = got["html"]
        if "frame" in got:
            cap.frame = await asyncio.to_thread(_frame_of, got["frame"], marks if frame == "som" else None)
        return cap

    async def _tree(self, page: Page) -> tuple[Any, ...]:
        return await axtree.fetch(await self.cdp(page))

    # -- the judges' questions about the page -----------------------------------------------------
    async def goto_for_judge(self, url: str) -> str:
        if (why := self.sandbox.refusal(url)) is not None:
            raise ValueError(f"goto {url[:200]} refused: {why}")
        await self.page.goto(url, wait_until="commit", timeout=self.settings.settle_timeout_s * 1000)
        await self._settle(self.page)
        return self.page.url

    async def image_sources(self, selector: str) -> list[str]:
        """The ``src`` of every image matching ``selector`` or inside an element matching it (all
        images when the selector is empty), as VWA's page_image_query reads them."""
        return await self.page.evaluate(
            """(sel) => {
                 const roots = sel ? Array.from(document.querySelectorAll(sel)) : [document];
                 const out = [];
                 for (const r of roots) {
                   if (r.tagName === 'IMG') out.push(r.src);
                   else if (r.querySelectorAll) for (const i of r.querySelectorAll('img')) out.push(i.src);
                 }
                 return out;
               }""", selector)


# Whether a click at (x, y) lands on a link or form button that opens another tab.
_OPENS_TAB_JS = """
([x, y]) => {
  const el = document.elementFromPoint(x, y);
  const owner = el && (el.closest('a[href], area[href]') || (el.form ? el.form : null));
  const target = owner ? (owner.getAttribute('target') || '') : '';
  return target !== '' && !['_self', '_top', '_parent'].includes(target.toLowerCase());
}
"""


async def _title(page: Page) -> str:
    try:
        return await page.title()
    except PlaywrightError:
        return ""


def _frame_of(image: bytes, marks: som.SomPage | None) -> np.ndarray:
    frame = som.screenshot_array(image)
    return frame if marks is None else som.draw_marks(frame, marks)
