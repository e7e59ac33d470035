"""Test a node without a launch file: a real kernel, the nodes under test as real processes, and a
probe node in the test's own event loop that feeds their inputs and reads their outputs.

    async with Harness() as h:
        h.add("agent", HelloAgent, inputs={"obs": "probe/obs"})
        probe = h.probe(inputs={"action": "agent/action"}, outputs=["obs"])
        await h.start()
        await probe.publish("obs", {"position": 0, "target": 3}, step=0)
        msg = await probe.recv("action")
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from rich.console import Console

from kernel.graph.runner import open_graph
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import BusSpec, InputSpec, LaunchFile, NodeSpec, RunSpec
from kernel.sdk.installed import import_root
from kernel.sdk.node import Node
from kernel.sdk.runtime import NodeRuntime

InputDecl = str | Sequence[str] | Mapping[str, Any]


class Probe(Node):
    """The test's own node; its inputs and outputs are set per harness."""

    def __init__(self, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        self.inputs = tuple(inputs)  # type: ignore[misc]
        self.outputs = tuple(outputs)  # type: ignore[misc]


def input_spec(decl: InputDecl) -> InputSpec:
    """An input written as in a launch file: "node/output", a list of them, or a mapping with ``from``."""
    fields = dict(decl) if isinstance(decl, Mapping) else {"from": decl}
    src = fields.pop("from")
    return InputSpec(sources=[src] if isinstance(src, str) else list(src), **fields)


def node_spec(node_id: str, uses: str | None, params: Mapping[str, Any] | None,
              inputs: Mapping[str, InputDecl] | None, clock: Mapping[str, Any] | None, **more: Any) -> NodeSpec:
    return NodeSpec(id=node_id, uses=uses, params=dict(params or {}), clock=dict(clock) if clock else None,
                    inputs={k: input_spec(v) for k, v in (inputs or {}).items()}, **more)


class Harness:
    def __init__(self, *, episodes: int | None = None, seed: int = 0, heartbeat: float = 0.2,
                 grace: float | None = None, max_message_bytes: int | None = None, trace: str | None = None,
                 run_dir: Path | None = None, quiet: bool = False, records_delay: float | None = None) -> None:
        self.specs: list[NodeSpec] = []
        self.run_spec = RunSpec(episodes=episodes, seed=seed)
        self.bus = BusSpec(heartbeat=heartbeat, **({"max_message_bytes": max_message_bytes} if max_message_bytes else {}),
                           **({"grace": grace} if grace is not None else {}),
                           **({"records_delay": records_delay} if records_delay is not None else {}))
        self.trace = trace
        self._own_dir = run_dir is None
        self.run_dir = run_dir or Path(tempfile.mkdtemp(prefix="fbtest-"))
        self.console = Console(stderr=True, quiet=quiet)
        self._probe: Probe | None = None
        self._locals: list[tuple[Node, NodeSpec]] = []
        self._local_tasks: list[asyncio.Task[int]] = []
        self._cleanup = contextlib.AsyncExitStack()  # what ``stop`` undoes, in reverse order
        self._shipping: set[str] = set()

    def add(self, node_id: str, cls: type[Node] | str, *, params: Mapping[str, Any] | None = None,
            inputs: Mapping[str, InputDecl] | None = None, restart: Mapping[str, Any] | None = None,
            clock: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None,
            cmd: Sequence[str] | None = None, ship_results: bool = False) -> None:
        """Add a node under test; it runs as its own process, as under ``launch run``.

        ``ship_results``: the node is told to send its results (step records, pictures, trace and
        log lines) to the kernel over the bus, as a node on another machine is (kernel.bus.outbox)."""
        if ship_results:
            self._shipping.add(node_id)
        uses = None if cmd else (cls if isinstance(cls, str) else f"{cls.__module__}:{cls.__qualname__}")
        self.specs.append(node_spec(node_id, uses, params, inputs, clock, cmd=list(cmd) if cmd else None,
                                    restart=dict(restart or {}), env=dict(env or {})))

    def probe(self, *, inputs: Mapping[str, InputDecl] | None = None, outputs: Sequence[str] = (),
              clock: Mapping[str, Any] | None = None) -> Probe:
        """The in-test node: ``await probe.publish(...)``, ``await probe.recv(...)``, ``probe.request(...)``."""
        self._probe = Probe(list(inputs or {}), outputs)
        self.local("probe", self._probe, inputs=inputs, clock=clock)
        return self._probe

    def local(self, node_id: str, node: Node, *, params: Mapping[str, Any] | None = None,
              inputs: Mapping[str, InputDecl] | None = None, clock: Mapping[str, Any] | None = None) -> Node:
        """Run ``node`` in the test's own process and event loop (not as a child process), so the
        test can reach into it: post pygame key events to a human player, say."""
        uses = f"{type(node).__module__}:{type(node).__qualname__}"
        self._locals.append((node, node_spec(node_id, uses, params, inputs, clock)))
        return node

    @property
    def launch_file(self) -> LaunchFile:
        nodes = self.specs + [spec for _, spec in self._locals]
        return LaunchFile(name="harness", source=Path("<harness>"), bus=self.bus, nodes=nodes,
                          run=self.run_spec)

    async def start(self, *, ready_timeout: float = 60.0, run: bool = True) -> None:
        """Start every node, wait until all are ready, then (by default) start the run."""
        self.kernel, self.ipc_dir, env = await open_graph(self.launch_file, self.run_dir, self._cleanup,
                                                          trace=self.trace, keys=None)
        self._cleanup.push_async_callback(self._stop_locals)  # once the kernel told them to stop
        root = str(import_root())
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), root, os.environ.get("PYTHONPATH")) if p)
        self.exits: list[tuple[str, int | None, bool]] = []

        def on_exit(node_id: str, code: int | None, restart: bool) -> None:
            self.exits.append((node_id, code, restart))
            self.kernel.node_exited(node_id, code, restart)

        self.supervisor = Supervisor(self.specs, env, self.run_dir / "logs", self.console, on_exit)
        self.supervisor.shipping |= self._shipping
        self.kernel.ships = self.supervisor.ships_results
        self._cleanup.push_async_callback(self.supervisor.stop_all, self.kernel.stop_nodes)
        await self.supervisor.start_all()
        runtimes = []
        for node, spec in self._locals:
            rt = NodeRuntime(node, spec.id, self.kernel.endpoint, inbox_dir=str(self.ipc_dir), exit_on_orphan=False,
                             params=spec.params)
            if node is self._probe:
                self.probe_runtime = rt
            runtimes.append(rt)
            self._local_tasks.append(asyncio.ensure_future(rt.main()))
        await asyncio.wait_for(self.kernel.ready_event.wait(), ready_timeout)
        if run:
            self.kernel.start()
            for rt in runtimes:
                await asyncio.wait_for(rt.wait_started(), 10)

    async def wait_finished(self, timeout: float = 30.0) -> tuple[str, str]:
        return await asyncio.wait_for(asyncio.shield(self.kernel.finished), timeout)

    def pid(self, node_id: str) -> int:
        proc = self.supervisor.procs[node_id].process
        assert proc is not None
        return proc.pid

    def kill(self, node_id: str, sig: int = signal.SIGKILL) -> None:
        os.kill(self.pid(node_id), sig)

    async def stop(self) -> None:
        """Stop the nodes, close the kernel, remove the ipc folder; again, or before ``start``: nothing."""
        await self._cleanup.aclose()

    async def _stop_locals(self) -> None:
        for task in self._local_tasks:
            try:
                await asyncio.wait_for(task, 3.0)
            except Exception:  # a timeout included
                task.cancel()

    async def __aenter__(self) -> Harness:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        if self._own_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
