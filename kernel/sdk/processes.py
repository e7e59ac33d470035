"""Stopping a child that runs in a process group of its own, and everything it started.

The children framebus starts (node processes, a model server, a site server) each lead a session of
their own, so a terminal's Ctrl-C or a signal meant for the parent does not reach them by accident.
Their own children (vLLM's engine, Chromium, a web server's workers) stay in that group, and would
outlive a signal sent to the leader alone, holding a port or memory. So a child is signalled as a
group, and stopped in one escalation: SIGTERM to the group, a grace period for it to exit cleanly,
then SIGKILL to whatever of the group is left, and a shorter wait for the leader to be reaped.

A group that is already gone is the ordinary race with a child that exited on its own, not an
error: signalling it is a no-op that says so, and a stop of it returns at once. ``stop_group``
never signals a child already reaped: its pid, hence its group id, may be someone else's by now.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Protocol

__all__ = ["GroupLeader", "signal_group", "stop_group"]


class GroupLeader(Protocol):
    """A started child that leads its process group: an ``asyncio.subprocess.Process``, or anything
    shaped like one (kernel.tools.ray_backend's process in a Ray actor)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when no process of it is left to signal.

    A group we may not signal (EPERM) counts as gone: its id now names processes that are not ours.
    """
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def stop_group(process: GroupLeader, term_grace_s: float, kill_grace_s: float, *,
                     send: Callable[[int], bool] | None = None,
                     on_kill: Callable[[], None] | None = None) -> None:
    """SIGTERM ``process``'s group, wait up to ``term_grace_s`` for ``process`` to exit, then SIGKILL
    the group and wait up to ``kill_grace_s``; returns early once it exited or its group is gone.

    ``send`` signals the group (``signal_group`` on ``process.pid`` unless given: a backend whose
    processes run elsewhere sends its own way) and says whether anything was there to signal;
    ``on_kill`` runs just before the SIGKILL (a caller's "did not stop" line).
    """
    if process.returncode is not None:
        return
    deliver = send if send is not None else (lambda sig: signal_group(process.pid, sig))
    for sig, grace in ((signal.SIGTERM, term_grace_s), (signal.SIGKILL, kill_grace_s)):
        if sig == signal.SIGKILL and on_kill is not None:
            on_kill()
        if not deliver(sig):
            return
        try:
            await asyncio.wait_for(process.wait(), grace)
            return
        except TimeoutError:
            continue
