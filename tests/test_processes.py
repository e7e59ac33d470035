"""kernel.sdk.processes with real children: a group that shrugs off SIGTERM is SIGKILLed, its
grandchildren with it, and a group that is already gone is no error."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from kernel.sdk.processes import signal_group, stop_group

# A session leader that ignores SIGTERM and starts a grandchild that ignores it too (the ignored
# disposition is inherited); it prints the grandchild's pid once both are set up.
STUBBORN = 'trap "" TERM; sleep 60 & echo $!; wait'
# One that ends on SIGTERM as a well-behaved child does.
POLITE = "sleep 60 & echo $!; wait"
# A leader alone in its group (it prints its own pid, then becomes the sleep).
LONE = "echo $$; exec sleep 60"


async def _start(script: str) -> tuple[asyncio.subprocess.Process, int]:
    """The child running ``script`` in a session of its own, and the pid it printed."""
    process = await asyncio.create_subprocess_exec("sh", "-c", script, stdout=asyncio.subprocess.PIPE,
                                                   start_new_session=True)
    assert process.stdout is not None
    grandchild = int(await asyncio.wait_for(process.stdout.readline(), 10))
    return process, grandchild


def _dead(pid: int, within_s: float = 5.0) -> bool:
    """Whether ``pid`` is gone or a zombie (its new parent may not reap it at once) within ``within_s``."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


async def test_a_group_that_ignores_sigterm_is_killed_grandchildren_too():
    process, grandchild = await _start(STUBBORN)
    killed: list[float] = []
    started = time.monotonic()
    await stop_group(process, term_grace_s=0.5, kill_grace_s=5.0, on_kill=lambda: killed.append(time.monotonic()))
    assert process.returncode == -signal.SIGKILL
    assert len(killed) == 1 and killed[0] - started >= 0.5  # the grace period was given first
    assert _dead(grandchild), "the grandchild in the group outlived the stop"


async def test_a_child_that_heeds_sigterm_is_not_killed():
    process, grandchild = await _start(POLITE)
    killed: list[bool] = []
    await stop_group(process, term_grace_s=5.0, kill_grace_s=5.0, on_kill=lambda: killed.append(True))
    assert process.returncode == -signal.SIGTERM
    assert not killed
    assert _dead(grandchild)  # SIGTERM went to the whole group, not the leader alone


async def test_a_gone_group_is_no_error():
    process, pid = await _start(LONE)
    assert pid == process.pid
    assert signal_group(pid, signal.SIGKILL)
    await process.wait()
    assert not signal_group(pid, signal.SIGTERM)  # its one member is reaped: nothing left to signal
    sent: list[int] = []

    def send(sig: int) -> bool:
        sent.append(sig)
        return True

    # an exited child is not signalled again (its group id may have been handed out anew)
    await stop_group(process, term_grace_s=5.0, kill_grace_s=5.0, send=send)
    assert sent == []


async def test_a_stop_of_a_group_that_died_meanwhile_returns_at_once():
    process, grandchild = await _start(STUBBORN)
    os.killpg(process.pid, signal.SIGKILL)  # dead, but not reaped yet: returncode may still be None
    started = time.monotonic()
    await stop_group(process, term_grace_s=30.0, kill_grace_s=30.0)
    assert time.monotonic() - started < 10
    assert process.returncode == -signal.SIGKILL
    assert _dead(grandchild)
