"""Waiting for a page to settle after an action, by watching it, not by sleeping.

VWA sleeps 2.5 s after every action; most actions on a local site are finished after a few tens
of milliseconds. A page counts as settled once it is loaded, none of its requests is in flight
(seen by the browser: ``RequestTracker``), no work it has scheduled is still due (seen in the page:
``WATCH_JS`` counts its fetches, XHRs and short timers) and its DOM has not changed for a short
quiet window. Counting the scheduled work is what lets the quiet window be short: content that a
script fetches and shows a moment later keeps the page unsettled while it is pending, instead of
relying on a long quiet window to outlast it. A document that is being left (a link, a form
submit) gets the long window, since its successor may not be announced yet. The whole wait is
bounded, so a page that never settles (a ticking clock, a long poll) costs the bound, not a hang.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

__all__ = ["LEAVING_QUIET_MS", "RequestTracker", "WATCH_JS", "settle"]

LEAVING_QUIET_MS = 100  # the quiet window of a document whose navigation has started
SHORT_TIMER_MS = 500  # timers due within this are work the page is about to do; longer ones are not waited for
TIMER_CAP_MS = 1000  # timers are waited for at most this long (a polling loop must not cost the bound)

# Installed in every document before its own scripts (an init script): counts the fetches and XHRs
# in flight and the short timers not yet run, and notes when the document starts being left.
WATCH_JS = """
(() => {
  if (window.__fbWatch) return;
  const setT = window.setTimeout, clearT = window.clearTimeout;
  const w = window.__fbWatch = {net: 0, leaving: false, timers: new Set(), setT};
  const short = %d;
  window.setTimeout = function (fn, delay, ...rest) {
    const due = delay === undefined ? 0 : Number(delay);
    if (!(due <= short) || typeof fn !== 'function') return setT.call(window, fn, delay, ...rest);
    const id = setT.call(window, function () { w.timers.delete(id); return fn.apply(this, arguments); },
                         delay, ...rest);
    w.timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) { w.timers.delete(id); return clearT.call(window, id); };
  const fetch0 = window.fetch;
  if (fetch0) window.fetch = function (...args) {
    w.net++;
    let done = false;
    const end = () => { if (!done) { done = true; w.net--; } };
    try { return fetch0.apply(this, args).finally(end); } catch (e) { end(); throw e; }
  };
  const send0 = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    w.net++;
    this.addEventListener('loadend', () => { w.net--; }, {once: true});
    return send0.apply(this, args);
  };
  window.addEventListener('beforeunload', () => { w.leaving = true; });
  window.addEventListener('pageshow', () => { w.leaving = false; });
})();
""" % SHORT_TIMER_MS

# Resolves true once the document has no fetch or XHR in flight and no short timer due (timers are
# waited for at most `cap` ms) and then `quiet` ms have passed without a DOM mutation (`leavingQuiet`
# when it is being left, until it is gone); false after `limit` ms. The quiet window starts when the last pending work
# ended, so what a finished fetch's callbacks schedule next is seen before the window closes. Its own
# timers use the unwrapped setTimeout, so they are not counted as the page's work.
_QUIET_JS = """
([quiet, leavingQuiet, cap, limit]) => new Promise((resolve) => {
  const w = window.__fbWatch || {net: 0, leaving: false, timers: new Set(), setT: window.setTimeout};
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => { last = performance.now(); });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const check = () => {
    const now = performance.now();
    if (now - start >= limit) { observer.disconnect(); resolve(false); return; }
    const busy = w.net > 0 || (w.timers.size > 0 && now - start < cap);
    if (busy) last = now;
    const needed = w.leaving ? leavingQuiet : quiet;
    if (!busy && now - last >= needed) { observer.disconnect(); resolve(true); return; }
    w.setT.call(window, check, busy ? 5 : Math.max(1, needed - (now - last)));
  };
  check();
})
"""


class RequestTracker:
    """Counts each page's requests in flight (from the context's request events)."""

    def __init__(self) -> None:
        self.inflight: dict[Any, int] = {}
        self.changed = asyncio.Event()

    def attach(self, context: Any) -> None:
        context.on("request", self._started)
        context.on("requestfinished", self._ended)
        context.on("requestfailed", self._ended)

    @staticmethod
    def _page(request: Any) -> Any:
        try:
            return request.frame.page
        except PlaywrightError:  # a service worker's request, or a frame already gone
            return None

    def _started(self, request: Any) -> None:
        page = self._page(request)
        self.inflight[page] = self.inflight.get(page, 0) + 1
        self.changed.set()

    def _ended(self, request: Any) -> None:
        page = self._page(request)
        self.inflight[page] = max(0, self.inflight.get(page, 0) - 1)
        self.changed.set()

    def busy(self, page: Page) -> bool:
        return self.inflight.get(page, 0) > 0

    async def idle(self, page: Page, timeout: float) -> bool:
        """Wait until ``page`` has no request in flight; False when ``timeout`` ran out first."""
        deadline = time.monotonic() + timeout
        while self.busy(page):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                return not self.busy(page)
        return True


async def settle(page: Page, tracker: RequestTracker, timeout: float, quiet_ms: int) -> bool:
    """Wait (at most ``timeout`` s) until ``page`` is loaded, idle on the network, done with the work
    it scheduled and its DOM has been quiet for ``quiet_ms``; True when it settled, False when the
    bound ran out."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            await page.wait_for_load_state("load", timeout=left * 1000)
            if not await tracker.idle(page, deadline - time.monotonic()):
                return False
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return False
            args = [quiet_ms, max(quiet_ms, LEAVING_QUIET_MS), TIMER_CAP_MS, left_ms]
            try:  # bounded from here too: the script's own bound needs its timers, which a page whose
                # scripts are sandboxed (Content-Security-Policy: sandbox) never runs
                quiet = await asyncio.wait_for(page.evaluate(_QUIET_JS, args), left_ms / 1000 + 0.25)
            except asyncio.TimeoutError:
                return False
            if quiet and not tracker.busy(page):
                return True
        except PlaywrightError:
            # the document was replaced mid-wait (a navigation): wait for the new one
            if page.is_closed():
                return True
            await asyncio.sleep(0)
    return False
