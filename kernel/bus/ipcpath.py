"""Where a run's ipc sockets live, and so how long a node id may be.

A Unix socket's path must fit in ``sun_path`` (108 bytes on Linux, the last one its NUL). A node's
inbox is ``<ipc dir>/<node id>-<pid>.sock`` in the run's own folder under ``/tmp``; the one part
of that path a user chooses is the node id, so the launch-file loader refuses an id that could not
fit (``MAX_NODE_ID``) rather than let ZeroMQ fail when the node binds it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

IPC_PARENT = Path("/tmp")  # short on purpose: every socket path starts with it
IPC_PREFIX = "fb-"
SUN_PATH_MAX = 107  # bytes of a Unix socket path on Linux: sun_path is 108 with the terminating NUL
_RANDOM_CHARS = 8  # what tempfile.mkdtemp adds to the prefix
_PID_DIGITS = 7  # pid_max is at most 2**22 (4194304)
IPC_DIR_LENGTH = len(str(IPC_PARENT)) + 1 + len(IPC_PREFIX) + _RANDOM_CHARS
MAX_NODE_ID = SUN_PATH_MAX - IPC_DIR_LENGTH - len("/-.sock") - _PID_DIGITS
"""The longest node id (a replica's ``-N`` included) whose inbox path fits: 77 characters."""


def make_ipc_dir() -> Path:
    """A fresh folder for one run's sockets, private to this user (mkdtemp makes it 0700)."""
    return Path(tempfile.mkdtemp(prefix=IPC_PREFIX, dir=IPC_PARENT))


def inbox_path(directory: str | os.PathLike[str], node_id: str, pid: int) -> str:
    """The ipc path a node's inbox binds (node ids are ASCII, so characters are bytes)."""
    return f"{directory}/{node_id}-{pid}.sock"
