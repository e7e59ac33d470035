"""The site's uvicorn child: started, waited for, read, restarted when it dies, stopped.

The same shape as the model node's server supervision: the child runs in its own session and gets
SIGKILL when the node dies (PR_SET_PDEATHSIG), its output is read for its whole life (a full pipe
would block it) and the last lines are kept for error messages."""

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
from typing import Any

from kernel.bus import outlet
from kernel.bus.lifeline import die_with_parent
from kernel.sdk.processes import signal_group, stop_group

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_json(url: str, method: str = "GET", timeout: float = 5.0) -> Any:
    """Blocking: call it from a thread."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


class SiteServer:
    def __init__(self, site: str, port: int, seed: int, size: int | None, links: dict[str, str], log: Any,
                 max_restarts: int = 3, startup_timeout_s: float = 60.0) -> None:
        self.site, self.seed, self.size, self.links = site, seed, size, links
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.max_restarts, self.startup_timeout_s = max_restarts, startup_timeout_s
        self.restarts = 0
        self.process: asyncio.subprocess.Process | None = None
        self.tail: deque[str] = deque(maxlen=30)
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False
        self.gone: str | None = None

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "nodes.browser.sites.server", "--site", self.site, "--port", str(self.port),
               "--seed", str(self.seed), "--links", json.dumps(self.links)]
        return cmd + (["--size", str(self.size)] if self.size else [])

    async def start(self) -> str:
        reader = await self._launch()
        self._watch = asyncio.ensure_future(self._supervise(reader))
        return self.base_url

    async def _launch(self) -> asyncio.Future[None]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        self.process = await asyncio.create_subprocess_exec(
            *self.command(), env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        reader = asyncio.ensure_future(self._read_output())
        deadline = time.monotonic() + self.startup_timeout_s
        while not await asyncio.to_thread(self._answers):
            if self.process.returncode is not None:
                await asyncio.wait([reader], timeout=5)
                raise RuntimeError(f"the {self.site} site exited with code {self.process.returncode} while starting; "
                                   "last lines:\n" + "\n".join(self.tail))
            if time.monotonic() > deadline:
                await self.stop()
                raise RuntimeError(f"the {self.site} site did not answer on {self.base_url} within "
                                   f"{self.startup_timeout_s} s; last lines:\n" + "\n".join(self.tail))
            await asyncio.sleep(0.05)
        self.log.info("site ready", site=self.site, url=self.base_url)
        return reader

    def _answers(self) -> bool:
        try:
            return http_json(f"{self.base_url}/healthz", timeout=2).get("site") == self.site
        except (OSError, ValueError):
            return False

    async def _read_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for _, lines in outlet.read_chunks(self.process.stdout):
            self.tail.extend(line.decode(errors="replace").rstrip()[:2000] for line in lines)

    async def _supervise(self, reader: asyncio.Future[None]) -> None:
        """A site that dies comes back on the same port (its seeded state, as after a reset)."""
        while True:
            assert self.process is not None
            code = await self.process.wait()
            if self._stopping:
                return
            await asyncio.wait([reader], timeout=2)
            self._kill_group()
            if self.restarts >= self.max_restarts:
                self.gone = f"the {self.site} site died (exit code {code}) after {self.restarts} restart(s)"
                self.log.error("site died and max_restarts is spent; exiting", code=code,
                               last_lines="\n".join(self.tail))
                outlet.drain(console_s=2.0, files_s=2.0)
                os._exit(1)
            self.restarts += 1
            self.log.error("site died; starting it again", code=code, restart=self.restarts)
            try:
                reader = await self._launch()
            except Exception as exc:
                if self._stopping:
                    return
                self.gone = f"the {self.site} site could not be started again: {exc}"
                self.log.error("site did not come back; exiting", error=str(exc))
                outlet.drain(console_s=2.0, files_s=2.0)
                os._exit(1)

    def _kill_group(self) -> None:
        if self.process is not None:
            signal_group(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
        if self.process is not None:
            await stop_group(self.process, term_grace_s=5.0, kill_grace_s=2.0)
