"""Shutting down a Playwright Chromium, the one way the pack's browsers are shut down.

The order is contexts, browser, then Playwright: the browser is asked to close through the driver
that launched it, and only then is the driver process itself stopped. A context that is already
gone (its browser crashed, or a page took it down) is no reason to leave the browser and the
driver running, so its error is passed over: closing the browser takes every context with it.

A browser that stopped answering would hold ``close()`` for ever; ``timeout_s`` bounds each step,
and the TimeoutError goes to the caller, which knows how to kill what it started
(nodes.browser.webui.render kills the driver's process tree).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable

from playwright.async_api import Browser, BrowserContext, Playwright
from playwright.async_api import Error as PlaywrightError

__all__ = ["close_chromium"]


async def close_chromium(playwright: Playwright | None, browser: Browser | None,
                         contexts: Iterable[BrowserContext] = (), *, timeout_s: float | None = None) -> None:
    """Close ``contexts``, then ``browser``, then stop ``playwright``, skipping what is None; each
    step bounded by ``timeout_s`` when given (TimeoutError past it)."""
    for context in contexts:
        try:
            await _bounded(context.close(), timeout_s)
        except PlaywrightError:
            pass  # gone already; the browser's close below takes it in any case
    if browser is not None:
        await _bounded(browser.close(), timeout_s)
    if playwright is not None:
        await _bounded(playwright.stop(), timeout_s)


async def _bounded(step: Awaitable[None], timeout_s: float | None) -> None:
    await (step if timeout_s is None else asyncio.wait_for(step, timeout_s))
