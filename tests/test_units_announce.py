"""Unit tests of the sweep that removes what SIGKILLed launchers left: their announcements and their
ipc folders in /tmp, and nothing else. No process starts; dead launchers are pids past pid_max."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from kernel.bus.ipcpath import IPC_PARENT, IPC_PREFIX
from kernel.tools.announce import LAUNCHER_FILE, clean_stale, start_ticks, write_private


def _no_such_pid() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


@pytest.fixture
def ipc_dirs():
    made: list[Path] = []

    def make(launcher: str | None) -> Path:
        path = Path(tempfile.mkdtemp(prefix=IPC_PREFIX, dir=IPC_PARENT))
        made.append(path)
        if launcher is not None:
            write_private(path / LAUNCHER_FILE, launcher)
        return path

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def test_a_dead_launchers_ipc_folder_and_announcement_are_removed_and_named(xdg, ipc_dirs):
    dead = _no_such_pid()
    folder = ipc_dirs(f"{dead} 12345\n")
    (xdg / "framebus").mkdir(mode=0o700)
    announcement = xdg / "framebus" / f"{dead}.json"
    write_private(announcement, '{"pid": %d, "started": 12345, "endpoint": "ipc:///nowhere"}' % dead)
    removed = clean_stale()
    assert folder in removed and announcement in removed
    assert not folder.exists() and not announcement.exists()


def test_a_live_launchers_folder_and_folders_without_a_launcher_record_stay(xdg, ipc_dirs):
    live = ipc_dirs(f"{os.getpid()} {start_ticks(os.getpid())}\n")
    foreign = ipc_dirs(None)  # another tool's folder with the same prefix
    garbled = ipc_dirs("not a pid\n")
    removed = clean_stale()
    assert not {live, foreign, garbled} & set(removed)
    assert live.is_dir() and foreign.is_dir() and garbled.is_dir()


def test_a_reused_pid_is_not_taken_for_the_launcher_that_had_it(xdg, ipc_dirs):
    """The pid runs again, but started at another time: the launcher that wrote the record is gone."""
    reused = ipc_dirs(f"{os.getpid()} {start_ticks(os.getpid()) + 1}\n")
    assert reused in clean_stale() and not reused.exists()
