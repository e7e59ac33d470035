"""The kernel's side of shipped results: what nodes on other machines send over the bus (log and
trace lines, step records, pictures; kernel.bus.outbox) is written into the run folder here, on
the launching machine, exactly where and as the node would have written it itself.

The event loop only checks a batch, counts it and queues it (``take``); one thread of its own writes
the files, and step rows go to the results store's writer thread, so neither a slow disk nor the
database's lock ever holds up the kernel. What waits to be written is bounded, per node and in all
(``NODE_BACKLOG``, ``TOTAL_BACKLOG``): a batch past it is refused as busy (the node sends it again
later), so a node that floods the kernel costs it that much memory and no more.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import Counter
from pathlib import Path
from typing import IO, Any

import structlog

from kernel.bus.outbox import LINES, ResultsBusy
from kernel.bus.resultsdb import attempt_of, not_written
from kernel.graph.store import ResultsStore
from kernel.sdk.media import store_set

log = structlog.get_logger("framebus.results")

NODE_BACKLOG = int(os.environ.get("FRAMEBUS_RESULTS_NODE_BACKLOG", str(64 * 1024 * 1024)))
TOTAL_BACKLOG = int(os.environ.get("FRAMEBUS_RESULTS_BACKLOG", str(256 * 1024 * 1024)))
FOLDERS = {"log": "logs", "trace": "traces", "step": "steps"}  # RUN/<folder>/<node>.jsonl


def _scalar(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float)) else str(value)


class ResultsInbox:
    """Writes shipped results into ``run_dir``; ``take`` on the loop, the writing in a thread."""

    def __init__(self, run_dir: Path, store: ResultsStore) -> None:
        self.run_dir = run_dir
        self.store = store
        self._queue: queue.SimpleQueue[tuple[str, list[list[Any]], int] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.backlog: Counter[str] = Counter()  # bytes taken and not yet written, per node
        self.received: dict[str, Counter[str]] = {}  # node -> items taken, by kind
        self.received_bytes: Counter[str] = Counter()
        self.batches: Counter[str] = Counter()
        self.busy: Counter[str] = Counter()  # batches refused as busy, per node
        self.failed: Counter[str] = Counter()  # items that could not be written, per node
        self._files: dict[tuple[str, str], IO[bytes]] = {}  # the writer thread's open files
        self._thread = threading.Thread(target=self._run, name="results-inbox", daemon=True)
        self._thread.start()

    # the loop -------------------------------------------------------------------------------
    def take(self, node: str, items: list[list[Any]], nbytes: int) -> None:
        """Queue a checked batch of ``node``'s for writing; raises ResultsBusy (the node sends it
        again later) when too much waits already."""
        with self._lock:
            waiting, total = self.backlog[node], sum(self.backlog.values())
            # (a batch larger than the bound passes alone: it would never pass otherwise)
            if (waiting and waiting + nbytes > NODE_BACKLOG) or (total and total + nbytes > TOTAL_BACKLOG):
                self.busy[node] += 1
                raise ResultsBusy(f"the kernel has {self.backlog[node]} bytes of {node}'s results still to write "
                           f"({sum(self.backlog.values())} in all); send them again later")
            self.backlog[node] += nbytes
        got = self.received.setdefault(node, Counter())
        for kind, payload in items:
            got[kind] += payload.count(b"\n") if kind in LINES else 1
        self.received_bytes[node] += nbytes
        self.batches[node] += 1
        self._queue.put((node, items, nbytes))

    def facts(self, node: str) -> dict[str, Any]:
        """What came from ``node`` (summary.json's ``nodes.<id>.results``)."""
        return {"received": dict(self.received.get(node, {})), "received_bytes": self.received_bytes[node],
                "batches": self.batches[node], "busy": self.busy[node], "write_failures": self.failed[node]}

    def close(self, timeout: float = 30.0) -> bool:
        """Write what is queued, then end the thread (at most ``timeout`` seconds)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)
        return not self._thread.is_alive()

    # the writer thread ----------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                work = self._queue.get()
                if work is None:
                    return
                node, items, nbytes = work
                try:
                    self._write(node, items)
                finally:
                    with self._lock:
                        self.backlog[node] -= nbytes
        finally:
            for fh in self._files.values():
                fh.close()

    def _disk_refused(self, exc: BaseException) -> bool:
        """A disk that refuses the run folder's files (full, read-only) ends the run, as the store's
        own refusals do; True if ``exc`` was that."""
        refused = not_written(self.run_dir, exc)
        if refused is not None:
            self.store.disk_refused(str(refused))
        return refused is not None

    def _file(self, node: str, kind: str) -> IO[bytes]:
        fh = self._files.get((node, kind))
        if fh is None:
            folder = self.run_dir / FOLDERS[kind]
            folder.mkdir(parents=True, exist_ok=True)
            fh = self._files[(node, kind)] = open(folder / f"{node}.jsonl", "ab")  # noqa: SIM115
        return fh

    def _write(self, node: str, items: list[list[Any]]) -> None:
        rows = []
        touched: set[IO[bytes]] = set()
        for kind, payload in items:
            try:
                if kind in LINES:
                    fh = self._file(node, kind)
                    fh.write(payload)
                    touched.add(fh)
                elif kind == "step":
                    line, ts, episode, t, record = payload
                    fh = self._file(node, "step")
                    fh.write(line.encode())
                    touched.add(fh)
                    rows.append((ts, node, _scalar(episode), _scalar(t), record, attempt_of(record)))
                elif kind == "media":
                    store_set(self.run_dir, node, payload["episode"], [tuple(p) for p in payload["pictures"]],
                              caption=payload["caption"], row=payload["row"], metrics=payload["metrics"],
                              when=payload["time"])
            except Exception as exc:
                self.failed[node] += 1
                if self._disk_refused(exc):
                    continue
                if self.failed[node] <= 3:
                    log.error("could not write a node's shipped results", node=node, kind=kind, exc_info=True)
        for fh in touched:
            try:
                fh.flush()
            except OSError as exc:
                self.failed[node] += 1
                self._disk_refused(exc)
        if rows:
            self.store.steps(rows)
