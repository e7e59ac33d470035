"""``openenv.env`` end to end: an environment made by openenv-core's own template (``openenv init``,
the echo env) is served by the node itself on a free loopback port and played to the end of a run
by the random agent; the server is gone once the run is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openenv", reason="openenv-core is not installed (the train extra)")

from tests.helpers import ROOT, launch  # noqa: E402


def servers_of(package: Path) -> list[int]:
    """Processes whose command line or working folder is the package: its server."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cwd").resolve() == package:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.timeout(120)
def test_a_graph_plays_an_environment_made_by_openenv_init(tmp_path):
    made = subprocess.run([str(Path(sys.executable).with_name("openenv")), "init", "echo_env"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    package = (tmp_path / "echo_env").resolve()
    assert made.returncode == 0 and (package / "server" / "app.py").is_file(), made.stdout + made.stderr
    run = launch("run", str(ROOT / "tests/data/openenv_echo.yaml"), "--set", f"env.package={package}",
                 "--out", str(tmp_path / "run"), "--json", timeout=90)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["episodes"] == {"total": 3, "completed": 3, "failed": 0}
    # the echo env rewards a tenth of the message's length and never ends: 4 steps, cut off
    assert summary["metrics"]["steps"] == 4 and summary["metrics"]["truncated"] == 1
    assert summary["metrics"]["return"] >= 4 * 0.5 - 1e-9  # "hello" (0.5) or "good-bye" (0.8) each step
    assert servers_of(package) == [], "the node's OpenEnv server outlived the run"


def test_a_remote_url_is_refused_at_validation():
    checked = launch("validate", str(ROOT / "tests/data/openenv_echo.yaml"), "--set", "env.package=",
                     "--set", "env.url=http://10.1.2.3:8000")
    assert checked.returncode == 2
    assert "params.url 'http://10.1.2.3:8000': the server must be on this machine" in checked.stdout + checked.stderr
