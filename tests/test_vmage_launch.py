"""The all-games V-MAGE launch files and bench/vmage.py: every launch file validates, the random
baseline plays and judges all 33 configurations through real processes, and the bench's quick
mode prints one JSON object with the keys docs/vmage.md quotes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodes.game.vmage.catalog import cells, episode_cell
from nodes.game.vmage.node import VmageEnv
from tests.helpers import LAUNCH, ROOT, launch, launch_env

VMAGE_FILES = sorted(p.name for p in (ROOT / "launch").glob("vmage_*.yaml"))
ALL_CELLS = cells("all", "all")


def test_all_games_is_the_33_configurations_in_catalog_order() -> None:
    assert len(ALL_CELLS) == 33 and len(set(ALL_CELLS)) == 33
    assert ALL_CELLS[0] == ("pong", 1) and ALL_CELLS[-1] == ("supermario", 10)
    assert episode_cell(ALL_CELLS, 34) == ("pong", 2, 1)  # the round follows from the index alone
    assert cells(["race", "pong"], "all")[-3:] == [("pong", 1), ("pong", 2), ("pong", 3)]
    assert cells(["pong", "flappybird"], 2) == [("pong", 2), ("flappybird", 2)]
    with pytest.raises(ValueError, match="level: 4 is not a level of pong"):
        cells(["flappybird", "pong"], 4)
    with pytest.raises(ValueError, match="names a game twice"):
        cells(["pong", "pong"], "all")
    assert VmageEnv.parse_params({"game": "all"}).game == "all"
    assert VmageEnv.parse_params({"game": ["race", "pong"]}).game == ["race", "pong"]


@pytest.mark.parametrize("name", VMAGE_FILES)
def test_every_vmage_launch_file_validates(name: str) -> None:
    env = {**launch_env(), "OPENAI_API_KEY": "test-key-for-validate"}  # the gpt4o files name the variable
    proc = subprocess.run([*LAUNCH, "validate", f"launch/{name}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_all_games_files_exist() -> None:
    assert {"vmage_random.yaml", "vmage_gpt4o.yaml", "vmage_local.yaml", "vmage_scripted.yaml"} <= set(VMAGE_FILES)


def test_vmage_random_plays_and_judges_every_configuration(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = launch("run", "launch/vmage_random.yaml", "--out", str(out), "--set", "run.episodes=33",
                  cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == 33 and all(r["status"] == "completed" for r in rows)
    played = {(r["metrics"]["game"], r["metrics"]["level"]) for r in rows}
    assert played == set(ALL_CELLS)
    for r in rows:
        m = r["metrics"]
        assert m["round"] == 0 and m["valid_rate"] == 1.0 and m["frames"] > 0 and m["reason"], r
        assert (m["game"], m["level"]) == ALL_CELLS[int(r["episode_id"][2:])]  # the index fixes the cell
    assert {r["node"] for r in rows} <= {"env-0", "env-1"}  # the replicas share the catalog
    levels = json.loads((out / "summary.json").read_text())["vmage"]["levels"]
    assert set(levels) == {f"{g}/{lv}" for g, lv in ALL_CELLS}


def test_bench_quick_prints_one_json_object() -> None:
    env = {**launch_env(), "SDL_VIDEODRIVER": "dummy"}
    proc = subprocess.run([sys.executable, "bench/vmage.py", "--json", "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    for key in ("logic_fps", "bus_overhead_ratio", "bus_decision_ms", "direct_decision_ms", "no_frames",
                "elo_full_pool_s", "load_average_1m", "same_games", "bus_cpu_ms_per_decision", "cpu_overhead_ratio"):
        assert key in out, key
    assert set(out["logic_fps"]) == {"pong", "flappybird", "race", "tempestrun", "supermario"}
    assert all(v["no_draw"] > 0 and v["draw_360px"] > 0 for v in out["logic_fps"].values())
    assert out["same_games"] and out["bus_overhead_ratio"] > 0 and out["elo_full_pool_s"] > 0
    assert out["elo_pool"]["levels"] == 33 and out["elo_pool"]["matches"] == 3300
