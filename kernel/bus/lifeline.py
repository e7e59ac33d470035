"""Children that die with their parent: the supervisor's node processes, and the processes a node
starts itself (a model server, a broker), so that no process outlives a killed launcher."""

from __future__ import annotations

import ctypes
import signal
import sys
from typing import Any


def _find_prctl() -> Any:
    """libc's prctl, looked up here in the parent: a dlopen between fork and exec could hang on a
    lock another thread held at the fork. ``CDLL(None)`` is the libc already loaded (glibc or musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGKILL me when the launching thread dies.

    Where there is no prctl (not Linux), a node still notices a dead launcher: its runtime's
    watchdog sees its parent pid change (kernel.sdk.runtime).
    """
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
