"""The ``func:`` helpers VWA's evaluators may call, by name, in a registry sites can extend.

A helper is an async function ``helper(ctx, *args)``: ``ctx`` carries the page services, the current
URL and the base URLs of the sites, and ``args`` are the call's arguments with ``__page__`` replaced
by the page services and ``__last_url__`` by the URL. Only the site-independent helpers live here;
the local sites register theirs (``REGISTRY.register("shopping_get_latest_order_url")(fn)``) next to
their own code, and a task naming a helper nobody registered is reported, by name, when it is loaded.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from nodes.browser.vwa.funcs import FuncCall
from nodes.browser.vwa.page import PageServices


@dataclass
class HelperContext:
    page: PageServices | None
    last_url: str
    base_urls: Mapping[str, str] = field(default_factory=dict)


Helper = Callable[..., Awaitable[Any]]


class UnknownHelper(LookupError):
    pass


class HelperRegistry:
    """Helper name -> async function. Copy it to add helpers for one run without touching the shared one."""

    def __init__(self, helpers: Mapping[str, Helper] | None = None) -> None:
        self._helpers: dict[str, Helper] = dict(helpers or {})

    def register(self, name: str) -> Callable[[Helper], Helper]:
        def add(fn: Helper) -> Helper:
            if name in self._helpers and self._helpers[name] is not fn:
                raise ValueError(f"a func: helper named {name!r} is already registered")
            self._helpers[name] = fn
            return fn
        return add

    def copy(self) -> HelperRegistry:
        return HelperRegistry(self._helpers)

    def __contains__(self, name: object) -> bool:
        return name in self._helpers

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._helpers))

    async def call(self, call: FuncCall, ctx: HelperContext) -> Any:
        fn = self._helpers.get(call.name)
        if fn is None:
            raise UnknownHelper(f"no func: helper named {call.name!r} (known: {', '.join(self) or 'none'})")
        return await fn(ctx, *call.bind(ctx.last_url, ctx.page))


REGISTRY = HelperRegistry()


def _require_page(page: Any, helper: str) -> PageServices:
    if page is None:
        raise ValueError(f"{helper} needs the page (__page__) but the evaluation has none")
    return page


@REGISTRY.register("get_query_text")
async def get_query_text(ctx: HelperContext, page: Any, selector: str) -> str:
    """The text of the first element matching ``selector`` ("" when there is none), case kept."""
    services = _require_page(page, "get_query_text")
    js = ("(selector) => { try { const el = document.querySelector(selector);"
          " return el ? el.textContent : ''; } catch (e) { return ''; } }")
    value = await services.evaluate(f"({js})({json.dumps(selector)})")
    return value if isinstance(value, str) else ""


@REGISTRY.register("get_query_text_lowercase")
async def get_query_text_lowercase(ctx: HelperContext, page: Any, selector: str) -> str:
    return (await get_query_text(ctx, page, selector)).lower()


@REGISTRY.register("reddit_get_post_url")
async def reddit_get_post_url(ctx: HelperContext, url: str) -> str:
    """A forum comment or post URL cut back to the post (``/f/<forum>/<id>/``); other URLs unchanged."""
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if len(segments) < 4 or segments[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{segments[2]}/{segments[3]}/"
