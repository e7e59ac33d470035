"""``launch run --backend ray``: node processes placed on a Ray cluster, messages still on ZeroMQ.

Ray decides *where* a node runs (its ``resources:`` request: CPUs, GPUs for a model server, memory,
named resources); it does not carry framebus messages. Each node gets one Ray actor, and the actor
starts the node's ordinary process (``python -m kernel.sdk.run_node`` or its ``cmd:``) on its machine, so
a node behaves the same under both backends: same entry point, same exit codes, its own session,
and PR_SET_PDEATHSIG so it dies with the actor. The actor relays the process's output and exit code
to the supervisor on the launching machine, which keeps its restart policy and its stop escalation.
A killed actor (or a lost machine) reads as a node killed by SIGKILL, so ``restart: on-failure``
starts a fresh actor, wherever Ray finds room.

Nodes talk ZeroMQ TCP to the kernel on the launching machine and to each other, under CURVE like
any TCP bus (kernel.bus.curve, kernel.graph.keys).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable, Sequence

import structlog
from pydantic import BaseModel, ByteSize, ConfigDict, Field, ValidationError, field_validator, model_validator
from rich.console import Console

from kernel.bus import outbox
from kernel.bus.lifeline import die_with_parent
from kernel.graph.supervisor import Proc, Supervisor
from kernel.launchfile import LaunchError, LaunchFile, NodeSpec, is_loopback
from kernel.sdk.processes import signal_group
from kernel.tools.ray_placement import Landing, Machine, actor_options, describe, machines, plan

log = structlog.get_logger("framebus.ray")

PLACEMENT_TIMEOUT_S = float(os.environ.get("FRAMEBUS_RAY_PLACEMENT_TIMEOUT", "120"))
STILL_WAITING_S = (15.0, 45.0, 90.0)  # when a node that Ray has not started yet is said to be waiting
LOCAL_OBJECT_STORE_BYTES = 200 * 1024**2  # framebus data never goes through Ray's object store
READ_WAIT_S = 1.0  # how long one output poll waits in the actor for something new
ACTOR_LOST = -int(signal.SIGKILL)  # the exit code of a node whose actor died: "killed"
_MAX_BUFFERED_LINES = 10_000


class RayResources(BaseModel):
    """A node's ``resources:`` as Ray's actor options. The launch file only requires a mapping (the local
    backend ignores it); ``launch run`` and ``launch validate`` check it against this model when given
    ``--backend ray``, so a mistake is reported at its line before any Ray instance starts.

    The names follow Ray's actor options, so a request reads the same here and in Ray's docs.
    """

    model_config = ConfigDict(extra="forbid")

    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    memory: ByteSize | None = None  # bytes; "4GiB" and "500MB" are accepted
    accelerator_type: str | None = Field(default=None, min_length=1)
    custom: dict[str, float] = Field(default_factory=dict)  # named Ray resources, e.g. {TPU: 4}

    @field_validator("memory", mode="wrap")
    @classmethod
    def _memory_size(cls, value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(f"memory {value!r} is not a size; write bytes (4000000000) or a number with a unit "
                             "(4GiB, 512MiB, 2GB)") from None

    @model_validator(mode="after")
    def _ray_quantities(self) -> RayResources:
        # Ray refuses fractions above 1 (a process gets half a GPU or whole GPUs, never 1.5).
        amounts = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, **self.custom}
        for name, amount in amounts.items():
            if amount is not None and amount > 1 and not float(amount).is_integer():
                raise ValueError(f"{name}: {amount} is not allowed; above 1 a resource must be a whole number "
                                 "(fractions only below 1, e.g. 0.5)")
            if amount is not None and amount < 0:
                raise ValueError(f"{name}: must be >= 0, got {amount}")
        return self

    def demand(self) -> dict[str, float]:
        """The request as Ray's resource names, the way ``ray.nodes()`` lists a machine's capacity."""
        demand: dict[str, float] = {}
        if self.num_cpus:
            demand["CPU"] = self.num_cpus
        if self.num_gpus:
            demand["GPU"] = self.num_gpus
        if self.memory:
            demand["memory"] = float(self.memory)
        if self.accelerator_type:
            demand[f"accelerator_type:{self.accelerator_type}"] = 0.001
        demand.update({k: v for k, v in self.custom.items() if v})
        return demand


def _resources(spec: NodeSpec) -> RayResources:
    """A node's request (already checked when the CLI loaded the file with ``--backend ray``)."""
    return RayResources.model_validate(spec.resources or {})


def demand(spec: NodeSpec) -> dict[str, float]:
    """A node's request as Ray's resource names (what a machine must have to take it)."""
    return _resources(spec).demand()


def launching_host(spec: NodeSpec) -> bool:
    """Whether a node writes into the run folder itself (``Node.launching_host``: the recorder), so
    that it runs on the launching machine unless its ``placement:`` says otherwise."""
    if spec.uses is None:
        return False
    from kernel.sdk.registry import load_node_class

    try:
        return bool(getattr(load_node_class(spec.uses), "launching_host", False))
    except Exception:  # checked where it matters (launch-file params); here only the answer counts
        return False


class PlacementError(OSError):
    """Ray could not start a node's actor (no room within the timeout, or the actor failed)."""


def _wait_ref(ref: Any) -> asyncio.Future[Any]:
    """An ObjectRef as an asyncio future on whatever loop runs (uvloop included)."""
    return asyncio.wrap_future(ref.future())


class FramebusNode:
    """The Ray actor that hosts one node process on its machine (the class ``ray.remote`` wraps).

    Methods run in the actor's thread pool (``max_concurrency``), so ``signal`` is served while a
    ``read`` is waiting for output.
    """

    def __init__(self) -> None:
        self._lines: deque[bytes] = deque()
        self._skipped = 0
        self._cond = threading.Condition()
        self._code: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, cmd: Sequence[str] | None, env: dict[str, str], cwd: str) -> dict[str, Any]:
        """Start the node process; returns where it runs."""
        import ray

        argv = list(cmd) if cmd else [sys.executable, "-m", "kernel.sdk.run_node"]
        full = {**os.environ, **env}
        host = full.get("FRAMEBUS_TCP_HOST")
        node_ip = ray.util.get_node_ip_address()
        if host and not is_loopback(host):
            full["FRAMEBUS_TCP_HOST"] = node_ip  # the inbox listens on this machine's address
        # Paths of the launching machine. A node here on another machine ships its results instead
        # (kernel.bus.outbox) and writes its own files in a folder of its own: no run folder is made.
        for key in ("FRAMEBUS_IPC_DIR",) if full.get(outbox.ENV) == "bus" else ("FRAMEBUS_IPC_DIR", "FRAMEBUS_LOG_DIR"):
            if full.get(key):
                Path(full[key]).mkdir(parents=True, exist_ok=True)
        started = threading.Event()
        failure: list[str] = []
        # The process is started from a thread that lives exactly as long as it does: PDEATHSIG
        # fires when the *thread* that forked dies, so a pool thread could kill the node early.
        threading.Thread(target=self._run, args=(argv, full, cwd if os.path.isdir(cwd) else None, started, failure),
                         name="framebus-node", daemon=True).start()
        started.wait()
        if failure:
            raise OSError(failure[0])
        assert self._proc is not None
        context = ray.get_runtime_context()
        return {"pid": self._proc.pid, "node_ip": node_ip, "node_id": context.get_node_id(),
                "hostname": socket.gethostname(),
                "worker_pid": os.getpid(), "actor_id": context.get_actor_id(),
                "assigned": context.get_assigned_resources()}

    def _run(self, argv: list[str], env: dict[str, str], cwd: str | None, started: threading.Event,
             failure: list[str]) -> None:
        try:
            proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        except OSError as exc:
            failure.append(f"cannot start {argv}: {exc}")
            started.set()
            return
        self._proc = proc
        started.set()
        assert proc.stdout is not None
        for line in iter(proc.stdout.readline, b""):
            with self._cond:
                if len(self._lines) >= _MAX_BUFFERED_LINES:  # nobody is reading: keep the newest
                    self._lines.popleft()
                    self._skipped += 1
                self._lines.append(line)
                self._cond.notify_all()
        code = proc.wait()
        with self._cond:
            self._code = code
            self._cond.notify_all()

    def where(self) -> str:
        """The Ray node id of this actor's machine (asked before the node starts: it decides whether
        the node ships its results)."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def read(self, wait_s: float) -> tuple[list[bytes], int | None]:
        """New output lines (waiting up to ``wait_s`` for some), and the exit code once it exited."""
        with self._cond:
            if not self._lines and self._code is None:
                self._cond.wait(wait_s)
            lines = list(self._lines)
            self._lines.clear()
            if self._skipped:
                lines.insert(0, f"[framebus] {self._skipped} output lines were dropped unread\n".encode())
                self._skipped = 0
            return lines, self._code

    def signal(self, sig: int) -> None:
        """Signal the node's process group (its own children too), like the local supervisor."""
        if self._proc is not None and self._proc.returncode is None:
            signal_group(self._proc.pid, sig)


class RayNodeProcess:
    """The launching side of one node in an actor, shaped like the asyncio Process the supervisor expects."""

    def __init__(self, actor: Any, info: dict[str, Any]) -> None:
        self.actor = actor
        self.info = info
        self.pid: int = info["pid"]  # on the actor's machine
        self.returncode: int | None = None
        self.killed = False  # the supervisor killed it (with its actor): no news for the log
        self.stdout = asyncio.StreamReader()
        self._exited = asyncio.Event()
        self.relay = asyncio.ensure_future(self._relay())

    async def _relay(self) -> None:
        from ray.exceptions import RayError

        try:
            while True:
                lines, code = await _wait_ref(self.actor.read.remote(READ_WAIT_S))
                for line in lines:
                    self.stdout.feed_data(line)
                if code is not None:
                    self.returncode = code
                    return
        except RayError as exc:
            if not self.killed:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                self.stdout.feed_data(f"[framebus] the Ray actor running this node is gone: {reason}\n".encode())
            self.returncode = ACTOR_LOST
        except asyncio.CancelledError:
            self.returncode = ACTOR_LOST if self.returncode is None else self.returncode
            raise
        finally:
            self.stdout.feed_eof()
            self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def signal_group(self, sig: int) -> None:
        self.actor.signal.remote(int(sig))


class RayCluster:
    """The Ray connection of one run: a local instance we start (and stop), or a cluster we join."""

    def __init__(self, address: str | None, console: Console) -> None:
        self.address = address
        self.owned = address is None
        self.console = console
        self._actor_class: Any = None
        self.landings: dict[str, Landing] = {}  # node id -> where check_feasible placed it
        self.lf: LaunchFile | None = None  # the run's launch file, for planning a restart anew
        self.home: str | None = None  # the Ray node id of this machine, where the run folder is

    def start(self) -> None:
        try:
            import ray
        except ImportError:
            raise LaunchError("--backend ray needs the 'ray' package in this environment: pip install ray") from None
        common: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING, "namespace": "framebus"}
        try:
            if self.owned:
                num_cpus = os.environ.get("FRAMEBUS_RAY_NUM_CPUS")
                ray.init(address="local", include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                         num_cpus=int(num_cpus) if num_cpus else None, **common)
            else:
                ray.init(address=self.address, **common)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
            raise LaunchError(f"cannot start or reach {where}: {exc}") from None
        self.home = ray.get_runtime_context().get_node_id()
        total = ray.cluster_resources()
        what = "started a local Ray instance" if self.owned else f"joined the Ray cluster at {self.address}"
        self.console.print(f"ray: {what} ({len(ray.nodes())} machine(s), {total.get('CPU', 0):g} CPUs, "
                           f"{total.get('GPU', 0):g} GPUs)", highlight=False)

    def bus_host(self, lf: LaunchFile) -> str:
        """Where the kernel listens: the launch file's TCP host, else an address the actors can reach."""
        import ray

        if lf.bus.transport == "tcp" and (self.owned or not is_loopback(lf.bus.host)):
            return lf.bus.host
        return "127.0.0.1" if self.owned else ray.util.get_node_ip_address()

    def machines(self) -> list[Machine]:
        """The live machines of the cluster now, with what each has free."""
        import ray

        try:  # per machine, from Ray's state API (no dashboard needed); only a note depends on it
            from ray._private.state import available_resources_per_node

            free = available_resources_per_node()
        except Exception:
            free = None
        return machines(ray.nodes(), free)

    def plan(self, lf: LaunchFile) -> list[Landing]:
        """Where each node would land (``launch validate --address``), or why it cannot."""
        return plan(lf, self.machines(), demand, home=self.home, at_home=launching_host)

    def check_feasible(self, lf: LaunchFile) -> None:
        """Plan every node's place; refuse at once what no machine of the cluster can ever take (Ray
        would wait forever) or a placement that names no machine, at the line it was written."""
        landings = self.plan(lf)
        for landing in landings:
            if landing.problem is not None:
                raise landing.problem
        self.landings = {x.node: x for x in landings}
        self.lf = lf

    def replan(self, node_id: str, lost: set[str]) -> None:
        """Where a restarting node goes now: the plan made against the machines alive now, less
        ``lost`` (machines its last actor died with, which Ray may still list for a few heartbeats).
        A soft host that is gone falls back to another machine; a hard one is an error."""
        if self.lf is None:
            return
        alive = [m for m in self.machines() if m.node_id not in lost]
        spec = self.lf.node(node_id)
        for landing in plan(self.lf, alive, demand, home=self.home, at_home=launching_host):
            if landing.node != node_id:
                continue
            if landing.problem is not None and spec.placement is not None and spec.placement.soft:
                fit = [m for m in alive if all(m.resources.get(k, 0.0) >= v for k, v in demand(spec).items())]
                if fit:  # soft: the machine asked for is gone (or full for good), any other will do
                    landing = Landing(node_id, landing.asked, fit,
                                      note="soft: the place asked for is gone; Ray picks another machine")
            if landing.problem is not None:
                raise PlacementError(f"node {node_id!r} cannot be placed again: {landing.problem}")
            self.landings[node_id] = landing

    def new_actor(self, spec: NodeSpec) -> Any:
        import ray

        if self._actor_class is None:
            self._actor_class = ray.remote(FramebusNode)
        options: dict[str, Any] = {"max_concurrency": 4, "max_restarts": 0}
        r = _resources(spec)
        options.update(r.model_dump(mode="json", exclude_none=True, exclude={"custom"}))
        if r.custom:
            options["resources"] = dict(r.custom)
        options.update(actor_options(self.landings.get(spec.id)))  # placement: a host, labels, a spread copy
        return self._actor_class.options(**options).remote()

    def available(self) -> dict[str, float]:
        import ray

        return ray.available_resources()

    @staticmethod
    def kill(actor: Any) -> None:
        import ray

        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # already gone, or Ray is shutting down
            pass

    def supervisor(self, specs: list[NodeSpec], env: dict[str, str], log_dir: Path, console: Console,
                   on_exit: Callable[..., None],
                   node_env: dict[str, dict[str, str]] | None) -> Supervisor:
        """The supervisor of this run's nodes, each in an actor of this cluster."""
        return RaySupervisor(specs, env, log_dir, console, on_exit, node_env, cluster=self)

    def shutdown(self) -> None:
        """Disconnect; for an instance we started, that also stops all of its processes."""
        import ray

        if ray.is_initialized():
            ray.shutdown()


def lost_machine(exc: Exception) -> str | None:
    """The Ray node id an actor died with, when it died because that machine did (Ray says so in
    the error's text only), else None."""
    import re

    text = str(exc)
    if "node has died" not in text and "node was terminated" not in text:
        return None
    found = re.search(r"Node Id: ([0-9a-f]{16,})", text)
    return found.group(1) if found else None


class RaySupervisor(Supervisor):
    """The supervisor with node processes in Ray actors; restarts, stopping and exit codes unchanged."""

    backend = "ray"

    def __init__(self, *args: Any, cluster: RayCluster, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        self.actors: dict[str, Any] = {}
        self.placed: dict[str, dict[str, Any]] = {}

    def command(self, spec: NodeSpec) -> list[str]:
        """What the actor runs (with its own machine's Python), as shown in error messages."""
        return list(spec.cmd) if spec.cmd else ["python", "-m", "kernel.sdk.run_node"]

    async def start_all(self) -> None:
        # Actors start in parallel: a worker process each, about a second apiece.
        await asyncio.gather(*(self._spawn(proc) for proc in self.procs.values()))

    async def _start_process(self, spec: NodeSpec, env: dict[str, str]) -> RayNodeProcess:
        from ray.exceptions import RayError

        old = self.actors.pop(spec.id, None)
        if old is not None:  # a restart gets a fresh actor, possibly on another machine
            self.cluster.kill(old)
        loop = asyncio.get_running_loop()
        asked = loop.time()
        deadline = asked + PLACEMENT_TIMEOUT_S
        lost: set[str] = set()  # machines an actor of this node died with
        while True:
            if old is not None or lost:  # where it was planned may be gone: plan again
                await asyncio.to_thread(self.cluster.replan, spec.id, set(lost))  # asks Ray's GCS
            actor = self.cluster.new_actor(spec)
            self.actors[spec.id] = actor
            waiting = asyncio.create_task(self._say_still_waiting(spec.id, asked))
            try:
                info = await asyncio.wait_for(self._place_and_start(actor, spec, env), max(1.0, deadline - loop.time()))
                break
            except asyncio.TimeoutError:
                self.cluster.kill(actor)
                demand = _resources(spec).demand() if spec.resources is not None else {"CPU": 1.0}
                # the wait covers Ray's placing of the actor and the start of its worker process, which
                # Ray does not tell apart: on a loaded machine a start alone can take seconds
                raise PlacementError(f"Ray did not place and start node {spec.id!r} within {PLACEMENT_TIMEOUT_S:g} s "
                                     f"(FRAMEBUS_RAY_PLACEMENT_TIMEOUT): it asks for {describe(demand)}, and the "
                                     f"cluster has free now {describe(self.cluster.available(), demand)}") from None
            except RayError as exc:
                self.cluster.kill(actor)
                machine = lost_machine(exc)
                if machine is None or machine in lost or loop.time() >= deadline:
                    raise PlacementError(f"the Ray actor for node {spec.id!r} failed to start it: {exc}") from None
                # Its machine died under it (a host lost just now, that Ray still listed): elsewhere
                log.warning("a node's machine died before it started; placing it again", node=spec.id,
                            machine=machine)
                lost.add(machine)
            finally:
                waiting.cancel()
        self.placed[spec.id] = info
        return RayNodeProcess(actor, info)

    async def _say_still_waiting(self, node_id: str, since: float) -> None:
        """A line now and then while Ray has not placed and started a node: a run that is silent for a
        minute on a busy cluster looks hung."""
        loop = asyncio.get_running_loop()
        for wait in STILL_WAITING_S:
            await asyncio.sleep(max(0.0, since + wait - loop.time()))
            proc = self.procs.get(node_id)
            if proc is not None:
                self._say(proc, f"waiting {wait:g} s for Ray to place and start it (gives up at "
                                f"{PLACEMENT_TIMEOUT_S:g} s, FRAMEBUS_RAY_PLACEMENT_TIMEOUT)")

    async def _place_and_start(self, actor: Any, spec: NodeSpec, env: dict[str, str]) -> dict[str, Any]:
        """Ask the actor where Ray placed it, then start the node there: a node on another machine
        than this one (where the run folder is) is told to ship its results (FRAMEBUS_RESULTS=bus),
        and the kernel accepts them from it; one on this machine writes them itself. Decided before
        the process starts, so the kernel knows before the node's first word."""
        machine = await _wait_ref(actor.where.remote())
        ships = self.cluster.home is not None and machine != self.cluster.home
        env = {k: v for k, v in env.items() if k != outbox.ENV}
        if ships:
            env[outbox.ENV] = "bus"
            self.shipping.add(spec.id)
        else:
            self.shipping.discard(spec.id)
        info = await _wait_ref(actor.start.remote(spec.cmd, env, os.getcwd()))
        return {**info, "results": "bus" if ships else "local"}

    def _signal(self, proc: Proc, sig: int) -> bool:
        """Signal the node's group through its actor; True when it was sent (whether the group was
        still there, the actor knows)."""
        process = proc.process
        if not isinstance(process, RayNodeProcess) or process.returncode is not None:
            return False
        process.signal_group(sig)
        if sig == signal.SIGKILL:  # the actor goes too; its node follows by PDEATHSIG if still there
            process.killed = True
            self.cluster.kill(process.actor)
        return True

    def where(self, node_id: str) -> dict[str, Any]:
        info = self.placed.get(node_id, {})
        ray_info: dict[str, Any] = {k: info[k] for k in ("node_ip", "node_id", "hostname", "worker_pid", "actor_id",
                                                         "assigned") if k in info}
        landing = self.cluster.landings.get(node_id)
        if landing is not None and landing.asked:
            ray_info["placement"] = landing.record()
        return {"backend": self.backend, "ray": ray_info}

    def close(self) -> None:
        """Kill every actor (their node processes die with them) and stop relaying output."""
        for proc in self.procs.values():
            if isinstance(proc.process, RayNodeProcess):
                proc.process.relay.cancel()
        for actor in self.actors.values():
            self.cluster.kill(actor)
        self.actors.clear()
