"""BALROG's MiniHack tasks on nethack.env: the action list per task, the success metric on
hand-made episodes whose value is known, and random episodes through the bus."""

from __future__ import annotations

import json

import pytest

from nodes.game.nethack import minihack
from nodes.game.nethack.actions import NAMED
from nodes.judge.nethack import score_records
from tests.helpers import launch

pytest.importorskip("minihack", reason="minihack is not installed (setup.sh installs minihack==1.0.2 --no-deps)")


@pytest.mark.process  # MiniHack patches its level files with a shell script when an env is made
@pytest.mark.parametrize("task,size", [("MiniHack-MazeWalk-9x9-v0", 8), ("MiniHack-Corridor-R3-v0", 11)])
def test_each_task_offers_balrogs_names_its_action_set_has(task, size):
    import gymnasium
    import minihack as _registers  # noqa: F401

    env = gymnasium.make(task, disable_env_checker=True)
    try:
        names = [NAMED[int(a)] for a in env.unwrapped.actions if NAMED.get(int(a)) in minihack.ACTION_NAMES]
    finally:
        env.close()
    assert len(names) == size and names[:4] == ["north", "east", "south", "west"]
    quest = gymnasium.make("MiniHack-Quest-Easy-v0", disable_env_checker=True)
    try:
        q = {NAMED[int(a)] for a in quest.unwrapped.actions if NAMED.get(int(a)) in minihack.ACTION_NAMES}
    finally:
        quest.close()
    assert q == minihack.ACTION_NAMES - {"up"}  # the Quest action set has every name but "up"


def _records(rewards: list[float]) -> list[dict]:
    return [{"episode": "e", "t": t, "action": "north", "valid": True, "reward": r, "done": t == len(rewards) - 1,
             "truncated": False, "info": {"world": "minihack", "task": "MiniHack-MazeWalk-9x9-v0"}}
            for t, r in enumerate(rewards)]


def test_success_is_a_last_step_reward_of_at_least_one():
    assert score_records(_records([-0.01, -0.01, 1.0]))["success"] == 1.0
    assert score_records(_records([-0.01] * 100))["progression"] == 0.0
    assert score_records(_records([1.0, -0.01]))["success"] == 0.0  # BALROG reads the last step only
    assert minihack.goal("MiniHack-Corridor-R3-v0").startswith("Explore the level")
    assert minihack.is_minihack("MiniHack-Quest-Easy-v0") and not minihack.is_minihack("NetHackChallenge-v0")


def test_minihack_random_runs_episodes_through_the_bus(tmp_path):
    out = tmp_path / "run"
    result = launch("run", "minihack_random.yaml", "--episodes", "2", "--out", str(out), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["completed"] == 2
    part = summary["nethack"]["minihack"]
    assert part["episodes"] == 2 and set(part["tasks"]) == {"MiniHack-MazeWalk-9x9-v0"}
    assert 0.0 <= part["progression_percent"] <= 100.0
    assert summary["metrics"]["steps"] <= 100  # BALROG's MiniHack cap
    # MiniHack takes NetHack's seeds (nethack.env sets them: NLE's reset(seed=) does not), so a second run
    # with the same run seed plays the same games with the same random moves
    again = tmp_path / "again"
    assert launch("run", "minihack_random.yaml", "--episodes", "2", "--out", str(again), timeout=120).returncode == 0
    played = [[json.loads(line)["metrics"] for line in (run / "episodes.jsonl").read_text().splitlines()]
              for run in (out, again)]
    assert played[0] == played[1]
