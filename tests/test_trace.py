"""One OpenTelemetry trace follows a message across three node processes (launch run --trace file)."""

from __future__ import annotations

import json
import textwrap

from tests.helpers import launch

TRACE_GRAPH = """
name: tracetest
nodes:
  - id: a
    uses: tests.nodes_extra:TraceStart
    inputs: {ack: b/ack}
  - id: b
    uses: tests.nodes_extra:TraceMiddle
    params: {target: c}
    inputs: {in: a/out}
  - id: c
    uses: tests.nodes_extra:TraceEnd
"""


def _spans(run_dir) -> list[dict]:
    spans = []
    for path in sorted((run_dir / "traces").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                span = json.loads(line)
                span["_file"] = path.name
                spans.append(span)
    return spans


def _service(span: dict) -> str:
    return span["resource"]["attributes"]["service.name"]


def test_one_trace_spans_three_processes(tmp_path):
    path = tmp_path / "trace.yaml"
    path.write_text(textwrap.dedent(TRACE_GRAPH))
    run_dir = tmp_path / "run"
    result = launch("run", str(path), "--trace", "file", "--out", str(run_dir), cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]

    spans = _spans(run_dir)
    files = sorted({s["_file"] for s in spans})
    assert {"a.jsonl", "b.jsonl", "c.jsonl"} <= set(files), files  # one file per process
    by_name = {}
    for s in spans:
        by_name.setdefault(s["name"], []).append(s)
    for name in ("a.run", "b.in", "c.work"):
        assert len(by_name.get(name, [])) == 1, (name, sorted(by_name))
    root, middle, leaf = by_name["a.run"][0], by_name["b.in"][0], by_name["c.work"][0]

    assert [_service(root), _service(middle), _service(leaf)] == ["a", "b", "c"]
    assert (root["_file"], middle["_file"], leaf["_file"]) == ("a.jsonl", "b.jsonl", "c.jsonl")
    # one trace ...
    trace_id = root["context"]["trace_id"]
    assert int(trace_id, 16) != 0
    assert middle["context"]["trace_id"] == trace_id
    assert leaf["context"]["trace_id"] == trace_id
    # ... linked parent -> child across the process boundaries
    assert root["parent_id"] is None
    assert middle["parent_id"] == root["context"]["span_id"]
    assert leaf["parent_id"] == middle["context"]["span_id"]
    assert len({root["context"]["span_id"], middle["context"]["span_id"], leaf["context"]["span_id"]}) == 3
    # and the child spans happened within their parent's time (same host clock)
    assert root["start_time"] <= middle["start_time"] <= leaf["start_time"]
    assert leaf["end_time"] <= middle["end_time"]
    # every span of the run belongs to that one trace (nothing else was traced)
    assert {s["context"]["trace_id"] for s in spans} == {trace_id}
