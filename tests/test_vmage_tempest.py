"""TempestRun: the spec's level table and action set, key events (continuation frames send nothing,
RISE ends a slide), the death and distance rules, determinism, 360 px frames, the scripted policy
beating random, and a real ``launch run`` of the random launch file through real processes."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
import yaml

from kernel.testing import Harness
from nodes.game.vmage import tempest_rules
from nodes.game.vmage.base import DT, decide, play, render
from nodes.game.vmage.catalog import GAMES, cells, template_for
from nodes.game.vmage.node import VmageEnv
from nodes.game.vmage.paper import PAPER_SCORES
from nodes.game.vmage.tempest import TempestRun
from nodes.game.vmage.tempest_rules import LANES, Obstacle
from tests.helpers import ROOT
from tests.nodes_extra import ScriptedChatModel, vmage_replies
from tests.test_vmage_env import run_launch


def bare(level: int = 1, seed: int = 0) -> TempestRun:
    """A game with an empty tunnel that builds nothing more, for placing obstacles by hand."""
    game = TempestRun(level, seed)
    game.obstacles = []
    game._built = math.inf
    return game


def place(game: TempestRun, kind: str, ahead: float, lane_offset: int = 0) -> Obstacle:
    o = Obstacle(game.z + ahead, (game.lane + lane_offset) % LANES, kind)
    game.obstacles.append(o)
    return o


def run_until_over(game: TempestRun, frames: int = 120) -> None:
    for _ in range(frames // game.level.sample_frames):
        if game.over:
            return
        decide(game, "NONE", game.level.sample_frames, None)


# --- the spec's tables (§2.5) ----------------------------------------------------------------------
def test_the_levels_are_the_specs():
    assert sorted(TempestRun.levels) == [1, 2, 3, 4] and GAMES["tempestrun"] is TempestRun
    rows = {n: (lv.settings["cell_length"], lv.settings["speed"], lv.settings["random_rate"])
            for n, lv in TempestRun.levels.items()}
    assert rows == {1: (25, 100, 0.15), 2: (20, 120, 0.18), 3: (15, 140, 0.25), 4: (15, 160, 0.33)}
    for lv in TempestRun.levels.values():
        assert lv.sample_frames == 3 and lv.max_rounds is None and lv.idle == "NONE"
    assert tempest_rules.FORESIGHT == 180 and tempest_rules.ROTATION_SPEED == 8  # the same on every level
    assert TempestRun.size == (1024, 768) and template_for("tempestrun", 2) == "vmage_tempestrun"
    assert [c[1] for c in cells("tempestrun", "all")] == [1, 2, 3, 4]
    assert {n: PAPER_SCORES["tempestrun"][n]["human"] for n in range(1, 5)} == {1: 2000, 2: 1500, 3: 1000, 4: 800}


def test_the_action_set_is_the_benchmarks():
    for lv in TempestRun.levels.values():
        assert lv.actions == ("JUMP", "LEFT", "RIGHT", "SLIDE", "RISE", "NONE")


# --- key events ----------------------------------------------------------------------------------------
def test_continuation_frames_send_nothing():
    seen: list[str] = []

    class Recording(TempestRun):
        def tick(self, action: str) -> None:
            seen.append(action)
            super().tick(action)

    game = Recording(1, 0)
    assert not TempestRun.repeats
    decide(game, "LEFT", 3, None)
    assert seen == ["LEFT", "NONE", "NONE"]
    start = TempestRun(1, 0).lane
    assert game.lane == (start - 1) % LANES  # one lane, not three
    assert game.angle == pytest.approx(game.lane * tempest_rules.LANE_ANGLE)  # the turn took the 3 frames
    decide(game, "JUMP", 3, None)
    assert seen[3:] == ["JUMP", "NONE", "NONE"] and game.airborne
    vy_after = game.vy
    # one take-off, no re-jumps
    assert vy_after == pytest.approx(tempest_rules.JUMP_SPEED - 3 * tempest_rules.GRAVITY * DT)


def test_a_slide_lasts_until_rise_and_blocks_jumping():
    game = bare()
    decide(game, "SLIDE", 3, None)
    assert game.sliding and game.ducking
    for _ in range(4):
        decide(game, "NONE", 3, None)
    assert game.ducking  # NONE does not end a slide
    decide(game, "JUMP", 3, None)
    assert game.ducking and not game.airborne  # no jumping out of a slide
    decide(game, "RISE", 3, None)
    assert not game.sliding
    decide(game, "JUMP", 3, None)
    assert game.airborne


# --- death and score -----------------------------------------------------------------------------------
def test_spikes_kill_a_runner_on_foot_and_a_jump_clears_them():
    game = bare()
    place(game, "spike", 20)
    run_until_over(game)
    assert game.over and game.reason == "the runner ran into red spikes"
    assert game.info() == f"Game Over, You got {game.score:g} score."

    game = bare()
    place(game, "spike", 20)
    decide(game, "JUMP", 3, None)
    run_until_over(game, 60)
    assert not game.over and game.z > 40

    game = bare()
    place(game, "spike", 20)
    decide(game, "SLIDE", 3, None)
    run_until_over(game)
    assert game.reason == "the runner ran into red spikes"  # sliding does not pass spikes


def test_walls_are_passed_only_by_changing_lanes():
    for action in ("NONE", "JUMP", "SLIDE"):
        game = bare()
        place(game, "wall", 12)
        decide(game, action, 3, None)
        run_until_over(game)
        assert game.reason == "the runner ran into a purple wall", action
    game = bare()
    place(game, "wall", 20)
    decide(game, "RIGHT", 3, None)
    run_until_over(game, 60)
    assert not game.over


def test_green_enemies_are_kicked_by_a_slide_and_kill_otherwise():
    for action in ("NONE", "JUMP"):
        game = bare()
        place(game, "enemy", 12)
        decide(game, action, 3, None)
        run_until_over(game)
        assert game.reason == "the runner ran into a green enemy", action
    game = bare()
    place(game, "enemy", 20)
    decide(game, "SLIDE", 3, None)
    run_until_over(game, 60)
    assert not game.over and game.kicked == 1 and game.ahead(game.lane) == []


def test_the_score_is_the_distance_in_tens_and_only_death_ends_the_episode():
    game = bare(2)
    for _ in range(10):
        decide(game, "NONE", 3, None)
    assert game.z == pytest.approx(30 * 120 * DT)
    assert game.score == int(game.z / 10) * 10 == 120.0
    game = TempestRun(1, 0)
    play(game, lambda g: "NONE")  # no frame limit of its own: it runs until it hits something
    assert game.reason.startswith("the runner ran into") and game.score > 0


def test_an_obstacle_never_stands_closer_than_the_run_in_and_rings_leave_two_lanes_unwalled():
    for level in (1, 4):
        for seed in range(20):
            game = TempestRun(level, seed)
            assert min(o.z for o in game.obstacles) >= tempest_rules.RUN_IN
            rings: dict[float, int] = {}
            for o in game.obstacles:
                rings[o.z] = rings.get(o.z, 0) + (o.kind == "wall")
            assert max(rings.values()) <= LANES - 2


# --- determinism and frames ----------------------------------------------------------------------------
@pytest.mark.parametrize("level", [1, 4])
def test_the_same_seed_plays_the_same_frames_and_another_seed_does_not(level):
    def film(seed: int) -> tuple[list[bytes], float, str | None]:
        game, rng, shots = TempestRun(level, seed), random.Random(7), []
        for _ in range(10):
            decide(game, rng.choice(("NONE", "LEFT", "RIGHT")), 3, None)
            shots.append(render(game, 120).tobytes())
        play(game, lambda g: rng.choice(g.level.actions))
        return shots, game.score, game.reason

    assert film(3) == film(3)
    assert film(3)[0] != film(4)[0]


def test_frames_are_360_high_with_the_score_at_the_top_left():
    game = TempestRun(1, 0)
    frame = render(game)
    assert frame.shape == (360, 480, 3) and frame.dtype == np.uint8
    before = render(game, 768)[:80, :200].copy()
    game.score = 1230.0
    assert not np.array_equal(before, render(game, 768)[:80, :200])
    decide(game, "SLIDE", 3, None)  # the runner's pose shows: flat on a slide
    sliding = render(game)
    decide(game, "RISE", 3, None)
    assert not np.array_equal(sliding[250:], render(game)[250:])


# --- baselines -----------------------------------------------------------------------------------------
def test_the_scripted_policy_beats_random_on_every_level():
    for level in TempestRun.levels:
        seeds = range(4)
        scripted = statistics.mean(play(TempestRun(level, s), lambda g: g.policy(), limit=360).score for s in seeds)
        rng = random.Random(level)
        rand = statistics.mean(play(TempestRun(level, s), lambda g, rng=rng: rng.choice(g.level.actions)).score
                               for s in seeds)
        assert scripted > 2 * rand, (level, scripted, rand)


def test_the_policys_look_ahead_leaves_the_game_alone():
    searched, replayed = TempestRun(3, 5), TempestRun(3, 5)
    for _ in range(60):
        if searched.over:
            break
        action = searched.policy()
        decide(searched, action, 3, None)
        decide(replayed, action, 3, None)  # the same actions, never searched
    assert searched.frame > 100
    assert searched.rng.getstate() == replayed.rng.getstate() and searched.obstacles == replayed.obstacles
    assert searched.state() == replayed.state()


# --- on the bus ----------------------------------------------------------------------------------------
async def test_realtime_applies_a_key_event_on_one_tick_only():
    env = VmageEnv()
    async with Harness(quiet=True, episodes=1) as h:
        h.local("env", env, params={"game": "tempestrun", "level": 1, "max_rounds": 15, "judge": False},
                inputs={"action": "probe/action"}, clock={"mode": "realtime", "fps": 60})
        probe = h.probe(inputs={"step": "env/step"}, outputs=["action"])
        await h.start()
        start = TempestRun(1, 0).lane
        step = (await probe.recv("step")).body
        await probe.publish("action", "RIGHT", step=step["t"])
        while not step["done"]:
            step = (await probe.recv("step")).body
        await h.wait_finished(20)
    assert step["info"]["frames"] == 15 and env.game is not None
    assert env.game.lane == (start + 1) % LANES  # held as the newest action, yet turned once


def test_launch_random_tempestrun_plays_each_level_until_death(tmp_path):
    summary, episodes = run_launch(tmp_path, "vmage_tempest_random", "--episodes", "4")
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 4
    metrics = [e["metrics"] for e in episodes]
    assert sorted(m["level"] for m in metrics) == [1, 2, 3, 4]
    assert all(m["reason"].startswith("the runner ran into") and m["valid_rate"] == 1.0 for m in metrics)
    assert all(m["score"] == int(m["score"] / 10) * 10 and m["frames"] > 0 for m in metrics)
    levels = summary["vmage"]["levels"]
    assert set(levels) == {f"tempestrun/{n}" for n in range(1, 5)}
    assert levels["tempestrun/1"]["paper"]["random"] == 385.72


async def test_llm_agent_takes_the_tempestrun_template_and_its_six_actions(tmp_path):
    template = yaml.safe_load((ROOT / "nodes/agent/templates/vmage_tempestrun.yaml").read_text())
    for name in TempestRun.levels[1].actions:
        assert f". {name}:" in template["system"] and name in template["io"]["online"]
    model = ScriptedChatModel(vmage_replies("Observation: a tunnel", "duck", "SLIDE", "SLIDE (to kick the enemy)"))
    h = Harness(quiet=True, episodes=1, run_dir=tmp_path)
    h.add("env", "nodes.game.vmage.node:VmageEnv", params={"game": "tempestrun", "level": 1, "max_rounds": 12},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "images": False},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", "nodes.judge.vmage:VmageJudge", inputs={"step": {"from": "env/step", "policy": "block"}})
    h.local("model", model)
    async with h:
        await h.start()
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        (record,) = h.kernel.book.records.values()
    m = record["metrics"]
    assert (m["frames"], m["invalid"], m["reason"]) == (12, 3, "max_rounds")  # 4 valid decisions, 3 invalid
    assert "Tempest Run" in model.systems[0] and "RISE" in model.systems[0]
