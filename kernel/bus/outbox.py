"""What a node leaves in the run folder, and how it gets there from a node on another machine.

A node writes four kinds of results through the SDK: its JSON log lines (``RUN/logs/<id>.jsonl``),
its trace spans under ``--trace file`` (``RUN/traces/<id>.jsonl``), step records (agents: the
``steps`` table of ``RUN/results.sqlite`` and ``RUN/steps/<id>.jsonl``) and pictures of episodes
(``Node.attach_images``: ``RUN/media/<id>/``). A node on the launching machine writes them itself,
as it always did (:class:`LocalResults`, kernel.bus.logs, kernel.bus.tracing). The run folder is on
the launching machine, though, so a node placed on another machine (``launch run --backend ray``)
is told to **ship** them instead: ``FRAMEBUS_RESULTS=bus`` in its environment (for the log lines
written before the kernel answers) and ``results: "bus"`` in its welcome. It then queues them in an
:class:`Outbox` and sends them to the kernel in batches (the ``results`` service, msgpack like every
other message), and the kernel writes them into the run folder from a thread of its own
(kernel.graph.inbox), byte for byte what the node would have written.

The outbox never blocks the node: ``put`` only appends (from any thread), and its bytes are bounded
(:data:`OUTBOX_BYTES`): past that, new items are dropped and counted, not waited for. At most
:data:`WINDOW` batch is unanswered at a time (so they are written in order), and a slow link or a busy
kernel holds the results here, within that bound, never in the control socket that heartbeats
also take.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

import structlog

from kernel.bus.errors import RemoteError, RequestTimeout

log = structlog.get_logger("framebus.results")

ENV = "FRAMEBUS_RESULTS"  # "bus": this process ships its results (set by the launching side)
SERVICE = "results"  # the kernel service that takes a batch
LINES = ("log", "trace")  # kinds whose payload is bytes of whole lines, joined within a batch
OUTBOX_BYTES = int(os.environ.get("FRAMEBUS_RESULTS_OUTBOX", str(64 * 1024 * 1024)))
BATCH_BYTES = 512 * 1024  # a batch is cut at this size (one larger item travels alone)
# Batches sent and not yet answered: one, so they arrive and are written in the order they were
# queued even when the kernel asks for one again later (a busy writer); the next waits for the
# answer, a round trip, while more gathers for it.
WINDOW = 1
FLUSH_S = 0.2
BUSY_BACKOFF_S = 0.5
OVERHEAD = 4096  # header and framing of a batch, kept below max_message_bytes
BUSY = "ResultsBusy"  # the kernel's answer when its writer is too far behind: send again later


class ResultsBusy(RuntimeError):
    """The kernel's writer has too much to write: the batch is not taken; the node sends it again."""


def shipping() -> bool:
    """Whether this process was started to ship its results (``FRAMEBUS_RESULTS=bus``)."""
    return os.environ.get(ENV) == "bus"


def own_run_dir(run_dir: str | os.PathLike[str], tag: str | None = None) -> Path:
    """The folder a node that ships its results sees as its run folder, on its own machine: files it
    writes there itself (a browser's saved pages, a broker's log) stay on that machine, apart from
    the run folder, whose path means nothing there. ``tag`` tells runs of the same name apart (the
    run's ipc folder name, unique on the launching machine)."""
    tag = tag if tag is not None else os.path.basename(os.environ.get("FRAMEBUS_IPC_DIR", "")) or "run"
    return Path(tempfile.gettempdir()) / "framebus-remote" / f"{Path(run_dir).name}-{tag}"


def step_item(record: dict[str, Any]) -> tuple[str, list[Any]]:
    """A step record as the line of ``steps/<id>.jsonl`` and the ``steps`` row (ts, episode, t,
    record), encoded here once: the local writer and the kernel write exactly these."""
    from kernel.bus.resultsdb import json_default

    line = json.dumps(record, default=str) + "\n"
    return line, [record.get("ts", time.time()), record.get("episode"), record.get("t"),
                  json.dumps(record, default=json_default)]


class LocalResults:
    """Step records of a node on the launching machine: written by this process itself, through
    threads (kernel.bus.outlet, kernel.bus.resultsdb), as they always were."""

    def __init__(self, run_dir: Path, node: str) -> None:
        self.run_dir = run_dir
        self.node = node
        self._file: Any = None
        self._store: Any = None

    def step(self, record: dict[str, Any]) -> None:
        if self._file is None:
            from kernel.bus.outlet import FileOutlet
            from kernel.bus.resultsdb import StepStore

            path = self.run_dir / "steps" / f"{self.node}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = FileOutlet(path)
            self._store = StepStore(self.run_dir, self.node)
        from kernel.bus.resultsdb import attempt_of

        line, row = step_item(record)
        self._file.write(line)
        self._store.write_row(row, attempt_of(record))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._store.close()
            self._file = self._store = None


Request = Callable[[str, str, Any, float], Awaitable[Any]]  # (node, service, body, timeout)


class Outbox:
    """A node's results on their way to the kernel: a bounded queue that any thread appends to, and
    the loop task that sends it in batches (``run``), at most ``WINDOW`` unanswered."""

    def __init__(self, budget: int = OUTBOX_BYTES) -> None:
        self.budget = budget
        self.max_item = 64 * 1024 * 1024 - OVERHEAD  # the bus's max_message_bytes, once the welcome said it
        self._lock = threading.Lock()
        self._items: deque[tuple[str, Any, int]] = deque()  # (kind, payload, bytes)
        self.queued_bytes = 0
        self._wake: Callable[[], None] | None = None
        self.put_items: Counter[str] = Counter()  # taken into the outbox, by kind
        self.sent: Counter[str] = Counter()  # items the kernel took, by kind
        self.sent_bytes = 0
        self.batches = 0
        self.dropped: Counter[str] = Counter()  # not queued: the outbox was full, or the item too large
        self.refused: Counter[str] = Counter()  # the kernel said no (not a busy kernel: that is sent again)
        self.lost: Counter[str] = Counter()  # sent, and no answer came within the timeout
        self.busy = 0  # batches the kernel asked to send again later
        self.in_flight = 0
        self._closing = False

    # any thread ------------------------------------------------------------------------------
    def put(self, kind: str, payload: Any, nbytes: int) -> bool:
        """Queue one item; False (and counted) when it does not fit. Never blocks."""
        with self._lock:
            if nbytes > self.max_item or self.queued_bytes + nbytes > self.budget:
                self.dropped[kind] += 1
                return False
            self._items.append((kind, payload, nbytes))
            self.queued_bytes += nbytes
            self.put_items[kind] += 1
            wake = self._wake if self.queued_bytes >= BATCH_BYTES else None
        if wake is not None:
            try:
                wake()
            except RuntimeError:  # the loop is closed (the process is ending): the flush sends it, or not
                pass
        return True

    def put_lines(self, kind: str, data: bytes) -> bool:
        return self.put(kind, data, len(data))

    def put_step(self, record: dict[str, Any]) -> bool:
        line, row = step_item(record)
        return self.put("step", [line, *row], len(line) + len(row[3]) + 64)

    def put_media(self, item: dict[str, Any]) -> bool:
        size = sum(len(p[1]) for p in item["pictures"]) + 512
        return self.put("media", item, size)

    # the loop --------------------------------------------------------------------------------
    def _batch(self) -> tuple[list[list[Any]], list[tuple[str, Any, int]]]:
        """Take the next batch: items up to BATCH_BYTES (a larger one alone), consecutive lines of
        one kind joined into one item; with the items as they were queued (to put them back)."""
        taken: list[tuple[str, Any, int]] = []
        size = 0
        with self._lock:
            while self._items:
                nbytes = self._items[0][2]
                if taken and size + nbytes > BATCH_BYTES:
                    break
                taken.append(self._items.popleft())
                self.queued_bytes -= nbytes
                size += nbytes
        items: list[list[Any]] = []
        for kind, payload, _ in taken:
            if kind in LINES and items and items[-1][0] == kind:
                items[-1][1].append(payload)
            else:
                items.append([kind, [payload] if kind in LINES else payload])
        for item in items:
            if item[0] in LINES:
                item[1] = b"".join(item[1])
        return items, taken

    def _requeue(self, taken: list[tuple[str, Any, int]]) -> None:
        """A batch the kernel was too busy to take goes back to the front, as it was queued."""
        with self._lock:
            self._items.extendleft(reversed(taken))
            self.queued_bytes += sum(t[2] for t in taken)

    async def run(self, request: Request, *, timeout: Callable[[], float], max_bytes: Callable[[], int]) -> None:
        """Send what is queued, batch after batch, until cancelled (``flush`` sends the rest)."""
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        self._wake = lambda: loop.call_soon_threadsafe(event.set)
        tasks: set[asyncio.Task[Any]] = set()
        try:
            while True:
                self.max_item = max_bytes() - OVERHEAD
                while self.in_flight < WINDOW and (task := self._send_next(request, timeout())) is not None:
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                try:
                    await asyncio.wait_for(event.wait(), FLUSH_S)
                except asyncio.TimeoutError:
                    pass
                event.clear()
        finally:
            self._wake = None  # what is in flight goes on: flush() waits for its answers

    def _send_next(self, request: Request, timeout: float) -> asyncio.Task[None] | None:
        """Take the next batch now (so it counts as in flight at once) and send it in a task."""
        items, taken = self._batch()
        if not items:
            return None
        self.in_flight += 1
        self.batches += 1
        return asyncio.ensure_future(self._send(request, timeout, {"batch": self.batches, "items": items}, taken))

    async def _send(self, request: Request, timeout: float, batch: dict[str, Any],
                    taken: list[tuple[str, Any, int]]) -> None:
        kinds = Counter(t[0] for t in taken)
        size = sum(t[2] for t in taken)
        try:
            await request("kernel", SERVICE, batch, timeout)
        except RemoteError as exc:
            if exc.remote_type == BUSY:  # sent again, after a pause that holds its place in the window
                self.busy += 1
                self._requeue(taken)
                await asyncio.sleep(0.1 if self._closing else BUSY_BACKOFF_S)
                return
            self.refused.update(kinds)
            if sum(self.refused.values()) == sum(kinds.values()):  # the first refusal says why
                log.warning("the kernel refused this node's results", error=str(exc))
            return
        except RequestTimeout:
            self.lost.update(kinds)
            return
        finally:
            self.in_flight -= 1
        self.sent.update(kinds)
        self.sent_bytes += size

    async def flush(self, request: Request, timeout: float) -> bool:
        """At the end of the node: send everything still queued and wait for the answers, for at most
        ``timeout`` seconds; True if all of it was taken."""
        self._closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        pending: set[asyncio.Task[Any]] = set()
        while (self._items or self.in_flight or pending) and loop.time() < deadline:
            while self.in_flight < WINDOW and (task := self._send_next(request, max(0.1, deadline - loop.time()))):
                pending.add(task)
            if pending:
                _, pending = await asyncio.wait(pending, timeout=min(0.05, max(0.0, deadline - loop.time())))
            else:
                await asyncio.sleep(0.02)  # the run task's batches are still unanswered
        for task in pending:
            task.cancel()
        return not self._items and not self.in_flight

    def stats(self) -> dict[str, Any]:
        """For the node's heartbeats (``stats.results``), and so summary.json."""
        with self._lock:
            queued = len(self._items)
        return {"via": "bus", "put": dict(self.put_items), "sent": dict(self.sent), "sent_bytes": self.sent_bytes,
                "batches": self.batches, "queued": queued, "dropped": dict(self.dropped),
                "refused": dict(self.refused), "lost": dict(self.lost), "busy": self.busy}


class LineSink:
    """A text file-like whose lines go into an outbox (a trace exporter's ``out``)."""

    def __init__(self, outbox: Outbox, kind: str) -> None:
        self.outbox = outbox
        self.kind = kind

    def write(self, text: str) -> int:
        self.outbox.put_lines(self.kind, text.encode())
        return len(text)

    def flush(self) -> None:
        pass


def media_item(episode: str, encoded: Sequence[tuple[str, bytes, str, int, int]], *, caption: str,
               row: str | None, metrics: Sequence[str]) -> dict[str, Any]:
    """A set of pictures, encoded by the node, as it travels (kernel.sdk.media.store_set writes it)."""
    return {"episode": episode, "caption": caption, "row": row, "metrics": list(metrics),
            "pictures": [list(p) for p in encoded], "time": time.time()}
