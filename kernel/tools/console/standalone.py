"""``launch ui`` for a run started without ``--ui``: a console in this process, fed by the kernel's
services (``status``, ``stats``, ``ctl.*``) through a KernelClient and by the run's results store.
It shows the graph, its counters, the episode table and agents' step records, and steers; frames
and observations need a node of the graph (``launch run --ui``)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from kernel.tools.announce import alive
from kernel.tools.client import KernelClient


CTL_TIMEOUT_S = 20.0


def serve_forever(info: dict[str, Any], port: int, token: str, ready: Callable[[], None]) -> int:
    """Serve until the run ends (0) or Ctrl-C (130); ``ready`` is called once the page can be opened."""
    try:
        return asyncio.run(_serve(info, port, token, ready))
    except KeyboardInterrupt:
        return 130


async def _serve(info: dict[str, Any], port: int, token: str, ready: Callable[[], None]) -> int:
    from kernel.tools.console.app import build_app, serve
    from kernel.tools.console.hub import Hub

    pool = ThreadPoolExecutor(1, thread_name_prefix="console-ctl")  # one socket, one thread
    client = KernelClient(info["endpoint"], curve=info.get("curve"))

    async def call(node: str, svc: str, body: dict[str, Any]) -> Any:
        if node != "kernel":
            raise ValueError(f"this console reaches only the kernel, not node {node!r}: start the run with --ui")
        # A kernel busy with a fast run can take seconds to answer on a loaded machine: a command the page
        # sent is better answered late than refused after the kernel obeyed it. The status poll keeps the
        # client's short wait, so the console ends soon after its run does.
        timeout = CTL_TIMEOUT_S if svc.startswith("ctl.") else None
        return await asyncio.get_running_loop().run_in_executor(pool, client.call, svc, body, timeout)

    hub = Hub(call, run_dir=Path(info["run_dir"]), humans=[], has_data=False)
    server = await serve(build_app(hub, token, port), port)
    hub.start()
    ready()
    try:
        while not server.framebus_task.done():
            await asyncio.sleep(0.5)
            if not alive(int(info["pid"])):
                break  # the run ended
    finally:
        await hub.stop()
        server.should_exit = True
        await asyncio.gather(server.framebus_task, return_exceptions=True)
        pool.shutdown(wait=False)
        client.close()
    return 0
