"""What VWA's evaluators may do to the live final page, as an async Protocol.

The judge never holds a Playwright object: the browser environment owns the page and offers these
services (over the bus, or in-process in tests), so evaluators see the same small surface whether
the page is local or in another process. ``PlaywrightPageServices`` is the in-process adapter over an
async Playwright ``Page``; a remote implementation only has to match ``PageServices``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class PageImage:
    """One image on the page: its absolute ``src`` and its bytes (None when it could not be fetched)."""

    src: str
    data: bytes | None


@runtime_checkable
class PageServices(Protocol):
    async def url(self) -> str:
        """The URL of the focused tab."""
        ...

    async def goto(self, url: str) -> None:
        """Open ``url`` in the focused tab and wait for it to settle (evaluators with a fixed URL need it)."""
        ...

    async def evaluate(self, js: str) -> Any:
        """The JSON value of a JS expression or function source (Playwright's ``page.evaluate`` rules)."""
        ...

    async def content(self) -> str:
        """The page's HTML."""
        ...

    async def images(self, selector: str) -> list[PageImage]:
        """The ``<img>`` under ``selector`` (matches that are images count themselves; "" = every image)."""
        ...

    async def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        ...


# Images are read by the page itself (fetch with the page's cookies), so a logged-in site's photos
# come back as the agent saw them; a failed fetch yields null rather than failing the whole query.
IMAGES_JS = """
async (selector) => {
  const found = [];
  const roots = selector ? [...document.querySelectorAll(selector)] : [...document.querySelectorAll('img')];
  for (const el of roots) {
    if (el.tagName === 'IMG') found.push(el); else found.push(...el.querySelectorAll('img'));
  }
  const out = [];
  for (const img of found) {
    const src = img.currentSrc || img.src;
    if (!src) continue;
    let data = null;
    try {
      const reply = await fetch(src);
      if (reply.ok) {
        const bytes = new Uint8Array(await reply.arrayBuffer());
        let text = '';
        for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        data = btoa(text);
      }
    } catch (e) { data = null; }
    out.push({src, data});
  }
  return out;
}
"""


class PlaywrightPageServices:
    """``PageServices`` over an async Playwright page in this process."""

    def __init__(self, page: Any, settle_timeout_ms: int = 5000) -> None:
        self.page = page
        self.settle_timeout_ms = settle_timeout_ms

    async def url(self) -> str:
        return str(self.page.url)

    async def goto(self, url: str) -> None:
        await self.page.goto(url, wait_until="load", timeout=self.settle_timeout_ms * 4)
        try:  # a page that keeps polling never goes idle: settle is bounded, not required
            await self.page.wait_for_load_state("networkidle", timeout=self.settle_timeout_ms)
        except Exception as e:  # noqa: BLE001 - Playwright's TimeoutError; the page is loaded anyway
            if type(e).__name__ != "TimeoutError":
                raise

    async def evaluate(self, js: str) -> Any:
        return await self.page.evaluate(js)

    async def content(self) -> str:
        return str(await self.page.content())

    async def images(self, selector: str) -> list[PageImage]:
        found = await self.page.evaluate(IMAGES_JS, selector)
        return [PageImage(item["src"], base64.b64decode(item["data"]) if item["data"] is not None else None)
                for item in found]

    async def screenshot(self) -> bytes:
        return bytes(await self.page.screenshot(type="png"))
