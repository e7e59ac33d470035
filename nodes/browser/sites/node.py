"""The site node: one local web site, served by uvicorn in a child process it supervises.

Launch file::

    classifieds:
      uses: "nodes.browser.sites.node:SiteNode"
      params: {site: classifieds, port: 0, seed: 0}

Services for the browser env and the judges: ``site.url`` (the base URL), ``site.reset`` (restore
the seeded state; returns the seconds it took), ``site.attributes`` (every stored image and what it
shows: the answer key of visual questions), ``site.login`` (a Playwright storage state logged in as
the site's known account, or ``{username}``, or the one it keeps for ``{site}``: what a task's
``storage_state`` stands for), and the leases that let browser replicas share the site
(lease.py): ``site.lease`` ({holder, mode: shared|exclusive, timeout_s}), ``site.release``
({holder} or {holders: [...]}) and ``site.leases`` (who holds and waits, and the record of grants,
releases and resets with their wall-clock times). A ``site.reset`` naming a ``holder`` needs that
holder's exclusive lease; one without takes an exclusive lease just for the reset, so it never
lands under a running episode either. The record is also written to ``RUN/sites/<node>.jsonl``."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Literal

from pydantic import Field

from kernel.sdk.node import Node, NodeParams, service
from nodes.browser.sites.lease import LeaseBook
from nodes.browser.sites.supervise import SiteServer, http_json


class SiteParams(NodeParams):
    site: Literal["classifieds", "wiki", "shopping", "forum", "homepage", "forge"] = Field(
        description="which site this node serves")
    port: int = Field(0, ge=0, le=65535, description="TCP port on 127.0.0.1; 0 picks a free one")
    seed: int = Field(0, description="the content seed: the same seed gives the same site, images included")
    size: int | None = Field(None, ge=1, le=5000, description="how many listings, articles, products, posts or "
                             "projects (default: the site's own)")
    links: dict[str, str] = Field(default_factory=dict, description="other sites' base URLs by name, which the "
                                  "homepage lists (e.g. {classifieds: 'http://127.0.0.1:9980'})")
    max_restarts: int = Field(3, ge=0, description="times a dead server is started again before the node exits")
    startup_timeout_s: float = Field(60.0, gt=0, description="how long a start may take before it is an error")
    lease_timeout_s: float = Field(120.0, gt=0, description="longest wait for a lease when the request names none "
                                   "(a bare site.reset waits this long for running episodes to finish)")


class SiteNode(Node):
    Params = SiteParams
    params: SiteParams

    async def setup(self) -> None:
        p = self.params
        self.server = SiteServer(p.site, p.port, p.seed, p.size, dict(p.links), self.log,
                                 max_restarts=p.max_restarts, startup_timeout_s=p.startup_timeout_s)
        self.base_url = await self.server.start()
        self.record: Any = None
        if self.run_dir is not None:
            (self.run_dir / "sites").mkdir(parents=True, exist_ok=True)
            self.record = open(self.run_dir / "sites" / f"{self.id}.jsonl", "a", buffering=1)  # noqa: SIM115
        self.leases = LeaseBook(p.site, on_event=self._write)
        self.resets = 0
        self.resets_asked = 0
        self._summarize()

    def _summarize(self) -> None:
        book = self.leases
        self.summarize("site", {"site": self.params.site, "url": self.base_url, "seed": self.params.seed,
                                "resets": self.resets, "lease_grants": book.grants, "lease_waits": book.waits,
                                "lease_max_wait_s": book.max_wait_s})

    def _write(self, event: dict[str, Any]) -> None:
        """One line of RUN/sites/<node>.jsonl per grant, release and reset."""
        if self.record is not None:
            self.record.write(json.dumps(event) + "\n")

    async def teardown(self) -> None:
        await self.server.stop()
        if getattr(self, "record", None) is not None:
            self.record.close()

    @service("site.url")
    def url(self, body: Any = None) -> str:
        return self.base_url

    @service("site.reset")
    async def reset(self, body: Any = None) -> dict[str, Any]:
        """Restore the seeded state: under the named holder's exclusive lease, or under one taken
        for the reset alone (waiting for every running episode's lease to end)."""
        holder = _field(body, "holder", str, None)
        own = holder is None
        if own:
            self.resets_asked += 1
            holder = f"site.reset#{self.resets_asked}"
            await self._acquire(holder, "exclusive", _field(body, "timeout_s", (int, float), self.params.lease_timeout_s))
        elif not self.leases.holds_exclusive(holder):
            raise ValueError(f"site {self.params.site}: {holder} asks for a reset without holding its exclusive lease "
                             f"(site.lease with mode exclusive first); held now: "
                             f"{[h['holder'] for h in self.leases.state()['held']] or 'nothing'}")
        try:
            await self._wait_up()
            started = time.time()
            reply = await asyncio.to_thread(http_json, f"{self.base_url}/reset", "POST")
            self.leases.reset_done(holder, started, time.time() - started)
            self.resets += 1
            self._summarize()
            return reply
        finally:
            if own:
                self._release(holder)

    @service("site.lease")
    async def lease(self, body: Any) -> dict[str, Any]:
        """A shared or exclusive lease for ``holder``, waiting at most ``timeout_s``."""
        holder = _field(body, "holder", str, None)
        if holder is None:
            raise ValueError("site.lease needs {holder: NAME, mode: shared|exclusive, timeout_s: SECONDS}")
        mode = _field(body, "mode", str, "shared")
        return await self._acquire(holder, mode, _field(body, "timeout_s", (int, float), self.params.lease_timeout_s))

    @service("site.release")
    def release(self, body: Any) -> int:
        """Give back the leases of ``holder``, of each of ``holders``, or of every holder whose name
        starts with ``prefix`` (a restarted environment's leftovers); returns how many were held."""
        prefix = _field(body, "prefix", str, None)
        if prefix:
            return sum(self._release(h) for h in list(self.leases.held) if h.startswith(prefix))
        holders = _field(body, "holders", list, None)
        if holders is None:
            holders = [_field(body, "holder", str, None)]
        if not all(isinstance(h, str) for h in holders):
            raise ValueError("site.release needs {holder: NAME} or {holders: [NAME, ...]}")
        return sum(self._release(h) for h in holders)

    @service("site.leases")
    def lease_state(self, body: Any = None) -> dict[str, Any]:
        return {**self.leases.state(), "events": list(self.leases.events)}

    async def _acquire(self, holder: str, mode: str, timeout_s: float) -> dict[str, Any]:
        try:
            return await self.leases.acquire(holder, mode, float(timeout_s))
        finally:
            self._summarize()

    def _release(self, holder: str) -> bool:
        return self.leases.release(holder)

    @service("site.login")
    def login(self, body: Any = None) -> dict[str, Any]:
        """A Playwright storage state (cookies) in which ``username``, or the account kept for the
        benchmark site ``site`` (``shopping_admin``: the shop's admin), or the site's first account is
        logged in: the env's stand-in for WebArena's ``.auth/<site>_state.json`` files."""
        from nodes.browser.sites.framework import login_state
        from nodes.browser.sites.server import site_class

        return login_state(site_class(self.params.site), self.params.seed, self.base_url,
                           _field(body, "username", str, None), _field(body, "site", str, None))

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


def _field(body: Any, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    """``body[key]`` checked against ``kind``; ``default`` where the body or the key is absent."""
    if body is None:
        return default
    if not isinstance(body, dict):
        raise ValueError(f"a site service body is a mapping, not {type(body).__name__}")
    value = body.get(key, default)
    if value is not None and not isinstance(value, kind):
        raise ValueError(f"{key} must be {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
    return value
