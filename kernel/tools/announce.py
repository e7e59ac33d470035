"""Where running graphs announce themselves on this machine, which announcements to believe, and
cleaning up after launchers that were killed.

``launch run`` writes ``<pid>.json`` (its control endpoint and, with CURVE, the control keys) so that
``launch ctl`` and ``launch stats`` can find it. A folder shared by all users would let another local
user plant ``<pid>.json`` symlinks (so our write lands on a file of their choosing) or fake
announcements (so our ``ctl`` talks to their endpoint). So the folder is per user and private:
``$XDG_RUNTIME_DIR/framebus`` when that is the user's own, else ``<tmp>/framebus-<uid>``. The temp
folder rather than ``~/.cache`` because announcements name pids of this machine, and a home folder
may be shared between machines. Every use checks that the folder is the user's and gives nothing to
group or other, and refuses it otherwise.

A SIGKILLed launcher cannot clean up, so each ipc folder records its launcher's pid and start time,
and the next ``launch run`` removes what dead launchers of this user left behind.

Finding live runs is the tools' business: the runner (kernel.graph.runner) only calls the hook
that ``announcer`` returns, once its kernel listens.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from kernel.bus.ipcpath import IPC_PARENT, IPC_PREFIX
from kernel.bus.shm import remove_segments
from kernel.graph.runner import Announce
from kernel.launchfile import LaunchError

LAUNCHER_FILE = "launcher.pid"


def folder() -> Path:
    """This user's announcement folder, made if missing; raises LaunchError if it is not private."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _safe_parent(Path(runtime), own=True):
        path = Path(runtime) / "framebus"
    else:
        base = Path(tempfile.gettempdir())
        if not _safe_parent(base, own=False):
            raise LaunchError("others may rename or replace folders in it (it is writable by group or other "
                              "without the sticky bit); set TMPDIR or XDG_RUNTIME_DIR to a folder of yours",
                              file=base)
        path = base / f"framebus-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise LaunchError(f"cannot make the announcement folder: {exc.strerror}", file=path) from None
    check_private(path)
    return path


def check_private(path: Path) -> None:
    """Refuse a folder that is a symlink, another user's, or open to group or other."""
    st = os.lstat(path)
    uid = os.getuid()
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise LaunchError(f"the announcement folder is {'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a folder'}; "
                          "remove it (framebus makes it again)", file=path)
    if st.st_uid != uid:
        raise LaunchError(f"the announcement folder is owned by uid {st.st_uid}, not by you (uid {uid}); someone "
                          "else made it first: remove it, or set XDG_RUNTIME_DIR to a folder of yours", file=path)
    if st.st_mode & 0o077:
        raise LaunchError(f"the announcement folder has mode {stat.S_IMODE(st.st_mode):04o}, which lets group or "
                          f"other in; it must be 0700 (chmod 700 {path})", file=path)


def _safe_parent(path: Path, *, own: bool) -> bool:
    """A folder in which no other user can swap ours: theirs to write only if sticky."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    owner_ok = st.st_uid == os.getuid() if own else st.st_uid in (0, os.getuid())
    shared_ok = not st.st_mode & 0o022 or bool(st.st_mode & stat.S_ISVTX)
    return stat.S_ISDIR(st.st_mode) and owner_ok and shared_ok


def announcer(console: Console) -> Announce:
    """Remove what dead launchers left (saying so), then hand the runner the hook that announces
    this run; raises LaunchError before anything starts if the announcement folder is not private."""
    for path in clean_stale():
        console.print(f"removed {path}, left by a launcher that is gone", style="dim", highlight=False,
                      soft_wrap=True)
    return announce


def announce(info: dict[str, Any], ipc_dir: Path) -> Callable[[], None]:
    """Mark ``ipc_dir`` as this launcher's and write its announcement (atomically, mode 0600);
    returns what removes the announcement at the end."""
    pid, started = os.getpid(), start_ticks(os.getpid())
    write_private(ipc_dir / LAUNCHER_FILE, f"{pid} {started or 0}\n")
    path = folder() / f"{pid}.json"
    write_private(path, json.dumps({**info, "pid": pid, "started": started}))
    return lambda: path.unlink(missing_ok=True)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only this user can read (it may hold a secret key), atomically.

    The text goes to a fresh temporary file in the same folder (mkstemp: O_CREAT|O_EXCL|O_NOFOLLOW,
    mode 0600), which is then renamed onto ``path``. So a symlink planted at ``path`` is replaced,
    never written through, and a reader sees the old file or the whole new one.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            os.fchmod(fd, 0o600)  # mkstemp asks for 0600, but a umask may have taken bits away
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def live_runs() -> tuple[list[dict[str, Any]], list[str]]:
    """The announcements of this user's running graphs (newest first), and why others were not trusted.

    Announcements of launchers that are gone are removed on the way.
    """
    runs: list[tuple[float, dict[str, Any]]] = []
    untrusted: list[str] = []
    for path in sorted(folder().glob("*.json")):
        found = _read(path)
        if isinstance(found, str):
            untrusted.append(f"{path}: {found}")
        elif found is not None:
            runs.append(found)
    return [info for _, info in sorted(runs, key=lambda r: r[0], reverse=True)], untrusted


def _read(path: Path) -> tuple[float, dict[str, Any]] | str | None:
    """(mtime, info) for a live announcement we trust; why not, for one we do not; None for the
    announcement of a launcher that is gone, which is removed."""
    uid = os.getuid()
    try:  # O_NOFOLLOW: a symlink fails here instead of being read through; O_NONBLOCK: a fifo cannot hang us
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return "it is a symlink" if path.is_symlink() else f"cannot open it ({exc.strerror})"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "it is not a regular file"
        if st.st_uid != uid:
            return f"it is owned by uid {st.st_uid}, not by you (uid {uid})"
        if stat.S_IMODE(st.st_mode) != 0o600:
            return f"it has mode {stat.S_IMODE(st.st_mode):04o}; a launcher writes 0600"
        try:
            info = json.loads(fh.read())
            pid = int(info["pid"])
            endpoint = str(info["endpoint"])
        except (ValueError, KeyError, TypeError):
            return "it is not a launcher's announcement (unreadable JSON, or no pid or endpoint)"
    if path.name != f"{pid}.json":
        return f"it names pid {pid} but is called {path.name}"
    if not alive(pid, info.get("started")):
        path.unlink(missing_ok=True)  # the launcher is gone
        return None
    owner = _process_owner(pid)
    if owner is not None and owner != uid:
        return f"its launcher pid {pid} belongs to uid {owner}"
    if endpoint.startswith("ipc://"):
        socket_path = endpoint[len("ipc://"):]
        try:
            sst = os.lstat(socket_path)
        except OSError as exc:
            return f"its endpoint {socket_path} cannot be checked ({exc.strerror})"
        if not stat.S_ISSOCK(sst.st_mode):
            return f"its endpoint {socket_path} is not a socket"
        if sst.st_uid != uid:
            return f"its endpoint {socket_path} is owned by uid {sst.st_uid}, not by you (uid {uid})"
    return st.st_mtime, info


def clean_stale() -> list[Path]:
    """Remove what dead launchers of this user left: announcements, ipc folders, shared memory.

    Only folders that record their launcher are touched, so ones made by other tools (or by older
    framebus versions) with the same prefix stay.
    """
    announced = list(folder().glob("*.json"))
    live_runs()  # removes the announcements of launchers that are gone
    removed = [p for p in announced if not p.exists()]
    uid = os.getuid()
    for path in IPC_PARENT.glob(f"{IPC_PREFIX}*"):
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            fd = os.open(path / LAUNCHER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd) as fh:
                pid, started = (int(x) for x in fh.read().split())
        except (OSError, ValueError):
            continue
        if not alive(pid, started or None):
            shutil.rmtree(path, ignore_errors=True)
            remove_segments(path.name)
            removed.append(path)
    return removed


def start_ticks(pid: int) -> int | None:
    """When a process started (clock ticks since boot, from /proc), to tell it from a later one with its pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in (b"Z", b"X"):  # killed, not yet reaped: gone for our purposes
        return -1
    return int(fields[19])


def alive(pid: int, started: int | None = None) -> bool:
    """Whether ``pid`` still runs and (when ``started`` is known) is the same process as before."""
    ticks = start_ticks(pid)
    if ticks is None and not os.path.exists("/proc/self/stat"):  # no /proc: the pid is all we have
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    if ticks is None or ticks == -1:
        return False
    return started is None or ticks == int(started)


def _process_owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
