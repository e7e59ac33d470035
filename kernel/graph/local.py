"""One graph run inside the caller's process: the kernel and the given nodes in the caller's event
loop, the other nodes as child processes, as ``launch run`` starts them. The test harness
(kernel.testing) and the Gymnasium env (kernel.gym) both start, host and stop their graphs here, so
there is one way to do it: the nodes that live in the caller's process (a test's probe, the
stand-in for the agent a Gymnasium caller plays) are ordinary nodes with a runtime of their own.

    graph = LocalGraph(launch_file, run_dir, local={"probe": probe_node})
    await graph.open(ready_timeout=60)   # every node ready, then the run started
    ...
    await graph.close()                  # the nodes stopped, the kernel closed, the ipc folder gone
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Mapping, Sequence

from rich.console import Console

from kernel.graph.core import Kernel
from kernel.graph.runner import open_graph
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import LaunchFile
from kernel.sdk.installed import import_root
from kernel.sdk.node import Node
from kernel.sdk.runtime import NodeRuntime

LOCAL_STOP_S = 3.0  # how long a local node may take to stop once the kernel told it to


class LocalGraph:
    """``launch_file`` run with the nodes of ``local`` (node id -> node) in this process's loop and
    every other node as a process; ``shipping`` names processes told to ship their results over the
    bus (as a node on another machine does); ``pythonpath`` goes before the installed tree's root in
    the processes' PYTHONPATH."""

    def __init__(self, launch_file: LaunchFile, run_dir: Path, *, local: Mapping[str, Node],
                 console: Console | None = None, trace: str | None = None, shipping: Sequence[str] = (),
                 pythonpath: Sequence[str] = ()) -> None:
        self.launch_file = launch_file
        self.run_dir = run_dir
        self.local = dict(local)
        self.console = console or Console(stderr=True, quiet=True)
        self.trace = trace
        self.shipping = set(shipping)
        self.pythonpath = list(pythonpath)
        self.exits: list[tuple[str, int | None, bool]] = []
        """Each process's exit: node id, exit code, whether it is restarted."""
        self.runtimes: dict[str, NodeRuntime] = {}
        self._tasks: list[asyncio.Task[int]] = []
        self._cleanup = contextlib.AsyncExitStack()  # what ``close`` undoes, in reverse order

    async def open(self, *, ready_timeout: float = 60.0, run: bool = True) -> None:
        """Start every node, wait until all are ready, then (by default) start the run."""
        specs = {s.id: s for s in self.launch_file.nodes}
        self.kernel: Kernel
        self.kernel, self.ipc_dir, env = await open_graph(self.launch_file, self.run_dir, self._cleanup,
                                                          trace=self.trace, keys=None)
        self._cleanup.push_async_callback(self._stop_local)  # last: once the kernel told them to stop
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*self.pythonpath, str(import_root()),
                                                        os.environ.get("PYTHONPATH")) if p)

        def on_exit(node_id: str, code: int | None, restart: bool) -> None:
            self.exits.append((node_id, code, restart))
            self.kernel.node_exited(node_id, code, restart)

        processes = [s for s in self.launch_file.nodes if s.id not in self.local]
        self.supervisor = Supervisor(processes, env, self.run_dir / "logs", self.console, on_exit)
        self.supervisor.shipping |= self.shipping
        self.kernel.ships = self.supervisor.ships_results
        self._cleanup.push_async_callback(self.supervisor.stop_all, self.kernel.stop_nodes)
        await self.supervisor.start_all()
        for node_id, node in self.local.items():
            rt = NodeRuntime(node, node_id, self.kernel.endpoint, inbox_dir=str(self.ipc_dir),
                             exit_on_orphan=False, params=specs[node_id].params)
            self.runtimes[node_id] = rt
            self._tasks.append(asyncio.ensure_future(rt.main()))
        await asyncio.wait_for(self.kernel.ready_event.wait(), ready_timeout)
        if run:
            await self.start_run()

    async def start_run(self) -> None:
        """Start the run (every node is ready) and wait until the local nodes have heard it."""
        self.kernel.start()
        for rt in self.runtimes.values():
            await asyncio.wait_for(rt.wait_started(), 10)

    async def close(self) -> None:
        """Stop the nodes, close the kernel, remove the ipc folder; again, or before ``open``: nothing."""
        await self._cleanup.aclose()

    async def _stop_local(self) -> None:
        for task in self._tasks:
            try:
                await asyncio.wait_for(task, LOCAL_STOP_S)
            except Exception:  # a timeout included
                task.cancel()
