"""bench/run_all.py and bench/compare.py: run_all really runs two quick benches (bus, grid) and prints
one object of the documented shape with their ratio keys; compare judges changes by key name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, launch_env

sys.path.insert(0, str(ROOT))

from bench.compare import compare, direction  # noqa: E402


@pytest.mark.timeout(240)
def test_run_all_only_bus_and_grid_prints_one_object_with_their_ratios() -> None:
    proc = subprocess.run([sys.executable, "bench/run_all.py", "--json", "--only", "bus,grid"], cwd=ROOT,
                          env=launch_env(), capture_output=True, text=True, timeout=230)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert {"commit", "load_average", "benches", "seconds"} <= set(out)
    assert len(out["commit"]) == 40 and out["seconds"] > 0 and out["crashed"] == []
    assert len(out["load_average"]["start"]) == 3
    assert set(out["benches"]) == {"bus", "grid"}  # in --only's sense, nothing else ran
    bus, grid = out["benches"]["bus"], out["benches"]["grid"]
    assert "error" not in bus and "error" not in grid, out["benches"]
    assert bus["small_rtt_ratio"] > 0 and bus["frame_hop_ratio"] > 0
    assert grid["step_vs_raw_rtt_ratio"] > 0
    # the ratio is the two p50s reported beside it (both rounded to 0.1 us)
    assert grid["step_vs_raw_rtt_ratio"] == pytest.approx(grid["bus_step_p50_us"] / grid["raw_zmq_rtt_p50_us"],
                                                          rel=0.01)
    assert grid["step_vs_loop_rtt_ratio"] == pytest.approx(grid["bus_step_p50_us"] / grid["loop_zmq_rtt_p50_us"],
                                                           rel=0.01)
    assert grid["step_vs_loop_reader_rtt_ratio"] == pytest.approx(
        grid["bus_step_p50_us"] / grid["loop_reader_rtt_p50_us"], rel=0.01)


def test_run_all_refuses_an_unknown_bench_name() -> None:
    proc = subprocess.run([sys.executable, "bench/run_all.py", "--only", "bus,nosuch"], cwd=ROOT,
                          env=launch_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "nosuch" in proc.stderr


BEFORE = {"commit": "a" * 40, "seconds": 100.0, "benches": {
    "grid": {"step_vs_raw_rtt_ratio": 2.0, "bus_step_p50_us": 400.0, "bus_steps_per_s": 1000.0,
             "steps": {"bus": 2000}, "target_ratio": 1.3},
    "scale": {"curve": [{"replicas": 1, "steps_per_s": 500.0}, {"replicas": 2, "speedup": 1.8}]},
    "vmage": {"logic_fps": {"pong": {"no_draw": 9000.0}}, "bus_cpu_ms_per_decision": 1.0, "same_games": True},
    "model": {"error": "not run", "rc": None},
}}
AFTER = {"commit": "b" * 40, "seconds": 50.0, "benches": {
    "grid": {"step_vs_raw_rtt_ratio": 2.5, "bus_step_p50_us": 300.0, "bus_steps_per_s": 1050.0,
             "steps": {"bus": 1000}, "target_ratio": 2.0},
    "scale": {"curve": [{"replicas": 1, "steps_per_s": 400.0}, {"replicas": 2, "speedup": 2.1}]},
    "vmage": {"logic_fps": {"pong": {"no_draw": 7000.0}}, "bus_cpu_ms_per_decision": 1.2, "same_games": False},
    "model": {"concurrency_speedup": 3.0},
}}


def test_direction_follows_the_key_names() -> None:
    assert direction("benches.grid.step_vs_raw_rtt_ratio") == "lower"
    assert direction("benches.grid.bus_step_p50_us") == "lower"
    assert direction("benches.webui.aes_page_s") == "lower"
    assert direction("benches.football.bus_step_ms") == "lower"
    assert direction("benches.vmage.bus_cpu_ms_per_decision") == "lower"
    assert direction("benches.grid.bus_steps_per_s") == "higher"  # a rate, though it ends in _s
    assert direction("benches.scale.curve.1.speedup") == "higher"
    assert direction("benches.model.concurrency_speedup") == "higher"
    assert direction("benches.vmage.logic_fps.pong.no_draw") == "higher"  # from the enclosing key
    assert direction("benches.soak.memory.rss.agent.growth_kb_per_1k_episodes") == "lower"
    assert direction("benches.grid.target_ratio") is None  # a goal, not a measurement
    assert direction("benches.grid.steps.bus") is None and direction("seconds") is None


def test_compare_flags_worse_and_better_beyond_the_threshold(tmp_path: Path) -> None:
    rows = {r["key"]: r for r in compare(BEFORE, AFTER)}
    flags = {key: r["flag"] for key, r in rows.items()}
    assert flags["benches.grid.step_vs_raw_rtt_ratio"] == "worse"  # 2.0 -> 2.5, lower is better
    assert flags["benches.grid.bus_step_p50_us"] == "better"
    assert flags["benches.grid.bus_steps_per_s"] == ""  # +5 %: inside 10 %
    assert flags["benches.scale.curve.0.steps_per_s"] == "worse"
    assert flags["benches.scale.curve.1.speedup"] == "better"
    assert flags["benches.vmage.logic_fps.pong.no_draw"] == "worse"
    assert flags["benches.vmage.bus_cpu_ms_per_decision"] == "worse"  # +20 %
    assert flags["benches.grid.target_ratio"] == "" and flags["benches.grid.steps.bus"] == ""
    assert rows["benches.grid.step_vs_raw_rtt_ratio"]["ratio"] == 1.25
    # only numbers present in both: no booleans, no strings, nothing from one side only
    assert "benches.vmage.same_games" not in rows and "commit" not in rows
    assert not any(key.startswith("benches.model") for key in rows)
    # a looser threshold lets a 20-25 % change pass
    loose = {r["key"]: r["flag"] for r in compare(BEFORE, AFTER, threshold=0.3)}
    assert loose["benches.grid.step_vs_raw_rtt_ratio"] == "" and loose["benches.vmage.bus_cpu_ms_per_decision"] == ""

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(BEFORE))
    b.write_text(json.dumps(AFTER))
    proc = subprocess.run([sys.executable, "bench/compare.py", str(a), str(b), "--json"], cwd=ROOT,
                          env=launch_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out["worse"]) == {"benches.grid.step_vs_raw_rtt_ratio", "benches.scale.curve.0.steps_per_s",
                                 "benches.vmage.logic_fps.pong.no_draw", "benches.vmage.bus_cpu_ms_per_decision"}
    assert set(out["better"]) == {"benches.grid.bus_step_p50_us", "benches.scale.curve.1.speedup"}
    strict = subprocess.run([sys.executable, "bench/compare.py", str(a), str(b), "--fail-on-worse"], cwd=ROOT,
                            env=launch_env(), capture_output=True, text=True, timeout=60)
    assert strict.returncode == 1 and "WORSE" in strict.stdout
    same = subprocess.run([sys.executable, "bench/compare.py", str(a), str(a), "--fail-on-worse"], cwd=ROOT,
                          env=launch_env(), capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "0 worse" in same.stdout
