"""Output that cannot stall an event loop: the console and log files are written by threads.

A write to a terminal or a pipe blocks once its reader stops reading (a pager, Ctrl-S, a slow SSH
link, a test that never reads its pipe). Done from the event loop, that stops the kernel's
heartbeats, and three seconds later every node gives up on the kernel: a reader that pauses would
end the run. So callers here only append to a queue, and a thread does the writing:

* the console (``stderr()``, ``console()``): a bounded queue (``CONSOLE_BUDGET``). While the reader
  is stalled, the oldest waiting lines are dropped and counted (``dropped_console_lines``; ``launch
  run`` puts the count in summary.json and says so at the end): the run goes on, and the reader sees
  the newest lines when it comes back;
* files (``FileOutlet``): every line is kept. One thread writes all of a process's files, a batch at
  a time, so a line costs the loop no system call. Its queue is bounded by a byte budget
  (``FILE_BUDGET``) that a disk of ordinary speed never fills (log lines come at kilobytes a second;
  the budget is minutes of a chatty run); only a disk stalled long enough to fill it loses lines,
  and then they are counted and the gap is marked in the file, rather than the run stalling.

Lines keep their order per target, and what is still queued at exit is written with a bounded wait
(``drain``, also run by ``atexit``).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import select
import sys
import threading
from collections import deque
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, AsyncIterator

if TYPE_CHECKING:
    from rich.console import Console

CONSOLE_BUDGET = 256 * 1024  # bytes waiting for the terminal (~25 screens) before the oldest go
FILE_BUDGET = 64 * 1024 * 1024  # bytes waiting for the disk, all files of this process together
CONSOLE_DRAIN_S = 10.0  # at exit: how long a stalled terminal may keep the process
FILE_DRAIN_S = 30.0


def _line_count(data: bytes) -> int:
    return data.count(b"\n") or 1


class _Pump:
    """One daemon thread writing queued chunks for its sinks in turn.

    A target that blocks stalls this thread only; the console and the files have a pump each, so a
    stalled terminal never holds up the log files."""

    def __init__(self, name: str, budget: int) -> None:
        self.name = name
        self.budget = budget
        self.queued = 0  # bytes waiting, over every sink of this pump
        self.cond = threading.Condition()
        self.ready: deque[_Sink] = deque()
        self.busy = False
        self._thread: threading.Thread | None = None

    def wake(self, sink: _Sink) -> None:
        """Called with ``cond`` held: ``sink`` has something to write."""
        if not sink.scheduled:
            sink.scheduled = True
            self.ready.append(sink)
            self.cond.notify_all()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.ready:
                    self.cond.wait()
                sink = self.ready.popleft()
                sink.scheduled = False
                chunks = list(sink.chunks)
                sink.chunks.clear()
                self.queued -= sum(map(len, chunks))
                gap, sink.gap = sink.gap, 0
                closing = sink.closing
                self.busy = True
            try:
                sink.emit(chunks, gap, closing)
            except Exception as exc:  # a target that cannot be written any more: count, do not crash
                with self.cond:
                    sink.broken = f"{type(exc).__name__}: {exc}"
                    sink.dropped_lines += sum(map(_line_count, chunks))
            finally:
                with self.cond:
                    self.busy = False
                    self.cond.notify_all()

    def drain(self, timeout: float | None) -> bool:
        """Wait until everything queued is written (True), or ``timeout`` seconds (False)."""
        if self._thread is None or self._thread is threading.current_thread():
            return not self.ready
        with self.cond:
            return self.cond.wait_for(lambda: not self.ready and not self.busy, timeout)


class _Sink:
    """One target of a pump: its queued chunks, and what was dropped on the way."""

    drop_oldest = False

    def __init__(self, pump: _Pump) -> None:
        self.pump = pump
        self.chunks: deque[bytes] = deque()
        self.scheduled = False
        self.closing = False
        self.broken: str | None = None
        self.dropped_lines = 0
        self.gap = 0  # lines dropped since the last write, for a note in the target

    def put(self, data: bytes) -> None:
        """Queue ``data``; never blocks."""
        if not data:
            return
        pump = self.pump
        with pump.cond:
            if self.broken or self.closing:
                self.dropped_lines += _line_count(data)
                return
            while self.drop_oldest and self.chunks and pump.queued + len(data) > pump.budget:
                old = self.chunks.popleft()
                pump.queued -= len(old)
                self._dropped(old)
            if pump.queued + len(data) > pump.budget:
                self._dropped(data)
                return
            self.chunks.append(data)
            pump.queued += len(data)
            pump.wake(self)

    def _dropped(self, data: bytes) -> None:
        lines = _line_count(data)
        self.dropped_lines += lines
        self.gap += lines

    def emit(self, chunks: list[bytes], gap: int, closing: bool) -> None:
        raise NotImplementedError


class Outlet(_Sink):
    """A text stream on a file descriptor (a terminal, a pipe) whose ``write`` never blocks.

    Text is queued a unit at a time (up to a newline or a flush, which is how rich and structlog
    write), so dropping never splits a line. It has what rich's Console and structlog's
    WriteLogger use of a file: ``write``, ``flush``, ``isatty``, ``fileno``, ``encoding``."""

    drop_oldest = True

    def __init__(self, fd: int, pump: _Pump, encoding: str = "utf-8") -> None:
        super().__init__(pump)
        self.fd = fd
        self.encoding = encoding
        self._partial: list[str] = []
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._partial.append(text)
            if text.endswith("\n"):
                self._push()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            self._push()

    def _push(self) -> None:
        if self._partial:
            data = "".join(self._partial).encode(self.encoding, "replace")
            self._partial.clear()
            self.put(data)

    def isatty(self) -> bool:
        return os.isatty(self.fd)  # False for a closed fd too: it never raises

    def fileno(self) -> int:
        return self.fd

    def writable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return False

    def emit(self, chunks: list[bytes], gap: int, closing: bool) -> None:
        view = memoryview(b"".join(chunks))
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:  # someone set O_NONBLOCK on a shared terminal: wait for room
                select.select([], [self.fd], [], 1.0)


class FileOutlet(_Sink):
    """A file appended to by the disk thread; ``write`` takes str or bytes and never blocks."""

    def __init__(self, path: Path) -> None:
        super().__init__(_disk)
        self.path = path
        self._fh: IO[bytes] = path.open("ab")  # opened here, so a bad path fails where it is named

    def write(self, data: str | bytes) -> int:
        self.put(data.encode() if isinstance(data, str) else bytes(data))
        return len(data)

    def flush(self) -> None:
        """The disk thread flushes after every batch: nothing to do here."""

    def close(self) -> None:
        """The file closes once what is queued is written; later writes are counted as dropped."""
        with self.pump.cond:
            self.closing = True
            self.pump.wake(self)

    def emit(self, chunks: list[bytes], gap: int, closing: bool) -> None:
        if self._fh.closed:
            return
        if gap:
            self._fh.write(f"[framebus] {gap} lines dropped here: the disk did not keep up\n".encode())
        self._fh.write(b"".join(chunks))
        self._fh.flush()
        if closing:
            self._fh.close()


_console = _Pump("framebus-console", CONSOLE_BUDGET)
_disk = _Pump("framebus-disk", FILE_BUDGET)
_outlets: dict[int, Outlet] = {}
_outlets_lock = threading.Lock()


def stderr() -> Any:
    """This process's stderr as an ``Outlet`` (one per process, so every writer shares its order);
    ``sys.stderr`` itself where it is no file descriptor (e.g. replaced by a test's capture)."""
    try:
        fd = sys.stderr.fileno()
        os.fstat(fd)
    except (AttributeError, ValueError, OSError):
        return sys.stderr
    with _outlets_lock:
        if fd not in _outlets:
            _outlets[fd] = Outlet(fd, _console, getattr(sys.stderr, "encoding", None) or "utf-8")
        return _outlets[fd]


def console(**kwargs: Any) -> Console:
    """A rich Console on ``stderr()``: rich renders in the caller's thread, the pump does the write."""
    from rich.console import Console

    return Console(file=stderr(), **kwargs)


def dropped_console_lines() -> int:
    with _console.cond:
        return sum(o.dropped_lines for o in _outlets.values())


def dropped_file_lines(outlets: list[FileOutlet]) -> int:
    with _disk.cond:
        return sum(o.dropped_lines for o in outlets)


def drain(console_s: float | None = CONSOLE_DRAIN_S, files_s: float | None = FILE_DRAIN_S) -> bool:
    """Write what is queued, waiting at most the given seconds for each (None: as long as it takes);
    True if all of it went."""
    for outlet in list(_outlets.values()):
        outlet.flush()
    files = _disk.drain(files_s)
    return _console.drain(console_s) and files


atexit.register(drain)


async def read_chunks(stream: asyncio.StreamReader, size: int = 1 << 16) -> AsyncIterator[tuple[bytes, list[bytes]]]:
    """Read a child's output pipe as fast as it comes: each chunk read, with the lines it completes.

    ``StreamReader.readline`` gives up on a line over 64 KiB (and a reader that gave up leaves the
    child blocked on a full pipe); here a line of any length is kept whole, and the last one is
    yielded at EOF even without a newline."""
    pending: list[bytes] = []  # the unfinished line, in pieces (joined once it ends)
    while data := await stream.read(size):
        if b"\n" not in data:
            pending.append(data)
            yield data, []
            continue
        *complete, rest = b"".join([*pending, data]).split(b"\n")
        pending = [rest] if rest else []
        yield data, [line + b"\n" for line in complete]
    if pending:
        yield b"", [b"".join(pending)]
