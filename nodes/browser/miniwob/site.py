"""The MiniWoB site node (``miniwob.site``): the installed ``miniwob`` package's ``html/`` folder
(tasks, their shared core JavaScript, FlightWoB's pages) served read-only on 127.0.0.1.

The pages are static files, so one uvicorn server inside the node's own process is enough; it
answers ``site.url`` (the base URL, e.g. ``http://127.0.0.1:41234``) for the environment. Serving
them over http rather than ``file://`` is what FlightWoB's pages need (MiniWoB's own package starts
an http server for them too) and what the browser node's sandbox allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

from pydantic import Field

from kernel.sdk.node import Node, NodeParams, service
from nodes.browser.miniwob import html_dir

__all__ = ["MiniwobSite", "MiniwobSiteParams", "static_app"]


class MiniwobSiteParams(NodeParams):
    port: int = Field(0, ge=0, le=65535, description="TCP port on 127.0.0.1; 0 picks a free one")


def static_app() -> Any:
    """A Starlette app serving the package's ``html/`` folder (no listing, GET and HEAD only)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    return Starlette(routes=[Mount("/", app=StaticFiles(directory=html_dir()), name="miniwob")])


class MiniwobSite(Node):
    """Serves the task pages; ``site.url`` answers their base URL."""

    Params = MiniwobSiteParams
    params: MiniwobSiteParams

    async def setup(self) -> None:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.params.port))
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(static_app(), log_level="warning", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.serving = asyncio.get_running_loop().create_task(self.server.serve(sockets=[sock]))
        while not self.server.started:
            if self.serving.done():
                self.serving.result()  # the server's own error, raised here
                raise RuntimeError(f"the MiniWoB site on {self.base_url} stopped before it started")
            await asyncio.sleep(0.02)
        self.summarize("site", {"site": "miniwob", "url": self.base_url, "root": str(html_dir())})

    async def teardown(self) -> None:
        if hasattr(self, "server"):
            self.server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.serving, 5.0)

    @service("site.url")
    def url(self, body: Any = None) -> str:
        return self.base_url
