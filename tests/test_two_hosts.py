"""A graph across two hosts: two Linux network namespaces joined by a veth link (198.18.0.1 and
198.18.0.2, RFC 2544's test range, addresses that exist only inside them), a Ray head in one and a
Ray worker in the other, set up and torn down by ``scripts/two_hosts.sh`` as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, launch_env

SCRIPT = ROOT / "scripts" / "two_hosts.sh"


def _why_not() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "the 'ray' package is not installed (pip install ray)"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    if shutil.which("ip") is None:
        return "iproute2's ip command is missing (apt-get install iproute2)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


@pytest.fixture
def hosts():
    """Hosts A and B with a Ray head and worker; afterwards no namespace, Ray process or link is left,
    whether the test passed or not."""
    tag = f"{os.getpid() % 100000}"
    ray_tmp = Path(f"/tmp/fbray{tag}")  # Ray's socket paths under it must stay within AF_UNIX's 107 bytes
    env = {**launch_env(), "FB_HOST_A": f"fbA{tag}", "FB_HOST_B": f"fbB{tag}", "FB_RAY_TMP": str(ray_tmp),
           "FB_RAY": str(Path(sys.executable).parent / "ray"), "FB_LAUNCH": f"{sys.executable} -m kernel.tools.cli",
           "RAY_AUTH_MODE": "disabled"}
    up = subprocess.run(["bash", str(SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=180)
    try:
        assert up.returncode == 0, up.stdout + up.stderr + (ray_tmp / "a.log").read_text(errors="replace")
        yield env
    finally:
        down = subprocess.run(["bash", str(SCRIPT), "down"], env=env, capture_output=True, text=True, timeout=120)
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert down.returncode == 0, down.stderr
        assert env["FB_HOST_A"] not in names and env["FB_HOST_B"] not in names, names


def test_env_on_host_a_agent_and_judge_on_host_b_complete_with_curve(hosts: dict[str, str], tmp_path: Path) -> None:
    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nnodes:\n"
                  "  - id: env\n    resources: {custom: {hostA: 0.1}}\n"
                  "  - id: agent\n    resources: {custom: {hostB: 0.1}}\n"
                  "  - id: judge\n    resources: {custom: {hostB: 0.1}}\n")
    out = tmp_path / "run"
    res = subprocess.run(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address", "198.18.0.1:6379",
                          "--episodes", "20", "--out", str(out), "--json"],
                         env=hosts, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 20
    where = {n: v["ray"]["node_ip"] for n, v in summary["nodes"].items()}
    assert where == {"env": "198.18.0.1", "agent": "198.18.0.2", "judge": "198.18.0.2"}
    bus = summary["bus"]  # off the machine's loopback, the bus is TCP on host A's address, under CURVE
    assert bus["transport"] == "tcp" and bus["endpoint"].startswith("tcp://198.18.0.1:") and bus["curve"] is True
    assert bus["curve_refused"] == 0
