"""A judge-less graph run with ``--record --ui``, then its folder read as another user of the machine
(issue 35): the recorder and the console are no judge, so the environment still ends every episode;
and nobody else can read the folder, whose launch.yaml holds no console token anyway."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.helpers import launch

JUDGELESS = """\
name: judgeless
nodes:
  - id: env
    uses: hello.env
    params: {length: 4, max_steps: 10}
    inputs:
      action: agent/action
    clock: {mode: lockstep}
  - id: agent
    uses: hello.agent
    inputs:
      obs: {from: env/obs, policy: latest}
run:
  episodes: 3
"""
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture(scope="module")
def watched():
    """One run, in a folder whose parents anyone may enter (as a project's runs/ folder is)."""
    base = Path(tempfile.mkdtemp(prefix="fb-watched-"))
    base.chmod(0o755)
    (base / "judgeless.yaml").write_text(JUDGELESS)
    proc = launch("run", str(base / "judgeless.yaml"), "--record", "--ui", "--out", str(base / "run"), timeout=60)
    yield base, proc
    shutil.rmtree(base, ignore_errors=True)


def test_a_judgeless_graph_ends_every_episode_under_record_and_ui(watched):
    base, proc = watched
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads((base / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"] == {"total": 3, "completed": 3, "failed": 0}
    assert (base / "run" / "recording.mcap").stat().st_size > 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv (util-linux) to act as another user")
def test_another_user_reads_nothing_of_the_run_folder_and_launch_yaml_holds_no_token(watched):
    base, proc = watched
    run = base / "run"
    token = re.search(r"token=([\w-]+)", proc.stdout + proc.stderr)
    assert token is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    kept = (run / "launch.yaml").read_text()
    assert token.group(1) not in kept and "token: <redacted>" in kept
    as_nobody = subprocess.run([*NOBODY, "ls", str(base)], capture_output=True, text=True, timeout=10)
    assert as_nobody.returncode == 0 and "run" in as_nobody.stdout  # the parent is open: the folder itself must hold
    paths = [run, *run.rglob("*")]
    names = {p.relative_to(run).as_posix() for p in paths}
    assert {"launch.yaml", "summary.json", "results.sqlite", "episodes.jsonl", "recording.mcap", "logs/env.log",
            "logs/console.log"} <= names
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path}: {oct(mode)}"
        tried = subprocess.run([*NOBODY, "ls" if path.is_dir() else "cat", str(path)], capture_output=True, text=True,
                               timeout=10)
        assert tried.returncode != 0 and "Permission denied" in tried.stderr, f"another user read {path}"
