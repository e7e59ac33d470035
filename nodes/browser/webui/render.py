"""Rendering a page folder in Chromium, sandboxed, and collecting its elements for AES.

A folder is served at a fixed fake origin (``ORIGIN``) through Playwright's route interception:
a request to the origin is answered with a file read from inside the folder (no ``..``, no symlink
leading out, 404 otherwise) and every other URL is refused (``Sandbox``), so a page can neither
read the disk (no ``file://``) nor reach the network. Using one origin for the ground truth and
for the generated page also makes resolved URLs (``src``, ``background-image``) comparable.

The viewport is 1920x1080 as in MageBench; dialogs are accepted as MageBench's alert listener
does; after loading and after each step the page is awaited with ``settle`` (load, no request or
short timer pending, DOM quiet), bounded, instead of MageBench's fixed one-second sleeps.

Why pages are reused: each fresh browser context starts a new renderer process, which was most of a
scoring's time on a loaded machine (two contexts per scoring). A folder is opened in a *slot*, a
context and tab kept by the ``Renderer``; when the folder is closed the tab is wiped and parked
(its session and local storage cleared, navigated to about:blank, the origin's cookies and stored
data cleared, popups closed) and the next folder reuses it, so one page never sees another's state.
A slot whose page stopped answering (a script that never yields), or whose wiping fails, is closed
instead, as is everything beyond ``pool`` idle slots. ``reuse_pages=False`` gives every folder a
fresh context, as before.

Why a stuck Chromium is killed: a browser that stops answering (starved, or stopped) leaves every
Playwright call that has no timeout of its own (a new context or tab, a route, closing a context)
waiting for ever, and the judge or environment with it. So opening a folder and closing a context
are bounded (``browser_timeout_s``); past the bound, or when a folder fails to load and the browser
itself no longer answers, the renderer kills that Chromium and its Playwright driver and opens the
folder again in a fresh one; a second failure is a RenderError.

Why ``collect`` returns one JSON string: Playwright validates and converts an evaluation's result
value by value, which cost more than the page's own work for a few hundred elements; a string
crosses as one value and ``json.loads`` reads it at C speed. A generated page's ``outerHTML`` map,
which only the ground truth's exclusion rule reads, is not collected (``html=False``).
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import psutil
from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from nodes.browser.chromium import close_chromium
from nodes.browser.sandbox import Sandbox
from nodes.browser.settle import WATCH_JS, RequestTracker, settle
from nodes.browser.webui.aes import PROBE, STYLE_PROPS, Element
from nodes.browser.webui.steps import Click, Hover, Press, Step, TypeText, Wait

__all__ = ["ORIGIN", "PageFolder", "RenderError", "Renderer", "VIEWPORT", "resolve_in"]

ORIGIN = "http://webui.page/"
VIEWPORT = (1920, 1080)
CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage", "--no-first-run", "--mute-audio",
                 "--disable-features=Translate,MediaRouter,OptimizationHints",
                 # belt and braces beside the route: nothing the route does not see (a WebSocket) resolves
                 "--host-resolver-rules=MAP * ~NOTFOUND"]
# Past twice the step's own timeout and this, a step's page is taken for hung (its Chromium is then
# killed): Playwright's own timeout must come first, and on a loaded machine its answer to a short
# timeout (300 ms) came later than twice that (0.6 s), which called a healthy page hung.
STEP_SLACK_S = 5.0
STEP_TIMEOUT_MS = 10_000  # how long a step may take (a missing element fails at once; a loaded machine
# needs seconds to click or type on a real one, and a ground truth failing there would be a broken task)

# Every displayed descendant of <body> with area > 0.1, plus (withHtml) the outerHTML of every
# descendant (displayed or not) keyed by a per-document identity, which is what the "unchanged by the
# interaction" rule compares; as one JSON string (see the module notes). The identity lives in a
# WeakMap, not an attribute, since an attribute would change the outerHTML it is used to compare.
_COLLECT_JS = """
([styleProps, probe, withHtml]) => {
  const ids = window.__webuiIds || (window.__webuiIds = {map: new WeakMap(), next: 0});
  const keyOf = (el) => { if (!ids.map.has(el)) ids.map.set(el, ids.next++); return ids.map.get(el); };
  const body = document.body;
  const all = body ? [...body.querySelectorAll('*')] : [];
  const html = {};
  const elements = [];
  for (const el of all) {
    const key = keyOf(el);
    if (withHtml) html[key] = el.outerHTML;
    const r = el.getBoundingClientRect();
    if (!(r.width * r.height > 0.1)) continue;
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    const cs = getComputedStyle(el);
    const style = {};
    for (const p of styleProps) style[p] = cs.getPropertyValue(p);
    const attrs = {};
    for (const a of probe) {
      const v = el.getAttribute(a);
      if (v !== null) attrs[a] = v;
    }
    if ('src' in el && typeof el.src === 'string' && el.getAttribute('src') !== null) attrs.src = el.src;
    if (el instanceof HTMLInputElement || el instanceof HTMLButtonElement) attrs.type = el.type;
    if ('value' in el && typeof el.value === 'string' && !(el instanceof HTMLLIElement)) attrs.value = el.value;
    elements.push({key, tag: el.tagName.toLowerCase(), text: el.innerText || '',
                   box: [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY],
                   descendants: el.getElementsByTagName('*').length, attrs, style,
                   outer: withHtml ? html[key] : ''});
  }
  return JSON.stringify({elements, html});
}
"""


# Run in a page being parked: what the origin's storage APIs hold for this tab is dropped (session
# storage belongs to the tab, so only the page itself can clear it).
_WIPE_JS = """
() => {
  try { sessionStorage.clear(); } catch (e) {}
  try { localStorage.clear(); } catch (e) {}
  window.name = '';
}
"""
WIPE_TIMEOUT_S = 2.0  # how long parking a slot may take before the slot is closed instead
# The longest opening a folder (context, tab, load, settling: seconds even on a loaded machine) may
# take before the renderer takes its Chromium for stuck (see the module notes); closing a context
# gets CLOSE_TIMEOUT_S, after which it is left to that judgement
BROWSER_TIMEOUT_S = 60.0
CLOSE_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 5.0  # how long a healthy Chromium may take to say its version, loaded machine and all
# How long loading index.html may take to commit (the response served from the folder: no script of
# the page runs before it, so only a busy machine makes it slow; settle_timeout_s bounds the rest)
LOAD_TIMEOUT_S = 15.0


class RenderError(RuntimeError):
    """The page could not be loaded or read (MageBench's render error)."""


def resolve_in(root: Path, url: str) -> Path | None:
    """The file of ``root`` a URL at ``ORIGIN`` names, or None when it names nothing inside it
    (``..``, a symlink leading out, a folder, a missing file)."""
    path = unquote(urlsplit(url).path).lstrip("/") or "index.html"
    if "\x00" in path:
        return None
    base = root.resolve()
    candidate = (base / path).resolve()
    if not candidate.is_relative_to(base) or not candidate.is_file():
        return None
    return candidate


@dataclass(slots=True, eq=False)
class _Slot:
    """A browser context with its tab, its request tracker and the folder it serves now (None while
    parked: every request is then refused)."""

    context: BrowserContext
    tracker: RequestTracker = field(default_factory=RequestTracker)
    page: Page | None = None
    cdp: CDPSession | None = None  # a session on the tab: its context's id, clearing its stored data
    context_id: str = ""  # Chromium's id of the context, to find its windows among the browser's targets
    owner: PageFolder | None = None

    async def route(self, route: Any) -> None:
        owner = self.owner
        if owner is None:
            try:
                await route.abort("blockedbyclient")
            except PlaywrightError:
                pass
            return
        await owner._route(route)


class PageFolder:
    """One folder loaded in a browser context of its own (reused from an earlier folder, wiped, when
    the renderer reuses pages): ``collect`` its elements, ``run`` steps."""

    def __init__(self, context: BrowserContext, root: Path, settle_timeout_s: float, quiet_ms: int,
                 step_timeout_ms: int = STEP_TIMEOUT_MS, slot: _Slot | None = None,
                 release: Callable[[_Slot, bool], Awaitable[None]] | None = None) -> None:
        self.context, self.root = context, root
        self.settle_timeout_s, self.quiet_ms, self.step_timeout_ms = settle_timeout_s, quiet_ms, step_timeout_ms
        self.sandbox = Sandbox([ORIGIN])
        self.refused: list[str] = []  # "url: why" of every request that was not served
        self._slot = slot or _Slot(context)
        self.tracker = self._slot.tracker
        self._release = release  # the renderer's hand-back (None: close the context)
        self.hung = False  # the page stopped answering: its slot cannot be reused
        self.page: Page | None = self._slot.page

    async def _route(self, route: Any) -> None:
        url = route.request.url
        try:
            if (why := self.sandbox.refusal(url, navigation=False)) is not None:
                self.refused.append(f"{url}: {why}")
                if route.request.is_navigation_request():
                    # "204 No Content" leaves the tab on its page, where an abort shows an error page
                    await route.fulfill(status=204, body="")
                else:
                    await route.abort("blockedbyclient")
                return
            file = resolve_in(self.root, url)
            if file is None:
                self.refused.append(f"{url}: no such file in {self.root}")
                await route.fulfill(status=404, body="")
                return
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind.endswith(("javascript", "svg+xml")):
                kind += "; charset=utf-8"
            await route.fulfill(status=200, body=file.read_bytes(), content_type=kind)
        except PlaywrightError:
            pass  # the context closed while the request waited

    async def open(self) -> None:
        """Load ``index.html`` and wait for it to settle; RenderError when it cannot be loaded."""
        slot = self._slot
        if slot.page is None:
            await self.context.route("**/*", lambda route: slot.route(route))
            self.tracker.attach(self.context)
            slot.page = await self.context.new_page()
            slot.page.on("dialog", lambda dialog: asyncio.ensure_future(_accept(dialog)))
        slot.owner, self.page = self, slot.page
        self.tracker.inflight.clear()
        try:
            await self.page.goto(ORIGIN + "index.html", wait_until="commit",
                                 timeout=max(self.settle_timeout_s, LOAD_TIMEOUT_S) * 1000)
        except PlaywrightError as err:
            self.hung = True
            raise RenderError(f"{self.root / 'index.html'} did not load: {str(err).splitlines()[0]}") from None
        await self._settle()

    async def _settle(self) -> None:
        assert self.page is not None
        if not self.page.is_closed():
            try:  # settle's own bound cannot stop an evaluate that a never-yielding script blocks
                await asyncio.wait_for(settle(self.page, self.tracker, self.settle_timeout_s, self.quiet_ms),
                                       self.settle_timeout_s + 0.5)
            except TimeoutError:
                pass  # an unsettled page is still scored on what it shows (or fails to answer collect)

    async def collect(self, html: bool = True) -> tuple[list[Element], dict[int, str]]:
        """The displayed elements and (``html``) the outerHTML of every body descendant by identity;
        without ``html`` the map is empty and the elements carry no ``outer_html``."""
        assert self.page is not None
        try:
            # bounded: a page whose script never yields (an endless loop) cannot answer at all
            text = await asyncio.wait_for(
                self.page.evaluate(_COLLECT_JS, [list(STYLE_PROPS), list(PROBE), html]), self.settle_timeout_s)
            raw = json.loads(text)
        except TimeoutError:
            self.hung = True
            raise RenderError(f"the page of {self.root} did not answer within {self.settle_timeout_s} s") from None
        except PlaywrightError as err:
            self.hung = True
            raise RenderError(f"reading the page of {self.root} failed: {str(err).splitlines()[0]}") from None
        except (TypeError, ValueError) as err:  # the page replaced JSON.stringify
            raise RenderError(f"reading the page of {self.root} failed: {err}") from None
        elements = [Element(box=tuple(e["box"]), tag=e["tag"], text=e["text"], attrs=e["attrs"], style=e["style"],
                            descendants=e["descendants"], outer_html=e["outer"], key=e["key"])
                    for e in raw["elements"]]
        return elements, {int(k): v for k, v in raw["html"].items()}

    async def run(self, steps: Sequence[Step]) -> str | None:
        """Run one interaction; the first step's error message (None: all steps ran). As with
        Selenium's find_element, a selector acts on its first match."""
        assert self.page is not None
        for index, step in enumerate(steps):
            try:
                bound = (2 * self.step_timeout_ms / 1000 + STEP_SLACK_S
                         + (step.wait / 1000 if isinstance(step, Wait) else 0))
                await asyncio.wait_for(_apply(self.page, step, self.step_timeout_ms), bound)
            except TimeoutError:
                self.hung = True
                return f"step {index} {step.model_dump()}: the page did not answer within {bound:g} s"
            except PlaywrightError as err:
                return f"step {index} {step.model_dump()}: {str(err).splitlines()[0]}"
            await self._settle()
        return None

    async def close(self) -> None:
        """Hand the slot back to the renderer (which wipes and parks it), or close the context."""
        self._slot.owner = None
        if self._release is not None:
            release, self._release = self._release, None
            await release(self._slot, not self.hung)
            return
        await _close_context(self.context)


async def _close_context(context: BrowserContext) -> None:
    """Close a context; a browser too stuck to answer is the renderer's to deal with (it is killed at
    the next open that does not finish), not a reason to wait here for ever."""
    try:
        await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)
    except (PlaywrightError, TimeoutError):
        pass


async def _accept(dialog: Any) -> None:
    try:
        await dialog.accept()
    except PlaywrightError:
        pass


async def _apply(page: Page, step: Step, timeout_ms: int = STEP_TIMEOUT_MS) -> None:
    """One step. A selector that matches nothing fails at once, as Selenium's find_element does
    (no waiting for an element that a generated page may never have); a matched element gets
    ``timeout_ms`` to become actionable (for ``type``, to be typed into)."""
    if isinstance(step, Wait):
        await asyncio.sleep(step.wait / 1000)
        return
    selector = {Click: lambda s: s.click, Hover: lambda s: s.hover, TypeText: lambda s: s.type,
                Press: lambda s: s.press}[type(step)](step)
    target = page.locator(selector).first
    if await target.count() == 0:
        raise PlaywrightError(f"no element matches {selector!r}")
    if isinstance(step, Click):
        await target.click(timeout=timeout_ms)
    elif isinstance(step, Hover):
        await target.hover(timeout=timeout_ms)
    elif isinstance(step, TypeText):
        await target.press_sequentially(step.text, timeout=timeout_ms)
    elif isinstance(step, Press):
        await target.press(step.key, timeout=timeout_ms)


class Renderer:
    """Playwright and one headless Chromium, shared by every page folder it opens; with
    ``reuse_pages`` (the default) up to ``pool`` idle contexts are kept for the next folders."""

    def __init__(self, executable: str = "/usr/bin/chromium", settle_timeout_s: float = 5.0,
                 quiet_ms: int = 30, step_timeout_ms: int = STEP_TIMEOUT_MS, reuse_pages: bool = True,
                 pool: int = 2, browser_timeout_s: float = BROWSER_TIMEOUT_S) -> None:
        self.executable, self.settle_timeout_s, self.quiet_ms = executable, settle_timeout_s, quiet_ms
        self.step_timeout_ms = step_timeout_ms  # a loaded machine may need more than STEP_TIMEOUT_MS per step
        self.reuse_pages, self.pool = reuse_pages, pool
        self.browser_timeout_s = browser_timeout_s
        self.restarts = 0  # Chromiums killed for not answering
        self._pw: Playwright | None = None
        self._driver: int | None = None  # the pid of Playwright's driver, Chromium's parent
        self._browser: Browser | None = None
        self._idle: list[_Slot] = []
        self._cdp: CDPSession | None = None  # the browser's own session: which windows exist
        self._starting = asyncio.Lock()
        self._generation = 0  # which Chromium this is: one more for each killed

    async def start(self) -> None:
        """Launch Chromium once. Scoring opens its two folders at once, and both first opens call
        this: without the lock each launched a Chromium of its own, and one was never closed."""
        async with self._starting:
            if self._browser is not None:
                return
            if not os.access(self.executable, os.X_OK):
                raise FileNotFoundError(f"Chromium not found at {self.executable}; install Debian's chromium")
            before = {p.pid for p in psutil.Process().children()}
            self._pw = await async_playwright().start()
            self._driver = next((p.pid for p in psutil.Process().children()
                                 if p.pid not in before and _is_driver(p)), None)
            self._browser = await self._pw.chromium.launch(executable_path=self.executable, headless=True,
                                                           args=CHROMIUM_ARGS)

    async def open(self, folder: Path) -> PageFolder:
        """``folder`` with its index.html loaded and settled, in a fresh or a wiped context; in a fresh
        Chromium when the one it had stopped answering (see the module notes)."""
        for _ in range(2):  # the second time in a fresh Chromium
            generation = self._generation
            try:
                return await asyncio.wait_for(self._open(folder), self.browser_timeout_s)
            except TimeoutError:
                await self._kill(generation)
            except RenderError:
                # a folder that did not load: its own failure, unless the Chromium is what stopped
                # (then a parked tab times out loading rather than hanging), or another open found
                # this Chromium stuck and killed it under this one
                if generation == self._generation:
                    if await self._answers():
                        raise
                    await self._kill(generation)
        raise RenderError(f"Chromium did not open {folder} within {self.browser_timeout_s:g} s, "
                          "twice (a fresh browser the second time)")

    async def _answers(self) -> bool:
        """Whether this Chromium still answers at the browser level, which no page of its can stop."""
        try:
            if self._browser is None:
                return False
            if self._cdp is None:
                self._cdp = await asyncio.wait_for(self._browser.new_browser_cdp_session(), PROBE_TIMEOUT_S)
            await asyncio.wait_for(self._cdp.send("Browser.getVersion"), PROBE_TIMEOUT_S)
            return True
        except (TimeoutError, PlaywrightError):
            return False

    async def _kill(self, generation: int) -> None:
        """Kill a Chromium that stopped answering, and its Playwright driver, and forget both and
        their contexts; the next open starts afresh. Folders opened at once all time out on the same
        Chromium: the first to get here kills it, the others find it gone (``generation``)."""
        if generation != self._generation:
            return
        self._generation += 1
        driver, pw = self._driver, self._pw
        self._pw = self._browser = self._cdp = self._driver = None
        self._idle.clear()
        self.restarts += 1
        if driver is not None:
            try:
                tree = psutil.Process(driver)
                doomed = [tree, *tree.children(recursive=True)]
            except psutil.NoSuchProcess:
                doomed = []
            for proc in doomed:
                try:
                    proc.kill()
                except psutil.NoSuchProcess:
                    pass
            await asyncio.to_thread(psutil.wait_procs, doomed, 5)
        if pw is not None:
            try:
                await asyncio.wait_for(pw.stop(), 5)
            except (PlaywrightError, TimeoutError, OSError):
                pass

    async def _open(self, folder: Path) -> PageFolder:
        await self.start()
        assert self._browser is not None
        if self._idle:
            slot = self._idle.pop()
        else:
            context = await self._browser.new_context(
                viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]}, device_scale_factor=1,
                accept_downloads=False, service_workers="block")
            await context.add_init_script(WATCH_JS)
            slot = _Slot(context)
        page = PageFolder(slot.context, folder, self.settle_timeout_s, self.quiet_ms, self.step_timeout_ms, slot,
                          self._release if self.reuse_pages else None)
        try:
            await page.open()
        except BaseException:
            await page.close()
            raise
        return page

    async def _release(self, slot: _Slot, reusable: bool) -> None:
        """Wipe a slot and park it for the next folder (see the module notes); close it when its page
        hung, when wiping it fails or takes over WIPE_TIMEOUT_S, or when ``pool`` slots are parked."""
        if reusable and self._browser is not None and len(self._idle) < self.pool:
            try:
                await asyncio.wait_for(self._wipe(slot), WIPE_TIMEOUT_S)
            except (TimeoutError, PlaywrightError):
                pass
            else:
                self._idle.append(slot)
                return
        await _close_context(slot.context)

    async def _wipe(self, slot: _Slot) -> None:
        """Clear what the page left; PlaywrightError when the slot cannot be reused: its page is gone or
        it opened another window (a popup could still reach the origin's storage, so the context goes)."""
        assert self._browser is not None
        if slot.page is None or slot.page.is_closed():
            raise PlaywrightError("the slot's page was closed")
        await slot.page.evaluate(_WIPE_JS)
        await slot.page.goto("about:blank")
        if slot.cdp is None:
            slot.cdp = await slot.context.new_cdp_session(slot.page)
            slot.context_id = (await slot.cdp.send("Target.getTargetInfo"))["targetInfo"]["browserContextId"]
        if self._cdp is None:
            self._cdp = await self._browser.new_browser_cdp_session()
        # Chromium creates a window's target when it is opened, so once the opener has left its
        # document every window it opened is listed here, announced to Playwright or not.
        targets = (await self._cdp.send("Target.getTargets"))["targetInfos"]
        windows = [t for t in targets if t.get("browserContextId") == slot.context_id and t["type"] == "page"]
        if len(windows) != 1 or len(slot.context.pages) != 1:
            raise PlaywrightError("the page opened other windows")
        await slot.context.clear_cookies()
        await slot.cdp.send("Storage.clearDataForOrigin", {"origin": ORIGIN.rstrip("/"), "storageTypes": "all"})

    async def close(self) -> None:
        for slot in self._idle:
            await _close_context(slot.context)
        self._idle.clear()
        self._cdp = None
        try:
            await close_chromium(self._pw, self._browser, timeout_s=self.browser_timeout_s)
        except TimeoutError:
            await self._kill(self._generation)
        else:
            self._pw = self._browser = None


def _is_driver(proc: psutil.Process) -> bool:
    try:
        return any("playwright" in part for part in proc.cmdline())
    except psutil.Error:
        return False
