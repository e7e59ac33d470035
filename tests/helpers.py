"""Helpers for tests that drive the real `launch` command."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = [sys.executable, "-m", "kernel.tools.cli"]


def launch_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def launch(*args: str, cwd: Path | None = None, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*LAUNCH, *args], cwd=cwd, env=launch_env(), capture_output=True, text=True,
                          timeout=timeout, **kw)


class Background(subprocess.Popen):
    """A ``launch`` running in the background with its output (stdout and stderr) in a file.

    Not a pipe: a test that does not read a pipe while the run goes on fills it, and then the
    launcher blocks writing to it. ``output()`` reads what it printed so far."""

    output_path: Path

    def output(self) -> str:
        return self.output_path.read_text(errors="replace")


def launch_bg(*args: str, cwd: Path | None = None) -> Background:
    fd, name = tempfile.mkstemp(prefix="launch-bg-", suffix=".out")
    try:
        proc = Background([*LAUNCH, *args], cwd=cwd, env=launch_env(), stdout=fd, stderr=subprocess.STDOUT)
    finally:
        os.close(fd)
    proc.output_path = Path(name)
    weakref.finalize(proc, os.unlink, name)  # the file goes when the test lets go of the process
    return proc


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_until(pred, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


async def until(pred, timeout: float = 10.0, interval: float = 0.05) -> bool:
    """``wait_until`` for a test on an event loop: the loop goes on between looks."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        await asyncio.sleep(interval)
    return bool(pred())


def children_of(pid: int) -> list[int]:
    """Every descendant process of ``pid`` (read from /proc, no psutil needed)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        frontier += kids
    return found


# hello.yaml kept running for a long time, with quicker heartbeats so `launch ctl status` moves fast
LONG_HELLO = ["hello.yaml", "--episodes", "100000", "--set", "bus.heartbeat=0.2"]


def announced(run_dir: Path) -> dict | None:
    """The announcement of the running graph whose run folder is ``run_dir`` (what `launch ctl` reads)."""
    from kernel.tools.announce import folder

    for f in folder().glob("*.json"):
        try:
            info = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if info.get("run_dir") == str(run_dir):
            return info
    return None
