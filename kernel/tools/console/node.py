"""The console as a node of the graph (``launch run --ui`` adds it): one ``latest`` input per
output it shows, a :class:`~kernel.tools.console.hub.Hub`, and uvicorn on the node's own loop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from kernel.sdk.node import Node, NodeParams
from kernel.tools.console import input_name


class ConsoleParams(NodeParams):
    port: int = Field(ge=0, le=65535, description="the loopback port of the page")
    token: str = Field(min_length=16, description="the secret every request and socket must carry",
                       json_schema_extra={"secret": True})  # written redacted in the run's launch.yaml
    sources: list[str] = Field(default_factory=list, description="node/output read by inputs in0, in1, ...")
    humans: list[str] = Field(default_factory=list, description="the agent.web nodes a page may act for")
    fps: float = Field(default=8.0, gt=0, le=60, description="most frames a second sent per environment")
    max_px: int = Field(default=480, ge=32, description="frames are shrunk to this on their longer side")
    quality: int = Field(default=70, ge=10, le=95, description="JPEG quality")


class ConsoleNode(Node):
    Params = ConsoleParams
    params: ConsoleParams

    def ports(self, params: Any) -> tuple[Sequence[str], Sequence[str]]:
        return [input_name(i) for i in range(len(params.sources))], ()

    async def setup(self) -> None:
        from kernel.tools.console.app import build_app, serve
        from kernel.tools.console.hub import Hub

        self.hub = Hub(self._call, run_dir=self.run_dir, humans=self.params.humans, fps=self.params.fps,
                       max_px=self.params.max_px, quality=self.params.quality)
        self.server = await serve(build_app(self.hub, self.params.token, self.params.port), self.params.port)
        loop = asyncio.get_running_loop()
        self.readers = [loop.create_task(self._read(input_name(i), src))
                        for i, src in enumerate(self.params.sources)]
        self.hub.start()
        self.log.info("console listening", port=self.params.port)

    async def _call(self, node: str, svc: str, body: dict[str, Any]) -> Any:
        return await self.request(node, svc, body, timeout=5.0)

    async def _read(self, name: str, source: str) -> None:
        node, output = source.split("/", 1)
        while True:
            msg = await self.recv(name)
            try:
                self.hub.on_message(msg.src or node, output, msg.body, msg.step)
            except Exception as exc:  # one odd body must not end the console
                self.log.warning("console could not show a message", source=source, error=str(exc))

    async def teardown(self) -> None:
        for task in getattr(self, "readers", []):
            task.cancel()
        if hasattr(self, "hub"):
            await self.hub.stop()
        if hasattr(self, "server"):
            self.server.should_exit = True
            try:
                await asyncio.wait_for(self.server.framebus_task, 3.0)
            except (asyncio.TimeoutError, Exception):
                pass
