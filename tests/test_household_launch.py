"""The household pack end to end through real processes: the bundled launch files validate, the gold
run plays VAB instances through the env's oracle with pictures and a recording, the report shows frame
strips and VAB's column, and any BDDL activity runs by name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import LAUNCH, ROOT, launch, launch_env

FILES = sorted(p.name for p in (ROOT / "launch").glob("vab_household_*.yaml"))


def test_the_five_launch_files_exist_and_validate() -> None:
    assert FILES == ["vab_household_gold.yaml", "vab_household_gpt4o.yaml", "vab_household_local.yaml",
                     "vab_household_random.yaml", "vab_household_teacher.yaml"]
    env = {**launch_env(), "OPENAI_API_KEY": "test-key-for-validate"}
    for name in FILES:
        proc = subprocess.run([*LAUNCH, "validate", f"launch/{name}"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gold_with_pictures_succeeds_and_the_report_shows_labelled_frame_strips(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = launch("run", "launch/vab_household_gold.yaml", "--set", "env.frames=true", "--episodes", "3", "--record",
                  "--out", str(out), cwd=ROOT, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == 3 and all(r["status"] == "completed" for r in rows)
    assert all(r["metrics"]["success"] == 1.0 and r["metrics"]["end_status"] == "completed" for r in rows)
    section = json.loads((out / "summary.json").read_text())["household"]
    assert section["success_rate"] == 100.0 and section["end_status"] == {"completed": 3}
    assert section["paper"]["gpt-4o-2024-05-13"] == pytest.approx(41.4)
    proc = launch("report", str(out), "--episodes", "3", "--steps", "4", cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    page = (out / "report.html").read_text()
    assert "Episode strips" in page and page.count("data:image/png;base64,") >= 12
    assert "ACTION: " in page and "VisualAgentBench" in page


def test_any_bddl_activity_runs_by_name_with_the_random_agent(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = launch("run", "launch/vab_household_random.yaml", "--set", "env.activity=bag_groceries", "--episodes",
                  "1", "--out", str(out), cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    row = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    assert row["metrics"]["activity"] == "bag_groceries" and row["metrics"]["scene"] == "Rs_int"
    assert row["metrics"]["success"] == 0.0 and row["metrics"]["end_status"] in ("task limit reached",
                                                                                  "agent invalid action")
