"""OpenTelemetry for framebus: one trace follows a message across processes via its traceparent.

Tracing is off unless the run asks for it (``--trace console|otlp|file``); when off, ``span`` is a
no-op that costs one attribute check, so the hot path pays nothing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import IO, Any

_tracer: Any = None
_propagator: Any = None
_provider: Any = None
MODES = ("console", "otlp", "file")


def missing(mode: str) -> str | None:
    """Why ``mode`` cannot export here, or None: OpenTelemetry is an extra (``framebus[trace]``),
    so a run asked to trace says so before any node starts rather than failing in each of them."""
    needed = ["opentelemetry.sdk"] + (["opentelemetry.exporter.otlp.proto.http"] if mode == "otlp" else [])
    for name in needed:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its parent package is not installed either
            found = False
        if not found:
            return f"--trace {mode} needs {name}, which is not installed: pip install 'framebus[trace]'"
    return None


def configure(mode: str | None, service: str, run_dir: str | None = None, *, ship: IO[str] | None = None) -> None:
    """Install a tracer provider for this process; ``file`` writes JSON lines to run_dir/traces/,
    or to ``ship`` (a node on another machine: kernel.bus.outbox sends them to the kernel, which
    writes them into that file on the launching machine)."""
    global _tracer, _propagator, _provider
    if not mode:
        return
    if mode not in MODES:
        raise ValueError(f"unknown trace exporter {mode!r}; allowed: {', '.join(MODES)}")
    problem = missing(mode)
    if problem:
        raise RuntimeError(problem)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if mode == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_ENDPOINT
    elif mode == "file":
        if ship is not None:
            out = ship
        else:
            folder = Path(run_dir or ".") / "traces"
            folder.mkdir(parents=True, exist_ok=True)
            out = open(folder / f"{service}.jsonl", "a", buffering=1)
        provider.add_span_processor(SimpleSpanProcessor(
            ConsoleSpanExporter(out=out, formatter=lambda s: json.dumps(json.loads(s.to_json())) + "\n")))
    else:
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    _tracer = provider.get_tracer("framebus")
    _provider = provider
    _propagator = TraceContextTextMapPropagator()
    import atexit

    atexit.register(provider.shutdown)
    os.environ.setdefault("OTEL_SERVICE_NAME", service)


def flush() -> None:
    """Export the spans that ended and wait in a batch processor (before a node ships its last results)."""
    if _provider is not None:
        _provider.force_flush(2000)


def enabled() -> bool:
    return _tracer is not None


_NO_SPAN = contextlib.nullcontext()


def span(name: str, parent: str | None = None, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A span that is a child of ``parent`` (a W3C traceparent) or of the current span; with
    tracing off, a shared no-op (this runs once per message)."""
    if _tracer is None:
        return _NO_SPAN
    ctx = _propagator.extract({"traceparent": parent}) if parent else None
    return _tracer.start_as_current_span(name, context=ctx, attributes=attributes or None)


def root_span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A span that starts a trace of its own (an agent step), whatever message led to it."""
    if _tracer is None:
        return _NO_SPAN
    from opentelemetry.context import Context

    return _tracer.start_as_current_span(name, context=Context(), attributes=attributes or None)


def set_attributes(**attributes: Any) -> None:
    """Add attributes to the current span (e.g. tokens, once the model has answered)."""
    if _tracer is None:
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes({k: v for k, v in attributes.items() if v is not None})


class OpenSpan:
    """A span opened in one call and closed in a later one of the same task: the environment's
    step, from the moment its actions arrive until it asks for the next ones."""

    def __init__(self) -> None:
        self._span: Any = None
        self._token: Any = None

    def open(self, name: str, parent: str | None, **attributes: Any) -> None:
        self.close()
        if _tracer is None:
            return
        from opentelemetry import context, trace

        ctx = _propagator.extract({"traceparent": parent}) if parent else None
        self._span = _tracer.start_span(name, context=ctx, attributes=attributes or None)
        self._token = context.attach(trace.set_span_in_context(self._span))

    def close(self) -> None:
        if self._span is None:
            return
        from opentelemetry import context

        try:
            context.detach(self._token)
        except ValueError:  # closed from another task (shutdown): the span still ends
            pass
        self._span.end()
        self._span = self._token = None


def current_traceparent() -> str | None:
    if _tracer is None:
        return None
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier.get("traceparent")
