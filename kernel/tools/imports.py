"""Importing node classes in the launcher with a time limit.

``launch validate`` and ``launch run`` import each ``uses:`` class to check its params; a module that
waits for something when imported (a server, a lock, a ``sleep``) would hang the check for ever.
The import runs under a SIGALRM timer instead of in a child process: a child would have to import
everything twice (about 0.6 s more on a 0.9 s ``launch validate sokoban_random``), and the launcher
needs the classes itself anyway. The cost is that a module stuck in C code that never returns to
Python, or one that swallows every exception, is not stopped.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

IMPORT_TIMEOUT_S = 60.0
"""Long enough for the heaviest node pack on a busy machine (torch, gfootball: ~20 s cold)."""

T = TypeVar("T")


class ImportTimeout(Exception):
    """A node class took longer than its time to import."""


def bounded(load: Callable[[str], T], seconds: float = IMPORT_TIMEOUT_S) -> Callable[[str], T]:
    """``load`` (``uses`` -> class) that raises ImportTimeout after ``seconds``; in the main thread
    only, where signals arrive (elsewhere it is ``load`` as it is)."""

    def expire(signum: int, frame: Any) -> None:
        raise ImportTimeout(f"importing it took longer than {seconds:g} s (does the module wait for something "
                            "when it is imported?)")

    def load_within(uses: str) -> T:
        if threading.current_thread() is not threading.main_thread():
            return load(uses)
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return load(uses)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return load_within
