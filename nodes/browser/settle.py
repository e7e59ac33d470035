"""Waiting for a page to settle after an action, by watching it, not by sleeping.

VWA sleeps 2.5 s after every action; most actions on a local site are finished after a few tens
of milliseconds. A page counts as settled once it is loaded, none of its requests is in flight,
and its DOM has not changed for a short quiet window; the whole wait is bounded, so a page that
never settles (a ticking clock, a long poll) costs the bound, not a hang.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

__all__ = ["RequestTracker", "settle"]

# Resolves true once the DOM has gone `quiet` ms without a mutation, false after `limit` ms.
_QUIET_JS = """
([quiet, limit]) => new Promise((resolve) => {
  let timer;
  const start = performance.now();
  const observer = new MutationObserver(() => { clearTimeout(timer); arm(); });
  const finish = (ok) => { observer.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(ok); };
  const arm = () => { timer = setTimeout(() => finish(true), quiet); };
  const cap = setTimeout(() => finish(false), limit);
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  arm();
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
    """Wait (at most ``timeout`` s) until ``page`` is loaded, idle on the network and its DOM has
    been quiet for ``quiet_ms``; True when it settled, False when the bound ran out."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            await page.wait_for_load_state("load", timeout=left * 1000)
            if not await tracker.idle(page, deadline - time.monotonic()):
                return False
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return False
            if await page.evaluate(_QUIET_JS, [quiet_ms, left_ms]) and not tracker.busy(page):
                return True
        except PlaywrightError:
            # the document was replaced mid-wait (a navigation): wait for the new one
            if page.is_closed():
                return True
            await asyncio.sleep(0)
    return False
