"""structlog set-up shared by the kernel and every node process.

Two sinks from one processor chain: readable lines on stderr (the supervisor prefixes them with the
node id) and JSON lines in the run folder, so a person and a script read the same events. Both are
written by kernel.bus.outlet's threads: logging never blocks the caller's event loop, whoever reads
stderr and however slow the disk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import structlog
from structlog.tracebacks import ExceptionDictTransformer

from kernel.bus import outlet

# Tracebacks in the file as data (type, value, frames) a script can read. Without locals: they may
# hold whole arrays, or a secret key from the environment.
_file_exception = structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False))
_stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)


class JsonLinesTee:
    """A processor that appends each event as one JSON line to a file, then passes it on.

    The line gets a timestamp and an ``exc_info`` becomes its ``exception`` field, on a copy: the
    console renderer after it still gets the exception and prints the traceback in its own, readable
    form, and no timestamp (the terminal already orders lines in time)."""

    def __init__(self, path: Path | None, ship: Any = None) -> None:
        """``ship``: an outbox (kernel.bus.outbox) that sends the lines to the kernel, for a node on
        another machine than the run folder; else the lines go to ``path``."""
        if ship is not None:
            self._write = lambda line: ship.put_lines("log", line.encode())
        else:
            assert path is not None
            path.parent.mkdir(parents=True, exist_ok=True)
            self._write = outlet.FileOutlet(path).write

    def __call__(self, logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        record = _stamp(logger, method, dict(event))
        if "exc_info" in record:
            record = _file_exception(logger, method, record)
        self._write(json.dumps(record, default=str) + "\n")
        return event


def configure(name: str, log_dir: str | Path | None = None, *, colors: bool | None = None, ship: Any = None) -> None:
    """``ship``: the node's outbox when its log lines go to the kernel (kernel.bus.outbox)."""
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
    ]
    if ship is not None:
        processors.append(JsonLinesTee(None, ship))
    elif log_dir:
        processors.append(JsonLinesTee(Path(log_dir) / f"{name}.jsonl"))
    # Plain Python tracebacks on the console: the supervisor prefixes every line of a node's stderr,
    # which a boxed rich traceback does not survive, and they cost no rendering time in a crash loop.
    processors.append(structlog.dev.ConsoleRenderer(
        colors=sys.stderr.isatty() if colors is None else colors, pad_event=12,
        exception_formatter=structlog.dev.plain_traceback))
    structlog.configure(
        processors=processors,
        logger_factory=structlog.WriteLoggerFactory(file=outlet.stderr()),
        cache_logger_on_first_use=True,
    )
