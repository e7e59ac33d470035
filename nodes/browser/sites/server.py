"""One site's web server: ``python -m nodes.browser.sites.server --site NAME --port N --seed S``.

Builds the seeded site, then serves it with uvicorn on 127.0.0.1 only. The site node starts this
as its child process; it is also the way to run a site by hand."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

SITES = {
    "classifieds": "nodes.browser.sites.classifieds:Classifieds",
    "wiki": "nodes.browser.sites.wiki:Wiki",
    "shopping": "nodes.browser.sites.shopping:Shopping",
    "forum": "nodes.browser.sites.forum:Forum",
    "homepage": "nodes.browser.sites.homepage:Homepage",
    "forge": "nodes.browser.sites.forge:Forge",
}


def site_class(name: str) -> type:
    if name not in SITES:
        raise ValueError(f"unknown site {name!r}; allowed: {', '.join(SITES)}")
    module, _, cls = SITES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.browser.sites.server", description=__doc__)
    parser.add_argument("--site", required=True, choices=sorted(SITES))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=None, help="how many listings, products, posts or articles")
    parser.add_argument("--links", default="{}", help="JSON: other sites' base URLs (the homepage lists them)")
    args = parser.parse_args(argv)
    import uvicorn

    site = site_class(args.site)(seed=args.seed, size=args.size, links=json.loads(args.links))
    print(f"site {args.site} built in {site.build_s:.3f} s (seed {args.seed}, size {site.size})", flush=True)
    app = site.app()
    if hasattr(site, "close"):  # files outside the process (the forge's repositories) go when the server stops
        app.router.lifespan_context = _closing(app.router.lifespan_context, site.close)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
    return 0


def _closing(lifespan: Callable[[Any], Any], close: Callable[[], None]) -> Callable[[Any], Any]:
    """``lifespan`` followed by ``close()`` at shutdown: uvicorn ends a stopped server by raising the
    signal again, so neither atexit nor finalizers would run."""

    @contextlib.asynccontextmanager
    async def run(app: Any) -> AsyncIterator[Any]:
        try:
            async with lifespan(app) as state:
                yield state
        finally:
            close()

    return run


if __name__ == "__main__":
    sys.exit(main())
