"""The Python end of the Minecraft sidecar: starts ``node js/sidecar.js``, asks it things, stops it.

The world (a flying-squid server) and the agent's body (a mineflayer bot) live in one Node.js process that
speaks JSON lines on stdin/stdout (js/sidecar.js says the protocol). This class owns that process:

- it dies with its owner: the child gets its own process group and PR_SET_PDEATHSIG (kernel.bus.lifeline),
  so a SIGKILLed env node leaves no Node.js process behind; the child also exits when its stdin closes;
- each request waits for its reply with a timeout; a sidecar that crashed is reported with the tail of
  its stderr, not as a bare broken pipe;
- what a user can get wrong before anything runs (no ``node`` on PATH, node_modules not installed) is said
  in words with the fix.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

from kernel.bus.lifeline import die_with_parent

JS_DIR = Path(__file__).resolve().parent / "js"

#: replies an op may take this long by default; execute walks and digs for up to its step budget
DEFAULT_TIMEOUT_S = 120.0
START_TIMEOUT_S = 60.0


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: where the npm packages are when not beside js/ (an installed wheel ships the lockfile, not the packages)
NODE_MODULES_ENV = "FRAMEBUS_MINECRAFT_NODE_MODULES"


def node_modules(js_dir: Path = JS_DIR) -> Path:
    """The sidecar's npm packages: ``$FRAMEBUS_MINECRAFT_NODE_MODULES``, else ``js/node_modules``."""
    given = os.environ.get(NODE_MODULES_ENV)
    return Path(given) if given else js_dir / "node_modules"


class SidecarError(RuntimeError):
    """The sidecar refused a request, could not start, or died."""


class SidecarGone(SidecarError):
    """The sidecar died or stopped answering: the world is lost, not just one request."""


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sidecar:
    """One Minecraft world and body. Start it from a thread that lives as long as it should: the child is
    killed when the thread that started it ends (PR_SET_PDEATHSIG follows the thread, not the process)."""

    def __init__(self, port: int | None = None, *, js_dir: Path = JS_DIR, view_distance: int = 4,
                 start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.port = port or free_port()
        self.js_dir = Path(js_dir)
        self.view_distance = view_distance
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] = {}
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._next_id = 1
        self._eof = False
        self._lock = threading.Lock()  # one request at a time, as the sidecar serves them

    # ---------- life ----------

    @staticmethod
    def missing(js_dir: Path = JS_DIR) -> str | None:
        """What this machine lacks to run the sidecar, in words with the fix; None when nothing."""
        if shutil.which("node") is None:
            return ("no `node` on PATH: the Minecraft environment needs Node.js 20 or newer "
                    "(Debian: apt-get install nodejs; setup.sh installs it)")
        if not (js_dir / "sidecar.js").is_file():
            return f"{js_dir / 'sidecar.js'} is missing"
        modules = node_modules(js_dir)
        if not (modules / "flying-squid").is_dir():
            return (f"{modules} is not installed (flying-squid, mineflayer...): run bash setup.sh in a checkout; "
                    f"for an installed framebus, run npm ci beside a copy of {js_dir / 'package-lock.json'} and "
                    f"set {NODE_MODULES_ENV} to the node_modules folder it made")
        return None

    def start(self) -> dict[str, Any]:
        """Start node and wait until the bot has spawned; returns the sidecar's ready line (its timings)."""
        self.spawn()
        return self.wait_ready()

    def spawn(self) -> None:
        """Start node without waiting for it: the thread that calls this is the one the child dies with, so
        an event loop's thread spawns and another thread may wait (:meth:`wait_ready`)."""
        if (problem := self.missing(self.js_dir)) is not None:
            raise SidecarError(problem)
        node = shutil.which("node")
        assert node is not None
        modules = node_modules(self.js_dir)
        env = None if modules == self.js_dir / "node_modules" else {**os.environ, "NODE_PATH": str(modules)}
        self.proc = subprocess.Popen(
            [node, str(self.js_dir / "sidecar.js"), "--port", str(self.port), "--view-distance", str(self.view_distance)],
            cwd=self.js_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=die_with_parent, env=env,
        )
        threading.Thread(target=self._read_stdout, name=f"mc-sidecar-{self.port}-out", daemon=True).start()
        threading.Thread(target=self._read_stderr, name=f"mc-sidecar-{self.port}-err", daemon=True).start()

    def wait_ready(self) -> dict[str, Any]:
        """Wait until the bot has spawned; returns the sidecar's ready line (its timings)."""
        self.ready = self._wait_reply(0, self.start_timeout_s, "start")
        return self.ready

    def close(self, timeout_s: float = 5.0) -> None:
        """Ask the sidecar to stop; kill its process group if it does not within ``timeout_s``."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                self.request("close", timeout_s=timeout_s)
            except SidecarError:
                pass
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # stdin of a sidecar that died with a request still buffered: nothing to tell it
                    pass
        self.proc = None

    def __enter__(self) -> Sidecar:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr_tail)

    # ---------- request / reply ----------

    def request(self, op: str, args: dict[str, Any] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
        """Send one request and return its result; SidecarError names the op and the sidecar's reason."""
        if self.proc is None:
            raise SidecarError(f"{op}: the sidecar is not started")
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            line = json.dumps({"id": rid, "op": op, "args": args or {}}) + "\n"
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise SidecarGone(self._crash_message(op)) from None
            return self._wait_reply(rid, timeout_s, op)

    def _wait_reply(self, rid: int, timeout_s: float, op: str) -> Any:
        with self._cond:
            done = self._cond.wait_for(lambda: rid in self._replies or self._eof, timeout_s)
            reply = self._replies.pop(rid, None)
        if reply is None:
            if not done:
                raise SidecarGone(f"{op}: no reply from the Minecraft sidecar within {timeout_s:.0f} s")
            raise SidecarGone(self._crash_message(op))
        if not reply.get("ok"):
            raise SidecarError(f"{op}: {reply.get('error', 'failed without a reason')}")
        return reply.get("result")

    def _crash_message(self, op: str) -> str:
        code = self.proc.poll() if self.proc else None
        if self.proc is not None and code is None:
            try:
                code = self.proc.wait(2)
            except subprocess.TimeoutExpired:
                code = None
        tail = self.stderr_tail() or "(nothing on stderr)"
        return f"{op}: the Minecraft sidecar died (exit code {code}); the end of its stderr:\n{tail}"

    def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                reply = json.loads(raw)
            except ValueError:
                self._stderr_tail.append(f"(stdout, not JSON) {raw.decode(errors='replace').rstrip()}")
                continue
            with self._cond:
                if isinstance(reply.get("id"), int):
                    self._replies[reply["id"]] = reply
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for raw in self.proc.stderr:
            self._stderr_tail.append(ANSI.sub("", raw.decode(errors="replace")).rstrip())  # flying-squid colours its log

    # ---------- the ops (js/sidecar.js) ----------

    def reset(self, task: str, seed: int = 0) -> dict[str, Any]:
        return self.request("reset", {"task": task, "seed": seed})

    def observe(self) -> dict[str, Any]:
        return self.request("observe")

    def give(self, item: str, count: int = 1) -> dict[str, Any]:
        return self.request("give", {"item": item, "count": count})

    def blocks(self, radius: int = 8, y0: int = 1, y1: int = 90) -> dict[str, Any]:
        return self.request("blocks", {"radius": radius, "y0": y0, "y1": y1})

    def craft(self, item: str, num: int = 1) -> dict[str, Any]:
        return self.request("craft", {"item": item, "num": num})

    def smelt(self, item: str, num: int = 1) -> dict[str, Any]:
        return self.request("smelt", {"item": item, "num": num})

    def equip(self, item: str) -> dict[str, Any]:
        return self.request("equip", {"item": item})

    def teleport_to_spawn(self) -> dict[str, Any]:
        return self.request("teleport_to_spawn")

    def execute(self, prompt: str, goal_item: str, num: int = 1, max_ticks: int | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"prompt": prompt, "goal_item": goal_item, "num": num}
        if max_ticks is not None:
            args["max_ticks"] = max_ticks
        timeout = DEFAULT_TIMEOUT_S if max_ticks is None else max(DEFAULT_TIMEOUT_S, max_ticks / 20 + 30)
        return self.request("execute", args, timeout_s=timeout)
