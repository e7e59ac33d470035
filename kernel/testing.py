"""Test a node without a launch file, two ways.

:class:`FakeRuntime`: the node alone, in the test's own event loop, with no kernel, process or
socket; the test feeds its inputs, calls its services, scripts the actions an environment waits
for, and reads what it published, requested and ended (docs/nodes.md):

    rt = FakeRuntime(HelloEnv(), actions=["right", "right", "right"], episodes=1)
    await rt.play()
    assert rt.ended()[0]["status"] == "completed"

:class:`Harness`: a real kernel, the nodes under test as real processes, and a probe node in the
test's own event loop that feeds their inputs and reads their outputs:

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
import inspect
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rich.console import Console

from kernel.bus.episode_ids import episode_id
from kernel.bus.inputs import InputQueue
from kernel.bus.protocol import DATA, Message
from kernel.graph.core import Kernel
from kernel.graph.local import LocalGraph
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import BusSpec, InputSpec, LaunchFile, NodeSpec, RunSpec
from kernel.sdk.node import Node
from kernel.sdk.runtime import NodeRuntime

InputDecl = str | Sequence[str] | Mapping[str, Any]

Action = Any | Callable[[Any], Any]
"""A scripted action: a body, or a function of the last ``obs`` body the node published."""


class ScriptedClock:
    """The clock an environment node waits on, answered from a script: each ``actions`` call takes
    the next entry for the agent; past the script, a stop request ends the episode."""

    mode = "lockstep"
    wait_for = None

    def __init__(self, rt: FakeRuntime, script: Sequence[Action], agent: str) -> None:
        self.rt, self.script, self.agent = rt, list(script), agent
        self.asked: list[int] = []
        """The steps the node asked actions for, in order."""

    async def actions(self, step: int, input: str = "action") -> dict[str, Any]:
        self.asked.append(step)
        if not self.script:
            return {self.agent: {"stop": True, "reason": "script over"}}
        entry = self.script.pop(0)
        if callable(entry):
            seen = self.rt.bodies("obs")
            entry = entry(seen[-1] if seen else None)
        return {self.agent: entry}

    def new_episode(self) -> None:
        pass


class FakeRuntime:
    """A node's runtime in memory, for unit tests of one node: no kernel, no process, no socket.

    It stands where :class:`kernel.sdk.runtime.NodeRuntime` stands (``node._rt``), so the node runs
    its own code unchanged, and keeps what the node did in lists: ``published`` (output, body,
    step), ``requests`` (node, service, body; ``episode.end`` among them), ``steps`` (what
    ``record_step`` recorded). The test drives it: ``feed`` a message into an input (read by
    ``recv``), ``deliver`` one to the input's handler, ``call`` a service, ``play`` a driver's
    ``run``; ``actions`` scripts what an environment's clock hands out, one entry a step, for
    the agent ``agent``; ``episodes`` is how many the kernel deals (ids as the kernel makes them).
    ``replies`` answers requests by service name: a value, or a function of the request's body."""

    def __init__(self, node: Node, node_id: str = "node", *, params: Mapping[str, Any] | None = None,
                 actions: Sequence[Action] = (), agent: str = "agent", episodes: int = 0, seed: int = 0,
                 sources: Mapping[str, Sequence[str]] | None = None,
                 readers: Mapping[str, Sequence[str]] | None = None, observers: Sequence[str] = (),
                 replies: Mapping[str, Any] | None = None) -> None:
        self.node, self.id = node, node_id
        node.id = node_id
        node.params = type(node).parse_params(params)
        ins, outs = node.ports(node.params)
        node.inputs, node.outputs = tuple(ins), tuple(outs)  # type: ignore[misc]
        node._rt = self  # type: ignore[assignment]
        self.clock = ScriptedClock(self, actions, agent)
        self.run: dict[str, Any] = {"seed": seed}
        self.run_dir: str | None = None  # nothing is written: attach_images returns no paths
        self.ships = False
        self.outbox = None
        self.summary_sections: dict[str, dict[str, Any]] = {}
        self.queues = {name: InputQueue(name, "fifo", 1_000_000) for name in node.inputs}
        self.episodes = [{"id": episode_id(i), "index": i, "seed": seed + i} for i in range(episodes)]
        self._sources = {k: list(v) for k, v in (sources or {}).items()}
        self._default_source = agent
        self._readers = {k: list(v) for k, v in (readers or {}).items()}
        self.observers = frozenset(observers)  # readers that only watch, as the kernel's welcome names them
        self.replies = dict(replies or {})
        self.published: list[tuple[str, Any, int | None]] = []
        self.requests: list[tuple[str, str, Any]] = []
        self.recorded: list[dict[str, Any]] = []
        self._seq = 0

    # what the node calls (Node's API) -----------------------------------------------------------
    async def publish(self, output: str, body: Any, *, step: int | None = None) -> None:
        if output not in self.node.outputs:
            raise ValueError(f"node {self.id!r} has no output {output!r}; declared outputs: {list(self.node.outputs)}")
        self.published.append((output, body, step))

    async def request(self, node: str, svc: str, body: Any = None, *, timeout: float = 10.0) -> Any:
        self.requests.append((node, svc, body))
        reply = self.replies.get(svc)
        return reply(body) if callable(reply) else reply

    async def next_episode(self) -> dict[str, Any] | None:
        self.clock.new_episode()
        return self.episodes.pop(0) if self.episodes else None

    def queue(self, input: str) -> InputQueue:
        if input not in self.queues:
            raise KeyError(f"node {self.id!r} has no input {input!r}; inputs: {sorted(self.queues) or 'none'}")
        return self.queues[input]

    def sources(self, input: str) -> list[str]:
        return list(self._sources.get(input, [self._default_source]))

    def readers(self, output: str, *, observers: bool = True) -> list[str]:
        return [r for r in self._readers.get(output, ()) if observers or r not in self.observers]

    def record_step(self, record: dict[str, Any]) -> None:
        self.recorded.append(record)

    def node_run_dir(self) -> Path | None:
        return None

    async def wait_started(self) -> None:
        return None

    # what the test calls -------------------------------------------------------------------------
    def message(self, input: str, body: Any, *, src: str | None = None, step: int | None = None) -> Message:
        """A message on ``input`` as the bus would deliver it (from the input's first source)."""
        self._seq += 1
        return Message(DATA, src or self.sources(input)[0], input, body, dst=self.id, seq=self._seq, ts=time.time(),
                       step=step)

    def feed(self, input: str, body: Any, *, src: str | None = None, step: int | None = None) -> None:
        """Queue a message on ``input``, for the node's ``recv``."""
        self.queue(input).put(self.message(input, body, src=src, step=step))

    async def deliver(self, input: str, body: Any, *, src: str | None = None, step: int | None = None) -> None:
        """Hand a message to the node's ``@on_input`` handler of ``input`` and wait for it."""
        for _, member in inspect.getmembers(type(self.node)):
            if getattr(member, "__framebus_input__", None) == input:
                await getattr(self.node, member.__name__)(self.message(input, body, src=src, step=step))
                return
        raise KeyError(f"node {self.id!r} has no handler of input {input!r}")

    async def call(self, service: str, body: Any = None) -> Any:
        """Call the node's service ``service`` as a peer would; its reply."""
        for _, member in inspect.getmembers(type(self.node)):
            if getattr(member, "__framebus_service__", None) == service:
                reply = getattr(self.node, member.__name__)(body)
                return await reply if inspect.isawaitable(reply) else reply
        raise KeyError(f"node {self.id!r} serves no {service!r}")

    async def play(self, *, teardown: bool = True) -> None:
        """``setup``, then the node's ``run`` (a driver's loop: until no episode is left), then
        ``teardown`` (unless not asked for, to look at the node afterwards)."""
        await self.node.setup()
        try:
            run = getattr(self.node, "run", None)
            if run is not None:
                await run()
        finally:
            if teardown:
                await self.node.teardown()

    def bodies(self, output: str) -> list[Any]:
        """The bodies published on ``output``, in order."""
        return [b for o, b, _ in self.published if o == output]

    def requested(self, service: str) -> list[Any]:
        """The bodies of the node's requests of ``service`` (of any node), in order."""
        return [b for _, svc, b in self.requests if svc == service]

    def ended(self) -> list[dict[str, Any]]:
        """The bodies of the node's ``episode.end`` requests, in order."""
        return self.requested("episode.end")


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
        local = {spec.id: node for node, spec in self._locals}
        self.graph = LocalGraph(self.launch_file, self.run_dir, local=local, console=self.console, trace=self.trace,
                                shipping=sorted(self._shipping), pythonpath=[os.getcwd()])
        self.exits = self.graph.exits
        self._cleanup.push_async_callback(self.graph.close)
        await self.graph.open(ready_timeout=ready_timeout, run=run)

    # the graph's parts, as tests reach them (also after a start that failed half way)
    @property
    def kernel(self) -> Kernel:
        return self.graph.kernel

    @property
    def ipc_dir(self) -> Path:
        return self.graph.ipc_dir

    @property
    def supervisor(self) -> Supervisor:
        return self.graph.supervisor

    @property
    def probe_runtime(self) -> NodeRuntime:
        return self.graph.runtimes["probe"]

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

    async def __aenter__(self) -> Harness:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        if self._own_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
