"""What a failure in a node looks like from outside: to a caller, and in the node's log file."""

from __future__ import annotations

import asyncio
import json

import pytest

from kernel.bus.errors import RemoteError
from kernel.testing import Harness
from tests.nodes import Emitter, Faulty


async def test_service_error_keeps_the_remote_type():
    async with Harness(quiet=True) as h:
        h.add("faulty", Faulty)
        probe = h.probe()
        await h.start()
        with pytest.raises(RemoteError) as info:
            await probe.request("faulty", "lookup", {"key": "missing"})
        assert info.value.remote_type == "KeyError"
        assert "faulty.lookup" in str(info.value) and "KeyError: 'missing'" in str(info.value)
        with pytest.raises(RemoteError) as unknown:
            await probe.request("faulty", "nope", {})
        assert unknown.value.remote_type == "UnknownService"


async def test_handler_error_lands_in_the_node_log_with_its_traceback():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("faulty", Faulty, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 10}})
        probe = h.probe()
        await h.start()
        await probe.request("src", "emit", {"n": 1})
        path = h.run_dir / "logs" / "faulty.jsonl"
        # up to 30 s: the fresh-clone suite on 2 cores (4 workers) took over the 5 s this waited before
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            text = path.read_text() if path.exists() else ""
            whole = text[:text.rfind("\n") + 1]  # a line the node is still writing is read next time
            events = [json.loads(line) for line in whole.splitlines()]
            failed = [e for e in events if e.get("event") == "input handler failed"]
            if failed or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.05)
        assert failed, f"no 'input handler failed' in {path}"
        (exc,) = failed[0]["exception"]
        assert exc["exc_type"] == "ZeroDivisionError"
        assert exc["exc_value"] == "handler fails on purpose at 0"
        assert any(frame["name"] == "take" for frame in exc["frames"])


def test_the_run_summary_shows_a_reason_and_bad_senders_as_text_not_markup():
    """A failed run's reason can quote a node's exception (a model's or a page's words), and the
    malformed-message counts are keyed by identities any connecting peer chooses: rich markup in
    them is printed as written, never interpreted."""
    from rich.console import Console

    from kernel.tools import cli

    summary = {"status": "failed", "reason": "agent: ValueError: [bold red]pwned[/] [link=http://x]y[/link]",
               "episodes": {"completed": 0, "total": 1, "failed": 1}, "metrics": {}, "run_dir": "/tmp/r",
               "stats": {"edges": [], "decode_errors": {"kernel": {"[blink]evil[/blink]": 3}}}}
    recorder = Console(record=True, width=400, force_terminal=True)
    old, cli.console = cli.console, recorder
    try:
        cli._print_summary(summary)
    finally:
        cli.console = old
    text = recorder.export_text()
    assert "[bold red]pwned[/] [link=http://x]y[/link]" in text
    assert "[blink]evil[/blink]" in text
