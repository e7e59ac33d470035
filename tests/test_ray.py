"""``launch run --backend ray``: nodes in Ray actors on a local Ray instance, messages still on ZeroMQ."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.helpers import LONG_HELLO, alive, launch, launch_bg, wait_until
from tests.tiers import uses

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="the 'ray' package is not installed (pip install ray)")
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "FRAMEBUS_RAY_NUM_CPUS": "2"}


def _ray_pids() -> set[int]:
    """Processes of any Ray instance: its daemons, and workers (named ray::<Class> once they host an actor)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if cmdline.startswith(b"ray::") or b"/ray/" in cmdline or b"raylet" in cmdline or b"gcs_server" in cmdline:
            pids.add(int(entry.name))
    return pids


@pytest.fixture
@uses("cluster")
def ray_env(monkeypatch: pytest.MonkeyPatch):
    """Ray settings for a small local instance; afterwards, no Ray process of ours may be left."""
    for key, value in RAY_ENV.items():
        monkeypatch.setenv(key, value)
    before = _ray_pids()
    yield
    assert wait_until(lambda: not (_ray_pids() - before), 15, 0.2), \
        f"Ray processes left behind: {sorted(_ray_pids() - before)}"


def _file(tmp_path: Path, nodes: str) -> Path:
    path = tmp_path / "ray-hello.yaml"
    path.write_text(f"include: [hello]\nnodes:\n{nodes}")
    return path


def _status(run_dir: Path) -> dict | None:
    res = launch("ctl", "status", "--run", str(run_dir))
    return json.loads(res.stdout) if res.returncode == 0 else None


@needs_ray
def test_hello_runs_on_a_local_ray_instance(tmp_path: Path, ray_env: None) -> None:
    lf = _file(tmp_path, "  - id: agent\n    resources: {num_cpus: 1}\n")
    res = launch("run", str(lf), "--backend", "ray", "--episodes", "3", "--out", str(tmp_path / "run"), "--json",
                 cwd=tmp_path, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "started a local Ray instance" in res.stderr
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 3
    for node in summary["nodes"].values():
        assert node["backend"] == "ray" and node["exit_code"] == 0 and node["ray"]["actor_id"]
    assert summary["nodes"]["agent"]["ray"]["assigned"] == {"CPU": 1.0}  # the launch file's request reached Ray
    assert summary["nodes"]["env"]["ray"]["assigned"] == {}  # Ray's default: no CPU held while running
    assert "transport: tcp" in (tmp_path / "run" / "launch.yaml").read_text()


@needs_ray
@pytest.mark.timeout(420)  # three actors' starts, then a fourth, on a machine the rest of the suite loads
def test_a_killed_actor_is_a_failed_node_and_restarts_by_policy(tmp_path: Path, ray_env: None) -> None:
    lf = _file(tmp_path, "  - id: agent\n    restart: {policy: on-failure, max_restarts: 2, backoff: 0.2}\n")
    run_dir = tmp_path / "run"
    proc = launch_bg("run", str(lf), *LONG_HELLO[1:], "--backend", "ray", "--set", "agent.think_s=0.02",
                     "--out", str(run_dir), cwd=tmp_path)
    try:
        status: dict = {}

        def running(incarnation: int = 1) -> bool:
            nonlocal status
            status = _status(run_dir) or {}
            nodes = status.get("nodes", {})
            return bool(status.get("started")) and all(n["pid"] and n["state"] == "running" for n in nodes.values()) \
                and nodes["agent"]["incarnation"] == incarnation

        assert wait_until(running, 120, 0.5), "the graph did not start"
        workers = {}
        for node_id, node in status["nodes"].items():  # each node process is the child of a Ray actor's worker
            worker = int(Path(f"/proc/{node['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
            assert Path(f"/proc/{worker}/cmdline").read_bytes().startswith(b"ray::FramebusNode"), node_id
            workers[node_id] = worker
        assert len(set(workers.values())) == 3  # one actor per node
        old_agent = status["nodes"]["agent"]["pid"]
        os.kill(workers["agent"], signal.SIGKILL)  # the actor dies, and with it (PDEATHSIG) its node
        assert wait_until(lambda: not alive(old_agent), 10), "the node outlived its actor"
        assert wait_until(lambda: running(incarnation=2), 180, 0.5), f"the agent did not come back: {status}"
        done = status["episodes"]["completed"]
        assert wait_until(lambda: running(2) and status["episodes"]["completed"] > done, 60, 0.5)
        assert launch("ctl", "stop", "--run", str(run_dir)).returncode == 0
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:  # Ctrl-C first, so the run stops the Ray instance it started
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except Exception:
                proc.kill()
                proc.wait()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "stopped"
    assert summary["nodes"]["agent"]["restarts"] == 1 and summary["nodes"]["env"]["restarts"] == 0
    assert "the Ray actor running this node is gone" in (run_dir / "logs" / "agent.log").read_text()


@needs_ray
def test_an_impossible_resource_request_is_refused_before_anything_starts(tmp_path: Path, ray_env: None) -> None:
    lf = _file(tmp_path, "  - id: agent\n    resources: {custom: {framebus_unobtainium: 1}}\n")
    res = launch("run", str(lf), "--backend", "ray", "--out", str(tmp_path / "run"), cwd=tmp_path, timeout=120)
    assert res.returncode == 2, res.stderr[-3000:]
    assert "node 'agent' asks Ray for {framebus_unobtainium 1}, but no machine of the cluster has that much" \
        in res.stderr.replace("\n", " ")
    assert not (tmp_path / "run").exists()


@needs_ray
def test_a_request_that_finds_no_room_in_time_fails_the_run(tmp_path: Path, ray_env: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    lf = _file(tmp_path, "  - id: env\n    resources: {num_cpus: 2}\n  - id: agent\n    resources: {num_cpus: 2}\n"
                         "  - id: judge\n    resources: {num_cpus: 0}\n")
    # long enough for the nodes that fit to start their Ray workers on a loaded machine (a start alone
    # took over 4 s with the suite running beside it), short enough not to wait long for the one that
    # cannot be placed
    monkeypatch.setenv("FRAMEBUS_RAY_PLACEMENT_TIMEOUT", "20")
    res = launch("run", str(lf), "--backend", "ray", "--json", "--out", str(tmp_path / "run"), cwd=tmp_path,
                 timeout=120)
    assert res.returncode == 1, res.stderr[-3000:]
    text = res.stderr.replace("\n", " ")
    # env and agent each ask for both CPUs: whichever Ray places second cannot be placed
    unplaced = [n for n in ("env", "agent") if f"Ray did not place and start node {n!r} within 20 s" in text]
    assert unplaced and "it asks for {CPU 2}" in text, text[-3000:]
    assert "waiting 15 s for Ray to place and start it (gives up at 20 s" in text, text[-3000:]  # not silent
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["status"] == "failed"
    # (the rest fit, and start, unless the machine is so loaded that a worker's start takes 20 s too)
    assert all(summary["nodes"][n]["exit_code"] == 127 for n in unplaced)


def test_resources_are_checked_when_the_launch_file_loads(tmp_path: Path) -> None:
    cases = {
        "{num_gpu: 1}": "did you mean 'num_gpus'",
        "{num_gpus: 1.5}": "above 1 a resource must be a whole number",
        "{memory: lots}": "is not a size",
        "{num_cpus: -1}": "greater than or equal to 0",
        "{custom: {TPU: 2.5}}": "above 1 a resource must be a whole number",
    }
    for resources, message in cases.items():
        lf = str(_file(tmp_path, f"  - id: agent\n    resources: {resources}\n"))
        res = launch("validate", lf, "--backend", "ray", cwd=tmp_path)
        assert res.returncode == 2 and message in res.stderr, (resources, res.stderr)
        assert "ray-hello.yaml:4:" in res.stderr and "nodes[0].resources" in res.stderr, res.stderr
        # the local backend ignores resources: (only a mapping is required), so only Ray's are checked
        assert launch("validate", lf, cwd=tmp_path).returncode == 0
    res = launch("run", lf, "--backend", "ray", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert res.returncode == 2 and "above 1 a resource must be a whole number" in res.stderr, res.stderr
    assert "Ray" not in res.stderr and not (tmp_path / "run").exists()  # refused before any Ray instance starts
    res = launch("validate", str(_file(tmp_path, "  - id: agent\n    resources: 4\n")), cwd=tmp_path)
    assert res.returncode == 2 and "expected a mapping" in res.stderr, res.stderr
    res = launch("validate", str(_file(tmp_path, "  - id: agent\n    resources: {num_gpus: 0.5, memory: 2GiB}\n")),
                 "--backend", "ray", cwd=tmp_path)
    assert res.returncode == 0 and "num_gpus: 0.5" in res.stdout and f"memory: {2 * 2**30}" in res.stdout


def test_address_needs_the_ray_backend(tmp_path: Path) -> None:
    res = launch("run", "hello.yaml", "--address", "auto", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert res.returncode == 2 and "--backend ray" in res.stderr
