"""bench/minecraft.py: the quick run really starts the sidecar and the view, plays the planner's actions and
prints one object with a time for every action kind it played; actions are timed under their subgoal's verb."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bench.minecraft import op_kind, spread
from nodes.game.minecraft.planner import Action
from nodes.game.minecraft.sidecar import Sidecar
from nodes.game.minecraft.view import CHROMIUM
from tests.helpers import ROOT, launch_env
from tests.tiers import uses


def test_execute_is_timed_by_its_subgoals_verb_and_the_rest_by_kind() -> None:
    assert op_kind(Action.execute("chop oak_log", "oak_log", 3)) == "execute_chop"
    assert op_kind(Action.execute("kill cow", "leather", 1)) == "execute_kill"
    assert op_kind(Action.craft("stick", 2)) == "craft"
    assert op_kind(Action.equip("wooden_pickaxe")) == "equip"


def test_spread_gives_a_p90_only_from_two_times_on() -> None:
    assert spread([]) == {"n": 0}
    assert spread([5.0]) == {"ms": 5.0, "n": 1}
    row = spread([float(i) for i in range(1, 11)])
    assert row["ms"] == 5.5 and row["n"] == 10 and 9.0 < row["p90_ms"] <= 10.0


@uses("browser")
def _quick_run(frames: bool) -> subprocess.CompletedProcess:
    argv = [sys.executable, "bench/minecraft.py", "--json", "--quick", *([] if frames else ["--no-frames"])]
    return subprocess.run(argv, cwd=ROOT, env=launch_env(), capture_output=True, text=True, timeout=170)


@pytest.mark.timeout(180)
def test_quick_run_prints_one_object_with_every_kind_it_played() -> None:
    if (missing := Sidecar.missing()) is not None:
        pytest.skip(missing)
    frames = os.access(CHROMIUM, os.X_OK)
    proc = _quick_run(frames)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["quick"] is True and out["sidecar_start_s"] > 0 and out["reset_ms"] > 0 and out["resets"] == 2
    assert out["plays"] == [{"task": "charcoal", "rounds": out["plays"][0]["rounds"], "done": True, "refused": None}]
    assert {"craft", "smelt", "execute_chop", "teleport_to_spawn", "look_up"} <= set(out["ops"])
    assert out["ops"]["craft"]["n"] >= 5 and out["ops"]["craft"]["ms"] > 0
    assert out["observe_ms"] > 0 and out["execute_ticks_per_s"] > 0
    if frames:
        assert out["first_frame_ms"] > 0 and out["frame_ms"] > 0 and out["frame_p90_ms"] >= out["frame_ms"]
        assert out["frames"] == out["plays"][0]["rounds"] and 0 < out["frame_share"] < 1
    else:
        assert "frame_ms" not in out
