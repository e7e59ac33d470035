"""The supervisor: one OS process per node, restarts by policy, and a teardown that never hangs.

Each node runs in its own session (so a terminal's Ctrl-C reaches only ``launch``, which then stops
the graph in order) and with PR_SET_PDEATHSIG, so even a SIGKILLed ``launch`` leaves no orphans.
Stopping escalates: a ``stop`` message, then SIGTERM to the node's process group, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import structlog
from rich.console import Console
from rich.text import Text

from kernel.bus import outbox, outlet
from kernel.bus.lifeline import die_with_parent
from kernel.launchfile import NodeSpec
from kernel.launchfile.limits import PARAMS_ENV, params_json
from kernel.sdk.processes import signal_group, stop_group

log = structlog.get_logger("framebus.supervisor")

STOP_GRACE_S = 2.0
TERM_GRACE_S = 1.5
KILL_GRACE_S = 1.0
_COLORS = ["cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan", "bright_magenta"]


@dataclass
class Proc:
    spec: NodeSpec
    color: str
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    exit_code: int | None = None
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    watcher: asyncio.Task[None] | None = None


class Supervisor:
    backend = "local"  # where node processes run; kernel.tools.ray_backend.RaySupervisor says "ray"

    def __init__(self, nodes: list[NodeSpec], env: dict[str, str], log_dir: Path, console: Console,
                 on_exit: Callable[..., None],  # (node, exit code, will restart[, why it could not start])
                 node_env: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.env = env
        self.node_env = node_env or {}  # per node (CURVE keys)
        self.log_dir = log_dir
        self.console = console
        self.on_exit = on_exit
        self.procs = {spec.id: Proc(spec, _COLORS[i % len(_COLORS)]) for i, spec in enumerate(nodes)}
        self.width = max((len(n) for n in self.procs), default=4)
        self.stopping = False
        self.log_files: list[outlet.FileOutlet] = []  # for the count of lines the disk did not take
        # Nodes that ship their results to the kernel (kernel.bus.outbox) rather than write them into
        # the run folder: those on another machine. None here (a test harness may name some); a
        # cluster backend decides per start, before the process starts.
        self.shipping: set[str] = set()

    def ships_results(self, node_id: str) -> bool:
        """Whether the node's process was told to ship its results (the kernel accepts them from it)."""
        return node_id in self.shipping

    def command(self, spec: NodeSpec) -> list[str]:
        return list(spec.cmd) if spec.cmd else [sys.executable, "-m", "kernel.sdk.run_node"]

    async def start_all(self) -> None:
        for proc in self.procs.values():
            await self._spawn(proc)

    async def _spawn(self, proc: Proc) -> None:
        spec = proc.spec
        env = {**self.env, **spec.env, **self.node_env.get(spec.id, {}), "FRAMEBUS_NODE_ID": spec.id,
               "PYTHONUNBUFFERED": "1", PARAMS_ENV: params_json(spec.params)}
        if spec.uses:
            env["FRAMEBUS_USES"] = spec.uses
        if spec.id in self.shipping:
            env[outbox.ENV] = "bus"
        try:
            proc.process = await self._start_process(spec, env)
        except OSError as exc:
            why = f"cannot start {self.command(spec)}: {exc}"
            self._say(proc, why, error=True)
            proc.exit_code = 127
            self.on_exit(spec.id, 127, False, why)
            return
        proc.watcher = asyncio.ensure_future(self._watch(proc, proc.process))

    async def _start_process(self, spec: NodeSpec, env: dict[str, str]) -> Any:
        """Start one node process on this machine, with ``env`` over ours; returns an asyncio Process.

        The one place that decides where a node runs: kernel.tools.ray_backend overrides it to start the
        process inside a Ray actor instead, with the same interface (pid, stdout, wait, returncode).
        """
        return await asyncio.create_subprocess_exec(
            *self.command(spec), env={**os.environ, **env}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, preexec_fn=die_with_parent,
        )

    def where(self, node_id: str) -> dict[str, Any]:
        """Where a node ran, for summary.json."""
        return {"backend": self.backend}

    async def _watch(self, proc: Proc, process: asyncio.subprocess.Process) -> None:
        """Read the node's output as it comes (a pipe left unread would block the node), keep every
        byte in RUN/logs/<node>.log and show each line; both through kernel.bus.outlet, so neither a
        stalled terminal nor a slow disk holds up this loop."""
        assert process.stdout is not None
        logfile = outlet.FileOutlet(self.log_dir / f"{proc.spec.id}.log")
        self.log_files.append(logfile)
        try:
            async for data, lines in outlet.read_chunks(process.stdout):
                logfile.write(data)
                for line in lines:
                    text = line.decode(errors="replace").rstrip()
                    proc.tail.append(text)
                    self._say(proc, text)
        finally:
            logfile.close()
        code = await process.wait()
        proc.exit_code = code
        if self.stopping:
            self.on_exit(proc.spec.id, code, False)
            return
        policy = proc.spec.restart
        restart = (code != 0 and code != 2 and policy.policy == "on-failure" and proc.restarts < policy.max_restarts)
        if code != 0:
            tail = "\n".join(f"    {t}" for t in list(proc.tail)[-10:]) or "    (no output)"
            what = (f"restarting ({proc.restarts + 1}/{policy.max_restarts})" if restart
                    else "not restarting" + (" (restart: never)" if policy.policy == "never" else ""))
            self._say(proc, f"node {proc.spec.id!r} exited with code {code}; {what}; last lines:\n{tail}", error=True)
        self.on_exit(proc.spec.id, code, restart)
        if restart:
            delay = policy.backoff * (2 ** proc.restarts)
            proc.restarts += 1
            await asyncio.sleep(delay)
            if not self.stopping:
                await self._spawn(proc)

    def _say(self, proc: Proc, text: str, error: bool = False) -> None:
        """Show a line on the console; the run's console (kernel.bus.outlet) queues it, never blocks."""
        prefix = Text(f"{proc.spec.id:<{self.width}} │ ", style="bold red" if error else proc.color)
        self.console.print(prefix + Text(text), highlight=False, soft_wrap=True)

    def alive(self) -> list[Proc]:
        return [p for p in self.procs.values() if p.process is not None and p.process.returncode is None]

    async def stop_all(self, request_stop: Callable[[], None]) -> None:
        """Ask nicely, then SIGTERM, then SIGKILL: every process is gone within ~4 s."""
        self.stopping = True
        request_stop()
        if not await self._wait_all(STOP_GRACE_S):
            await asyncio.gather(*(self._terminate(proc) for proc in self.alive()))
        watchers = [p.watcher for p in self.procs.values() if p.watcher is not None]
        if watchers:
            await asyncio.wait(watchers, timeout=1.0)

    async def _terminate(self, proc: Proc) -> None:
        """SIGTERM an ``alive()`` node's group, then SIGKILL what is left of it (kernel.sdk.processes)."""
        assert proc.process is not None
        await stop_group(proc.process, TERM_GRACE_S, KILL_GRACE_S, send=lambda sig: self._signal(proc, sig),
                         on_kill=lambda: self._say(proc, "did not stop; killing it", error=True))

    async def _wait_all(self, timeout: float) -> bool:
        procs = [p.process for p in self.alive() if p.process is not None]
        if not procs:
            return True
        _, pending = await asyncio.wait([asyncio.ensure_future(p.wait()) for p in procs], timeout=timeout)
        for task in pending:
            task.cancel()
        return not pending

    def kill_all_now(self) -> None:
        for proc in self.alive():
            self._signal(proc, signal.SIGKILL)

    def _signal(self, proc: Proc, sig: int) -> bool:
        """Signal an ``alive()`` node's whole group (its own children too); False when it is gone."""
        return proc.process is not None and signal_group(proc.process.pid, sig)
