"""The site node: one local web site, served by uvicorn in a child process it supervises.

Launch file::

    classifieds:
      uses: "nodes.browser.sites.node:SiteNode"
      params: {site: classifieds, port: 0, seed: 0}

Services for the browser env and the judges: ``site.url`` (the base URL), ``site.reset`` (restore
the seeded state; returns the seconds it took), ``site.attributes`` (every stored image and what it
shows: the answer key of visual questions)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from kernel.sdk.node import Node, NodeParams, service
from nodes.browser.sites.supervise import SiteServer, http_json


class SiteParams(NodeParams):
    site: Literal["classifieds", "wiki", "shopping", "forum", "homepage"] = Field(
        description="which site this node serves")
    port: int = Field(0, ge=0, le=65535, description="TCP port on 127.0.0.1; 0 picks a free one")
    seed: int = Field(0, description="the content seed: the same seed gives the same site, images included")
    size: int | None = Field(None, ge=1, le=5000, description="how many listings, articles, products or posts "
                             "(default: the site's own)")
    links: dict[str, str] = Field(default_factory=dict, description="other sites' base URLs by name, which the "
                                  "homepage lists (e.g. {classifieds: 'http://127.0.0.1:9980'})")
    max_restarts: int = Field(3, ge=0, description="times a dead server is started again before the node exits")
    startup_timeout_s: float = Field(60.0, gt=0, description="how long a start may take before it is an error")


class SiteNode(Node):
    Params = SiteParams
    params: SiteParams

    async def setup(self) -> None:
        p = self.params
        self.server = SiteServer(p.site, p.port, p.seed, p.size, dict(p.links), self.log,
                                 max_restarts=p.max_restarts, startup_timeout_s=p.startup_timeout_s)
        self.base_url = await self.server.start()
        self.summarize("site", {"site": p.site, "url": self.base_url, "seed": p.seed})

    async def teardown(self) -> None:
        await self.server.stop()

    @service("site.url")
    def url(self, body: Any = None) -> str:
        return self.base_url

    @service("site.reset")
    async def reset(self, body: Any = None) -> dict[str, Any]:
        await self._wait_up()
        return await asyncio.to_thread(http_json, f"{self.base_url}/reset", "POST")

    @service("site.attributes")
    async def attributes(self, body: Any = None) -> list[dict[str, Any]]:
        await self._wait_up()
        return await asyncio.to_thread(http_json, f"{self.base_url}/images.json")

    async def _wait_up(self) -> None:
        """Between a crash and its restart the site does not answer; wait for it (bounded)."""
        for _ in range(200):
            if await asyncio.to_thread(self.server._answers):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"the {self.params.site} site at {self.base_url} does not answer")
