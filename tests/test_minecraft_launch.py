"""The Minecraft pack end to end through real processes: the bundled launch files validate, the gold run
plays VAB tasks through the env's oracle with the first-person view and a recording, and the report shows
the frames and VAB's column."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nodes.game.minecraft.sidecar import Sidecar
from tests.helpers import LAUNCH, ROOT, launch, launch_env

FILES = sorted(p.name for p in (ROOT / "launch").glob("vab_minecraft_*.yaml"))
needs_js = pytest.mark.skipif(Sidecar.missing() is not None, reason=str(Sidecar.missing()))


def test_the_four_launch_files_exist_and_validate() -> None:
    assert FILES == ["vab_minecraft_gold.yaml", "vab_minecraft_gpt4o.yaml", "vab_minecraft_local.yaml",
                     "vab_minecraft_random.yaml"]
    env = {**launch_env(), "OPENAI_API_KEY": "test-key-for-validate"}
    for name in FILES:
        proc = subprocess.run([*LAUNCH, "validate", f"launch/{name}"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_unknown_task_is_named_before_the_run_with_close_matches(tmp_path: Path) -> None:
    proc = launch("run", "launch/vab_minecraft_gold.yaml", "--set", "env.task=glass_botle", "--out",
                  str(tmp_path / "run"), cwd=ROOT, timeout=120)
    assert proc.returncode != 0
    text = (proc.stdout + proc.stderr).replace("\n", " ")
    assert "'glass_botle'" in text and "glass_bottle" in text and "not one of VAB's 116 Minecraft tasks" in text


@needs_js
@pytest.mark.timeout(400)  # two worlds, a Chromium and a report, beside the rest of the suite
def test_gold_with_the_view_gets_the_targets_and_the_report_shows_first_person_frames(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = launch("run", "launch/vab_minecraft_gold.yaml", "--set", "env.task=[sugar, glass_bottle]",
                  "--set", "env.frames=true", "--episodes", "2", "--record", "--out", str(out), cwd=ROOT, timeout=360)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert [r["metrics"]["task"] for r in rows] == ["sugar", "glass_bottle"]
    assert all(r["metrics"]["success"] == 1.0 and r["metrics"]["end_status"] == "completed" for r in rows), rows
    section = json.loads((out / "summary.json").read_text())["minecraft"]
    assert section["success_rate"] == 100.0 and section["paper"]["gpt-4o-2024-05-13"] == pytest.approx(55.2)
    proc = launch("report", str(out), "--episodes", "2", "--steps", "4", cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    page = (out / "report.html").read_text()
    assert "Episode strips" in page and page.count("data:image/png;base64,") >= 4
    assert "Your task is to get 1 glass_bottle" in page or "glass_bottle" in page


@needs_js
@pytest.mark.timeout(400)
def test_a_world_killed_mid_episode_is_started_afresh_and_its_episode_played_again(tmp_path: Path) -> None:
    """The sidecar dies while the executor chops (SIGKILL, as the OOM killer would): the env node fails
    on it at once, its restart policy starts it with a new world, and the episode is played again."""
    import signal
    import time

    import psutil

    from kernel.tools.client import KernelClient
    from tests.helpers import announced, launch_bg, wait_until

    out = tmp_path / "run"
    run = launch_bg("run", "launch/vab_minecraft_gold.yaml", "--set", "env.task=[wooden_pickaxe]", "--episodes", "1",
                    "--out", str(out), cwd=ROOT)
    try:
        def sidecars() -> list[psutil.Process]:
            try:
                return [p for p in psutil.Process(run.pid).children(recursive=True)
                        if any(a.endswith("sidecar.js") for a in p.cmdline())]
            except psutil.Error:
                return []

        def in_play() -> bool:  # the episode's first observation went out: the reset is done
            info = announced(out)
            if info is None:
                return False
            with KernelClient(info["endpoint"], curve=info.get("curve")) as client:
                try:
                    edges = client.call("stats")["edges"]
                except (TimeoutError, RuntimeError):
                    return False
            return any(e["edge"] == "env/obs -> agent/obs" and e["sent"] >= 1 for e in edges)

        assert wait_until(lambda: len(sidecars()) == 1 and in_play(), 240, 0.5), run.output()[-3000:]
        first = sidecars()[0]
        time.sleep(3)  # the first execute call walks to a tree
        first.send_signal(signal.SIGKILL)
        assert run.wait(300) == 0, run.output()[-3000:]
        assert not first.is_running() or first.status() == psutil.STATUS_ZOMBIE
        rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
        assert len(rows) == 1 and rows[0]["metrics"]["success"] == 1.0 and rows[0]["retries"] >= 1, rows
        assert "sidecar died" in (out / "logs" / "env.log").read_text()
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            run.wait(60)
