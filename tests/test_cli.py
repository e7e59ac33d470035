"""The `launch` command as a user runs it: a real process, from anywhere, with a run folder."""

from __future__ import annotations

import errno
import json
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT, launch

NODES = {"env", "agent", "judge"}


def _episodes(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines() if line.strip()]


def test_run_hello_from_another_directory_writes_a_complete_run_folder(tmp_path):
    out = tmp_path / "out"
    result = launch("run", "hello.yaml", "--out", str(out), cwd=tmp_path, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr

    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]
    assert summary["run_id"] == "out"
    assert Path(summary["launch_file"]) == ROOT / "launch" / "hello.yaml"
    assert Path(summary["run_dir"]) == out.resolve()
    assert summary["episodes"] == {"total": 5, "completed": 5, "failed": 0}
    assert summary["resumed_episodes"] == 0
    metrics = summary["metrics"]
    assert {"score", "success"} <= set(metrics)
    assert 0.0 <= metrics["success"] <= 1.0 and metrics["score"] >= 0.0
    assert summary["nodes"]["env"]["clock"]["mode"] == "lockstep"
    assert all(n["exit_code"] == 0 for n in summary["nodes"].values()), summary["nodes"]

    episodes = _episodes(out)
    assert len(episodes) == 5
    assert sorted(e["episode_id"] for e in episodes) == [f"ep{i:05d}" for i in range(5)]
    assert all(e["status"] == "completed" and "score" in e["metrics"] for e in episodes)

    logs = {p.name for p in (out / "logs").iterdir()}
    for node in NODES:
        assert {f"{node}.log", f"{node}.jsonl"} <= logs, logs
    resolved = yaml.safe_load((out / "launch.yaml").read_text())
    assert {n["id"] for n in resolved["nodes"]} == NODES
    assert resolved["run"]["episodes"] == 5
    # nothing was written into the working directory but the run folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_rerun_with_the_same_out_resumes_and_only_plays_missing_episodes(tmp_path):
    out = tmp_path / "out"
    first = launch("run", "hello.yaml", "--out", str(out), cwd=tmp_path, timeout=90)
    assert first.returncode == 0, first.stdout + first.stderr
    before = _episodes(out)
    assert len(before) == 5

    again = launch("run", "hello.yaml", "--out", str(out), cwd=tmp_path, timeout=90)
    assert again.returncode == 0, again.stdout + again.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]
    assert summary["resumed_episodes"] == 5
    assert summary["episodes"] == {"total": 5, "completed": 5, "failed": 0}
    assert _episodes(out) == before  # nothing re-run, nothing appended

    more = launch("run", "hello.yaml", "--out", str(out), "--episodes", "7", cwd=tmp_path, timeout=90)
    assert more.returncode == 0, more.stdout + more.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]
    assert summary["resumed_episodes"] == 5
    assert summary["episodes"] == {"total": 7, "completed": 7, "failed": 0}
    after = _episodes(out)
    assert after[:5] == before
    assert [e["episode_id"] for e in after[5:]] == ["ep00005", "ep00006"]


def test_validate_points_at_a_typo_with_a_suggestion(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "500")  # one error on one line
    path = tmp_path / "typo.yaml"
    path.write_text(textwrap.dedent("""\
        name: typo
        nodes:
          - id: env
            uses: hello.env
          - id: agent
            uses: hello.agent
            inptus:
              obs: env/obs
        """))
    result = launch("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"{path}:7:5" in result.stderr, result.stderr
    assert "inptus" in result.stderr
    assert "did you mean 'inputs'" in result.stderr
    assert result.stdout == ""

    good = launch("validate", "hello.yaml", cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    assert {n["id"] for n in yaml.safe_load(good.stdout)["nodes"]} == NODES


def test_graph_as_mermaid_has_every_edge(tmp_path):
    result = launch("graph", "hello.yaml", "--format", "mermaid", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "flowchart LR"
    edges = [ln.strip() for ln in lines if "-->" in ln]
    assert sorted(edges) == sorted([
        'n_agent -->|"action→action"| n_env',
        'n_env -->|"obs→obs"| n_agent',
        'n_env -->|"step→step"| n_judge',
    ])
    for node in NODES:
        assert any(ln.strip().startswith(f'n_{node}["{node}') for ln in lines), result.stdout


def test_ls_lists_the_bundled_launch_files(tmp_path):
    result = launch("ls", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "hello.yaml" in result.stdout
    assert "Proof of life" in result.stdout
    bundled = sorted(p.name for p in (ROOT / "launch").glob("*.yaml"))
    assert all(name in result.stdout for name in bundled)


UNDECLARED_INPUT = """
name: badwire
nodes:
  - id: env
    uses: hello.env
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 1.0}
  - id: agent
    uses: AGENT
    PARAMS
    inputs:
      obs: env/obs
      reward: env/step
run: {episodes: 2}
"""


def test_wiring_a_port_the_node_class_lacks_is_refused_at_its_line_before_anything_starts(tmp_path):
    """A node class with fixed ports: a wire to an input it lacks, or from an output its source
    lacks, is a launch-file error at the wire, from validate and from run alike."""
    path = tmp_path / "badwire.yaml"
    path.write_text(textwrap.dedent(UNDECLARED_INPUT).replace("AGENT", "hello.agent").replace("PARAMS", ""))
    for command in ("validate", "run"):
        out = tmp_path / f"out-{command}"
        result = launch(command, str(path), *(["--out", str(out)] if command == "run" else []), cwd=tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        flat = " ".join(result.stderr.split())
        assert "badwire.yaml:13:7: nodes[1].inputs.reward: node 'agent' (hello.agent) has no input 'reward'; " \
               "allowed: obs" in flat, result.stderr
        assert not out.exists()
    path.write_text(textwrap.dedent(UNDECLARED_INPUT).replace("AGENT", "hello.agent").replace("PARAMS", "")
                    .replace("      reward: env/step\n", "").replace("obs: env/obs", "obs: env/observation"))
    result = launch("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "badwire.yaml:12:12: nodes[1].inputs.obs: source 'env/observation': node 'env' (hello.env) has no " \
           "output 'observation'; allowed: obs, step" in " ".join(result.stderr.split()), result.stderr


def test_wiring_an_input_the_node_does_not_declare_fails_fast_and_says_which(tmp_path):
    """Ports that come from params are known only when the node says hello: the kernel refuses the
    wire then, names it, and the run ends at once (not after the ready timeout)."""
    path = tmp_path / "badwire.yaml"
    path.write_text(textwrap.dedent(UNDECLARED_INPUT).replace("AGENT", "tests.nodes:Renamed")
                    .replace("PARAMS", "params: {inputs: [obs], outputs: [action]}"))
    assert launch("validate", str(path), cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    result = launch("run", str(path), "--out", str(out), cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["duration_s"] < 30  # not the 300 s ready timeout
    reason = summary["reason"]
    assert "'agent'" in reason and "'reward'" in reason, reason
    assert "obs" in reason  # what the node does declare
    assert summary["nodes"]["agent"]["state"] == "failed"
    assert "reward" in (summary["nodes"]["agent"]["error"] or "")
    flat = " ".join(result.stderr.split())
    assert "reward" in flat and "agent" in flat, result.stderr
    assert summary["episodes"]["completed"] == 0


SLOW_JUDGE = """
name: slowjudge
nodes:
  - id: env
    uses: hello.env
    params: {length: 4, max_steps: 10}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
  - id: judge
    uses: tests.nodes_extra:SlowJudge
    params: {delay_s: 0.3}
    inputs: {step: {from: env/step, policy: fifo, size: 100}}
run: {episodes: 3}
"""


def test_run_completes_when_the_judge_ends_the_last_episode_after_the_env_is_done(tmp_path):
    # The environment plays all episodes in milliseconds; the judge ends each one 0.3 s after its
    # last step. Every episode does end, so the run must complete, not fail for "missing" episodes.
    path = tmp_path / "slowjudge.yaml"
    path.write_text(textwrap.dedent(SLOW_JUDGE))
    out = tmp_path / "out"
    result = launch("run", str(path), "--out", str(out), cwd=tmp_path, timeout=60)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["episodes"] == {"total": 3, "completed": 3, "failed": 0}
    assert len(_episodes(out)) == 3


def test_tcp_transport_binds_every_socket_to_loopback(tmp_path):
    import json as _json

    from tests.helpers import launch_bg, wait_until

    proc = launch_bg("run", "hello.yaml", "--set", "bus.transport=tcp", "--set", "agent.think_s=0.05",
                     "--episodes", "500", "--out", str(tmp_path / "run"), cwd=tmp_path)
    try:
        status = {}

        def running() -> bool:
            nonlocal status
            res = launch("ctl", "status", "--run", str(tmp_path / "run"))
            if res.returncode != 0:
                return False
            status = _json.loads(res.stdout)
            return status["started"] and all(n["inbox"] for n in status["nodes"].values())

        assert wait_until(running, 60, 0.5)
        endpoints = [status["endpoint"], *(n["inbox"] for n in status["nodes"].values())]
        assert all(e.startswith("tcp://127.0.0.1:") for e in endpoints), endpoints
        assert launch("ctl", "stop", "--run", str(tmp_path / "run")).returncode == 0
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    summary = _json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["episodes"]["completed"] > 0
    assert summary["bus"]["curve"] is True  # loopback too: every local user can reach a loopback port


def test_a_node_that_cannot_start_fails_the_run_at_once_with_its_last_lines(tmp_path):
    import json as _json
    import time as _time

    path = tmp_path / "broken.yaml"
    path.write_text(textwrap.dedent("""
        name: broken
        nodes:
          - id: env
            uses: hello.env
            inputs: {action: agent/action}
          - id: agent
            uses: tests.nodes:CrashOnStart
            params: {crashes: 99}
        run: {episodes: 2}
    """).replace("inputs: {action: agent/action}", "params: {max_steps: 3}"))
    t0 = _time.monotonic()
    res = launch("run", str(path), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert _time.monotonic() - t0 < 20
    assert res.returncode == 1
    assert "node 'agent' exited with code 1" in res.stderr + res.stdout
    assert "crash number 1 on purpose" in res.stderr + res.stdout  # its last lines are shown
    summary = _json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed" and "agent" in summary["reason"]


def test_preflight_stops_a_run_before_any_process_starts(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent("""
        name: bad
        nodes:
          - id: agent
            uses: json:JSONDecoder
    """))
    res = launch("run", str(path), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert res.returncode == 2
    assert "bad.yaml:5:11: nodes[0].uses: node 'agent': cannot load json:JSONDecoder" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "run").exists()


def test_validate_refuses_hostile_launch_files_at_their_line_with_exit_2(tmp_path, monkeypatch):
    """What issue 35 found: a YAML bomb hung validate, a NUL byte was an "internal error", and a
    ``uses:`` module calling sys.exit on import ended validate silently with its exit code."""
    monkeypatch.setenv("COLUMNS", "500")  # one error on one line
    laughs = ["x-laughs:", "  - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    laughs += [f"  - &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    (tmp_path / "bomb.yaml").write_text("\n".join(laughs) + "\nnodes:\n  - {id: env, cmd: 'true', params: {x: *l8}}\n")
    (tmp_path / "nul.yaml").write_bytes(b"nodes:\n  - id: env\n    cmd: 'true'\n    params: {a: 1\x00}\n")
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(3)\n")  # found from cwd (python -m)
    (tmp_path / "exits.yaml").write_text("nodes:\n  - id: env\n    uses: exits_on_import:Env\n")
    for name, where, needle in (("bomb", "bomb.yaml:7:5", "200,000 values"), ("nul", "nul.yaml:4:18", "NUL byte"),
                                ("exits", "exits.yaml:3:11", "importing it called sys.exit(3)")):
        res = launch("validate", f"{name}.yaml", cwd=tmp_path, timeout=60)
        assert res.returncode == 2, (name, res.returncode, res.stderr)
        assert where in res.stderr and needle in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_params_at_the_limit_reach_a_process_and_one_byte_more_would_not():
    """MAX_PARAMS_BYTES is what Linux takes in the one environment string the params travel in."""
    from kernel.launchfile.limits import MAX_PARAMS_BYTES, PARAMS_ENV

    subprocess.run(["true"], env={PARAMS_ENV: "x" * MAX_PARAMS_BYTES}, check=True)
    with pytest.raises(OSError) as err:
        subprocess.run(["true"], env={PARAMS_ENV: "x" * (MAX_PARAMS_BYTES + 1)}, check=True)
    assert err.value.errno == errno.E2BIG


def test_out_naming_a_file_is_one_line_and_exit_2_for_run_and_report(tmp_path):
    """`launch run --out FILE` (a file where the run folder would be) and `launch report RUN --out
    DIR`: one error line naming the path, exit code 2, no traceback (both were tracebacks, exit 1)."""
    afile = tmp_path / "afile"
    afile.write_text("notes\n")
    run = launch("run", "hello.yaml", "--episodes", "1", "--out", str(afile))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"the run folder {afile} cannot be made: {afile} is a file, not a folder" in " ".join(run.stderr.split())
    out = tmp_path / "run"
    assert launch("run", "hello.yaml", "--episodes", "1", "--out", str(out)).returncode == 0
    report = launch("report", str(out), "--out", str(tmp_path))
    assert report.returncode == 2 and "Traceback" not in report.stderr, report.stderr
    assert f"cannot write the report to {tmp_path}: it is a folder" in " ".join(report.stderr.split())
    assert afile.read_text() == "notes\n"
