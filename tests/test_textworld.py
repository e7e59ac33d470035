"""BALROG's TextWorld pack: the progression metric, objective filtering, games generated locally
and deterministically, a recorded episode (the game's own walkthrough) whose value is known, and
random episodes through the bus."""

from __future__ import annotations

import json

import pytest

from kernel.sdk.judge import Unscored
from nodes.game.textworld.games import make_game, short_objective
from nodes.game.textworld.node import filter_objective
from nodes.game.textworld.tasks import TASKS, get_task, progression
from nodes.judge.textworld import score_records
from tests.helpers import launch

textworld = pytest.importorskip("textworld", reason="textworld is not installed (the worlds extra)")


@pytest.mark.parametrize("score,max_score,won,value", [(3, 9, False, 1 / 3), (9, 9, True, 1.0), (0, 5, True, 1.0),
                                                       (0, 1, False, 0.0), (0, 0, False, 0.0)])
def test_progression_is_the_score_fraction_or_one_for_a_win(score, max_score, won, value):
    assert progression(score, max_score, won) == pytest.approx(value)


def test_judge_scores_the_last_step_and_refuses_other_envs():
    record = {"episode": "e", "t": 5, "action": "go east", "valid": True, "reward": 1.0, "done": True,
              "truncated": False, "info": {"score": 2.0, "max_score": 8.0, "won": False, "task": "the_cooking_game"}}
    metrics = score_records([record])
    assert metrics["progression"] == pytest.approx(0.25) and metrics["progression_percent"] == pytest.approx(25.0)
    with pytest.raises(Unscored, match="textworld.env"):
        score_records([{**record, "info": {"score": 1}}])


def test_objective_and_walkthrough_helpers():
    assert filter_objective("Welcome!\nFind the coin.\n\n-= Kitchen =-\nA room.", "Find the coin.") == \
        "-= Kitchen =-\nA room."
    assert filter_objective("-= Kitchen =-", "") == "-= Kitchen =-"
    assert short_objective(["go east", "take coin"]) == "Find the coin and take it."
    assert short_objective(["go west", "take key from safe"]) == "Find the key and take it."
    with pytest.raises(ValueError, match="allowed: treasure_hunter"):
        get_task("zork")
    assert set(TASKS) == {"treasure_hunter", "the_cooking_game", "coin_collector"}


@pytest.mark.process  # tw-make's inform7 compiler runs as a child process
def test_a_generated_game_is_the_same_for_a_seed_and_its_walkthrough_wins(tmp_path):
    first = make_game("coin_collector", 3, tmp_path / "a")
    again = make_game("coin_collector", 3, tmp_path / "b")
    meta = json.loads(first.with_suffix(".json").read_text())
    twin = json.loads(again.with_suffix(".json").read_text())
    assert meta["metadata"]["walkthrough"] == twin["metadata"]["walkthrough"]
    assert meta["objective"] == "Find the coin and take it."  # the walkthrough is not given away
    assert meta["metadata"]["quest_length"] == 20 and meta["metadata"]["world_size"] == 40  # BALROG's setting
    infos = textworld.EnvInfos(objective=True, score=True, max_score=True, won=True)
    env = textworld.start(str(first), request_infos=infos)
    try:
        state = env.reset()
        assert state.objective == "Find the coin and take it."
        records = []
        for t, command in enumerate(meta["metadata"]["walkthrough"]):
            state, score, done = env.step(command)
            records.append({"episode": "e", "t": t, "action": command, "valid": True, "reward": 0.0, "done": done,
                            "truncated": False, "info": {"score": float(state.score),
                                                         "max_score": float(state.max_score),
                                                         "won": bool(state.won), "task": "coin_collector"}})
        assert done and state.won
        assert score_records(records)["progression"] == 1.0
        # the same episode cut before the coin: nothing scored yet
        assert score_records(records[:-1])["progression"] == 0.0
    finally:
        env.close()


def test_textworld_random_runs_episodes_through_the_bus(tmp_path):
    out = tmp_path / "run"
    result = launch("run", "textworld_random.yaml", "--set", f"env.cache={tmp_path / 'games'}",
                    "--out", str(out), timeout=150)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["completed"] == 2
    section = summary["textworld"]
    assert set(section["tasks"]) == {"coin_collector", "the_cooking_game"}
    assert 0.0 <= section["progression_mean"] <= 1.0 and "balrog_published" in section
    assert (tmp_path / "games" / "coin_collector" / "coin_collector-s0.z8").exists()
