"""A console that stops reading never stops a run (kernel.bus.outlet): not a pipe left unread, not a
reader that pauses, not a stalled terminal; the lines it missed are counted, and the log files under
RUN/logs keep every one of them."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kernel.bus.outlet import CONSOLE_DRAIN_S
from tests.helpers import LAUNCH, launch_env, wait_until

EPISODES = 2000  # ~1 MB of console output: far more than a pipe (64 KiB) plus the outlet's queue
STEP = re.compile(r"\] step .* episode=(ep\d+) .* t=(\d+) ")


def _launch(out: Path, episodes: int, **popen: Any) -> subprocess.Popen:
    return subprocess.Popen([*LAUNCH, "run", "hello.yaml", "--episodes", str(episodes), "--out", str(out)],
                            env=launch_env(), stdin=subprocess.DEVNULL, **popen)


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def unread_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """A long run whose stdout and stderr go to pipes nobody reads until its summary.json is there."""
    out = tmp_path_factory.mktemp("unread") / "run"
    proc = _launch(out, EPISODES, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # no reading at all while the run goes on (the launcher exits 0 only after summary.json)
        wait_until(lambda: (out / "summary.json").exists() or proc.poll() is not None, timeout=300, interval=0.2)
        time.sleep(2 * CONSOLE_DRAIN_S + 5)  # a reader that stays away past the end too (a paused pager)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    return out, proc.returncode, stdout.decode(errors="replace") + stderr.decode(errors="replace")


@pytest.mark.timeout(420)
def test_a_run_whose_output_nobody_reads_completes_and_counts_what_it_dropped(unread_run) -> None:
    out, code, output = unread_run
    summary = _summary(out)
    assert (summary["status"], code) == ("completed", 0), (summary["reason"], output[-3000:])
    assert summary["episodes"] == {"total": EPISODES, "completed": EPISODES, "failed": 0}
    assert summary["console"]["dropped_lines"] > 0
    assert summary["log_files"]["dropped_lines"] == 0
    # the reader came back after the run: it still gets the last lines, the summary among them
    assert f"episodes {EPISODES}/{EPISODES} completed" in output and "lines were not shown" in output, output[-3000:]
    assert all(n["exit_code"] == 0 for n in summary["nodes"].values()), summary["nodes"]


@pytest.mark.timeout(420)
def test_the_node_logs_are_complete_while_the_console_was_stalled(unread_run) -> None:
    out, _, _ = unread_run
    steps = {json.loads(line)["episode_id"]: json.loads(line)["metrics"]["steps"]
             for line in (out / "episodes.jsonl").read_text().splitlines()}
    assert len(steps) == EPISODES
    logged: dict[str, list[int]] = {}  # what the supervisor kept of the env's output
    for line in (out / "logs" / "env.log").read_text().splitlines():
        if m := STEP.search(line):
            logged.setdefault(m[1], []).append(int(m[2]))
    own: dict[str, list[int]] = {}  # the env's own JSON lines
    for line in (out / "logs" / "env.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "step":
            own.setdefault(event["episode"], []).append(event["t"])
    expected = {eid: list(range(n)) for eid, n in steps.items()}
    assert logged == expected
    assert own == expected


@pytest.mark.timeout(420)
def test_a_reader_that_pauses_does_not_fail_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _launch(out, EPISODES, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[bytes] = []
    paused = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if not paused.is_set() and len(lines) >= 200:  # well into the run: stop reading for 5 s
                paused.set()
                time.sleep(5.0)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert proc.wait(timeout=300) == 0, b"".join(lines)[-3000:].decode(errors="replace")
        reader.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    output = b"".join(lines).decode(errors="replace")
    assert paused.is_set()
    summary = _summary(out)
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == EPISODES
    # a healthy reader gets the end of the run: the summary line, then the count of lines it missed
    assert f"completed (all {EPISODES} episodes ended): episodes {EPISODES}/{EPISODES} completed" in output
    dropped = summary["console"]["dropped_lines"]
    assert (f"console: {dropped} lines were not shown" in output) == (dropped > 0), output[-2000:]


@pytest.mark.timeout(420)
def test_a_terminal_that_stops_reading_does_not_stall_the_progress_display(tmp_path: Path) -> None:
    """On a terminal the live progress line redraws from rich's own thread, under the console's
    lock that the loop's prints take too: with the terminal stalled (Ctrl-S), neither may block."""
    out = tmp_path / "run"
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env_proc = _launch(out, EPISODES, stdout=slave, stderr=slave)
    os.close(slave)
    received = bytearray()
    try:
        # the terminal is not read until the run has written its summary
        wait_until(lambda: (out / "summary.json").exists() or env_proc.poll() is not None, timeout=300,
                   interval=0.2)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # then read it to the end (EIO: the launcher is gone)
            if select.select([master], [], [], 1.0)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                received += chunk
            elif env_proc.poll() is not None:
                break
        assert env_proc.wait(timeout=30) == 0, received[-3000:].decode(errors="replace")
    finally:
        os.close(master)
        if env_proc.poll() is None:
            env_proc.kill()
            env_proc.wait(10)
    summary = _summary(out)
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == EPISODES
    assert summary["console"]["dropped_lines"] > 0
    assert b"episodes" in received and b"\x1b[" in received  # it did draw the progress line


def test_a_stalled_reader_gets_the_newest_whole_lines_in_order() -> None:
    """Writing never waits for the reader; while it is stalled the oldest lines give way, whole."""
    from kernel.bus.outlet import Outlet, _Pump

    read_end, write_end = os.pipe()
    pipe_size = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
    out = Outlet(write_end, _Pump("test-console", budget=16 * 1024))
    lines = [f"line {i:06d} " + "x" * 80 + "\n" for i in range(5000)]  # ~450 KiB, far over pipe + budget
    started = time.monotonic()
    for line in lines:
        out.write(line)
    assert time.monotonic() - started < 30  # (a blocking write would never return: nobody reads yet)
    assert out.dropped_lines > 0
    received = bytearray()
    while not out.pump.drain(0.05):
        received += os.read(read_end, 1 << 20)
    os.close(write_end)
    while chunk := os.read(read_end, 1 << 20):
        received += chunk
    os.close(read_end)
    got = received.decode().splitlines(keepends=True)
    assert set(got) <= set(lines) and got == sorted(got)  # whole lines, in order
    assert got[-1] == lines[-1]  # the newest made it
    assert len(got) + out.dropped_lines == len(lines)
    # what is kept: the pipe's buffer, the batch the thread was writing, and the queue behind it
    assert len(received) <= pipe_size + 2 * 16 * 1024 + len(lines[0])
