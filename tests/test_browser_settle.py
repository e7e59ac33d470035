"""settle() on pages that fight it, in real Chromium: the wait is bounded from Python, so a page
whose own scripts cannot run (a ``Content-Security-Policy: sandbox`` header, as a raw-file view of a
code forge sends) costs at most the bound instead of hanging the environment or a judge."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from nodes.browser.settle import WATCH_JS, RequestTracker, settle

pytestmark = pytest.mark.asyncio


async def _page_with(headers: dict[str, str], body: str) -> tuple[Any, Any, Any, RequestTracker]:
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
    context = await browser.new_context()
    await context.add_init_script(WATCH_JS)
    tracker = RequestTracker()
    tracker.attach(context)
    page = await context.new_page()

    async def serve(route: Any) -> None:
        await route.fulfill(status=200, headers={"content-type": "text/html", **headers}, body=body)

    await page.route("http://settle.test/**", serve)
    return pw, browser, page, tracker


async def test_a_page_whose_scripts_are_sandboxed_costs_the_bound_not_a_hang() -> None:
    pw, browser, page, tracker = await _page_with({"content-security-policy": "sandbox"},
                                                  "<html><body><pre>raw file</pre></body></html>")
    try:
        await page.goto("http://settle.test/raw")
        started = time.monotonic()
        settled = await asyncio.wait_for(settle(page, tracker, timeout=1.5, quiet_ms=30), 20)
        took = time.monotonic() - started
        assert took < 3.0, took  # the bound (1.5 s) and a margin, never the 20 s guard
        assert isinstance(settled, bool)
        assert "raw file" in await page.content()  # the page is still usable afterwards
    finally:
        await browser.close()
        await pw.stop()


async def test_a_plain_page_settles_quickly() -> None:
    pw, browser, page, tracker = await _page_with({}, "<html><body><p>hello</p></body></html>")
    try:
        await page.goto("http://settle.test/plain")
        started = time.monotonic()
        assert await settle(page, tracker, timeout=5.0, quiet_ms=30)
        assert time.monotonic() - started < 2.0
    finally:
        await browser.close()
        await pw.stop()
