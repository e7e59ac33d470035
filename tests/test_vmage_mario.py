"""SuperMario: the spec's level table (Table 21) and action set, jumping only from the ground and
steering only in the air, coin, box and Goomba points, the ways an episode ends, determinism,
360 px frames with the dashboard, the scripted policy beating random, and a real ``launch run``
of the random launch file through real processes."""

from __future__ import annotations

import random
import statistics

import numpy as np
import pytest
import yaml

from kernel.testing import Harness
from nodes.game.vmage import mario_rules
from nodes.game.vmage.base import decide, play, render
from nodes.game.vmage.catalog import GAMES, cells, template_for
from nodes.game.vmage.mario import SuperMario
from nodes.game.vmage.mario_rules import GROUND, TILE, Body, Goomba, Stage
from nodes.game.vmage.paper import PAPER_SCORES
from tests.helpers import ROOT
from tests.nodes_extra import ScriptedChatModel, vmage_replies
from tests.test_vmage_env import run_launch

TABLE_21 = {  # level: (enemies, coins, coin boxes, max rounds, gameplay)
    1: (0, 6, 2, 400, "Common"), 2: (2, 6, 2, 1000, "Common"),
    3: (0, 17, 4, 1000, "Long History (Two ways)"), 4: (2, 17, 4, 1000, "Long History (Two ways)"),
    5: (3, 8, 0, 300, "Left or Right"), 6: (0, 13, 0, 300, "Left or Right"), 7: (0, 8, 0, 300, "Left or Right"),
    8: (0, 12, 0, 1000, "Jump Only"), 9: (5, 8, 0, 1000, "Jump and Enemy"), 10: (12, 0, 9, 5000, "Classic W1-1"),
}


def flat(width: int = 30, start: int = 3) -> SuperMario:
    """A game on a flat stage with nothing on it, to place things by hand."""
    game = SuperMario(1, 0)
    stage = Stage(width, start=start)
    stage.ground(0, width - 1)
    game.stage, game.tiles, game.coins, game.goombas = stage, dict(stage.tiles), set(), []
    game.mario.x, game.mario.y = start * TILE + 4, GROUND * TILE - game.mario.h
    return game


def hold(game: SuperMario, action: str, decisions: int = 1) -> None:
    for _ in range(decisions):
        decide(game, action, game.level.sample_frames, None)


# --- the spec's tables (§2.2) ----------------------------------------------------------------------
def test_the_levels_are_the_specs_and_each_stage_holds_the_tables_counts():
    assert sorted(SuperMario.levels) == list(range(1, 11)) and GAMES["supermario"] is SuperMario
    for n, (enemies, coins, boxes, max_rounds, gameplay) in TABLE_21.items():
        lv = SuperMario.levels[n]
        assert (lv.settings["enemies"], lv.settings["coins"], lv.settings["coin_boxes"], lv.max_rounds,
                lv.settings["gameplay"]) == (enemies, coins, boxes, max_rounds, gameplay)
        assert lv.sample_frames == 5 and lv.idle == "NONE"  # V-MAGE's hard-set Mario value
        for seed in range(3):
            game = SuperMario(n, seed)
            assert len(game.goombas) == enemies and len(game.coins) == coins, (n, seed)
            assert sum(k == "box" for k in game.tiles.values()) == boxes, (n, seed)
            assert not any(game.solid(c, r) for c, r in game.coins)  # every coin can be touched
    assert SuperMario.size == (640, 480) and template_for("supermario", 4) == "vmage_supermario"
    assert [c[1] for c in cells("supermario", "all")] == list(range(1, 11))
    human = {n: PAPER_SCORES["supermario"][n]["human"] for n in range(1, 11)}
    assert human == {1: 800, 2: 800, 3: 1000, 4: 1400, 5: 800, 6: 800, 7: 800, 8: 900, 9: 1300, 10: 800}


def test_the_action_set_is_the_benchmarks():
    for lv in SuperMario.levels.values():
        assert lv.actions == ("UP", "UP+LEFT", "UP+RIGHT", "LEFT", "RIGHT", "NONE")
    template = yaml.safe_load((ROOT / "nodes/agent/templates/vmage_supermario.yaml").read_text())
    for name in SuperMario.levels[1].actions:
        assert f". {name}:" in template["system"] and name in template["io"]["online"]


# --- physics ---------------------------------------------------------------------------------------------
def test_a_jump_starts_only_from_the_ground_and_up_in_the_air_only_steers():
    game = flat()
    hold(game, "UP")
    assert game.jumps == 1 and not game.mario.on_ground and game.mario.vx == 0
    vy = game.mario.vy
    hold(game, "UP")  # still rising: no second take-off
    assert game.jumps == 1 and game.mario.vy == pytest.approx(vy + 5 * mario_rules.GRAVITY)
    air, ref = flat(), flat()
    hold(air, "UP")
    hold(air, "UP+RIGHT")
    hold(ref, "UP")
    hold(ref, "RIGHT")
    assert air.jumps == 1 and air.state() == ref.state() and air.mario.vx > 0  # mid-air UP+RIGHT is RIGHT
    hold(game, "NONE", 6)
    assert game.mario.on_ground and game.mario.y == GROUND * TILE - game.mario.h
    peak = flat()
    decide(peak, "UP", 15, None)  # rises over a pipe of four tiles, not five
    assert 4 * TILE < GROUND * TILE - (peak.mario.y + peak.mario.h) < 5 * TILE


def test_momentum_carries_in_the_air_and_runs_out_on_the_ground():
    game = flat()
    hold(game, "RIGHT", 3)
    assert game.mario.vx == mario_rules.RUN_SPEED
    hold(game, "UP")
    assert game.mario.vx == mario_rules.RUN_SPEED  # NONE-less UP keeps the speed it had
    air = flat()
    hold(air, "RIGHT", 3)
    hold(air, "UP")
    hold(air, "NONE")
    assert air.mario.vx == mario_rules.RUN_SPEED and not air.mario.on_ground
    hold(air, "LEFT")
    assert air.mario.vx < mario_rules.RUN_SPEED  # steering in the air
    ground = flat()
    hold(ground, "RIGHT", 3)
    hold(ground, "NONE", 3)
    assert ground.mario.vx == 0


def test_walls_and_pipes_stop_mario_and_a_jump_clears_a_pipe():
    game = flat()
    game.stage.pipe(8, 2)
    game.tiles = dict(game.stage.tiles)
    hold(game, "RIGHT", 10)
    assert game.mario.x + game.mario.w == 8 * TILE and not game.over
    hold(game, "LEFT")
    hold(game, "UP+RIGHT", 3)
    hold(game, "RIGHT", 6)
    assert game.mario.x > 10 * TILE and not game.over


# --- points -------------------------------------------------------------------------------------------
def test_a_coin_is_100_and_a_box_bumped_from_below_is_100_once():
    game = flat()
    game.coins = {(6, GROUND - 1), (7, GROUND - 1)}
    hold(game, "RIGHT", 6)
    assert game.score == 200 and game.coins_taken == 2 and not game.coins
    box = flat()
    box.tiles[(3, 9)] = "box"
    hold(box, "UP")
    hold(box, "NONE", 2)
    assert box.score == 100 and box.tiles[(3, 9)] == "used" and box.boxes_hit == 1
    hold(box, "NONE", 5)
    hold(box, "UP", 2)
    assert box.score == 100  # a used box gives nothing more


def test_stomping_a_goomba_is_100_and_walking_into_one_ends_the_episode():
    game = flat()
    game.goombas = [Goomba(Body(150, GROUND * TILE - 28, 28, 28, vx=-mario_rules.GOOMBA_SPEED))]
    hold(game, "NONE", 2)
    hold(game, "UP")  # straight up: the Goomba walks in under Mario as he comes down
    for _ in range(10):
        if game.stomped:
            break
        hold(game, "NONE")
    assert game.stomped == 1 and game.score == 100 and not game.over and not game.goombas[0].alive
    hold(game, "RIGHT", 4)
    assert not game.over  # a squashed Goomba is harmless

    game = flat()
    game.goombas = [Goomba(Body(9 * TILE, GROUND * TILE - 28, 28, 28, vx=-mario_rules.GOOMBA_SPEED))]
    hold(game, "RIGHT", 6)
    assert game.over and game.reason == "Mario ran into a Goomba" and game.score == 0
    assert game.info() == "Game Over, You got 0 score."


def test_falling_into_a_pit_ends_the_episode_and_keeps_the_points():
    game = flat()
    for c in (7, 8, 9):
        del game.tiles[(c, GROUND)], game.tiles[(c, GROUND + 1)]
    game.coins = {(5, GROUND - 1)}
    hold(game, "RIGHT", 12)
    assert game.over and game.reason == "Mario fell into a pit" and game.score == 100


def test_the_flagpole_and_the_frame_limit_end_the_episode():
    game = play(SuperMario(1, 0), lambda g: "RIGHT")
    assert game.reason in ("Mario fell into a pit", "Mario reached the flagpole", "max_rounds")
    done = play(SuperMario(8, 0), lambda g: g.policy())
    assert done.reason == "Mario reached the flagpole" and done.score == 1200  # every coin, then the pole
    classic = play(SuperMario(10, 1), lambda g: g.policy())  # the long stage can be played through
    assert classic.reason == "Mario reached the flagpole" and classic.stomped > 0 and classic.boxes_hit > 0
    idle = play(SuperMario(6, 0), lambda g: "NONE")
    assert idle.reason == "max_rounds" and idle.frame == 300 and idle.score == 0


# --- determinism and frames ----------------------------------------------------------------------------
@pytest.mark.parametrize("level", [2, 5, 10])
def test_the_same_seed_plays_the_same_frames_and_another_seed_does_not(level):
    def film(seed: int) -> tuple[list[bytes], float, str | None]:
        game, rng, shots = SuperMario(level, seed), random.Random(7), []
        for _ in range(8):
            decide(game, rng.choice(("RIGHT", "UP+RIGHT", "LEFT")), 5, None)
            shots.append(render(game, 120).tobytes())
        play(game, lambda g: rng.choice(g.level.actions), limit=600)
        return shots, game.score, game.reason

    assert film(3) == film(3)
    others = [film(s) for s in (0, 1, 2, 3, 4)]
    assert len({(str(SuperMario(level, s).stage)) for s in range(5)}) > 1
    assert len({tuple(o[0]) for o in others}) > 1


def test_frames_are_360_high_with_the_dashboard_at_the_top():
    game = SuperMario(1, 0)
    frame = render(game)
    assert frame.shape == (360, 480, 3) and frame.dtype == np.uint8
    before = render(game, 480)[:60].copy()
    game.points = 300
    assert not np.array_equal(before, render(game, 480)[:60])
    still = render(game)
    hold(game, "RIGHT", 6)  # the view scrolls with Mario
    assert not np.array_equal(still[60:], render(game)[60:])
    for level in (5, 10):  # the state in words, for text-only agents
        text = SuperMario(level, 0).describe()
        assert text.startswith(f"Super Mario level {level}: Mario at column") and "Goombas at dx" in text


# --- baselines -----------------------------------------------------------------------------------------
def test_the_scripted_policy_beats_random_on_the_easy_levels():
    for level in (1, 2, 5, 7, 8):
        seeds = range(3)
        scripted = statistics.mean(play(SuperMario(level, s), lambda g: g.policy()).score for s in seeds)
        rng = random.Random(level)
        rand = statistics.mean(play(SuperMario(level, s), lambda g, rng=rng: rng.choice(g.level.actions)).score
                               for s in range(10))
        assert scripted > 1.5 * rand, (level, scripted, rand)


def test_the_policys_look_ahead_leaves_the_game_alone():
    searched, replayed = SuperMario(2, 1), SuperMario(2, 1)
    for _ in range(40):
        if searched.over:
            break
        action = searched.policy()
        decide(searched, action, 5, None)
        decide(replayed, action, 5, None)
    assert searched.frame > 100
    assert searched.rng.getstate() == replayed.rng.getstate() and searched.state() == replayed.state()
    assert searched.coins == replayed.coins and searched.tiles == replayed.tiles


# --- on the bus ----------------------------------------------------------------------------------------
def test_launch_random_supermario_plays_the_levels_through_real_processes(tmp_path):
    summary, episodes = run_launch(tmp_path, "vmage_mario_random", "--episodes", "4")
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 4
    metrics = [e["metrics"] for e in episodes]
    assert sorted(m["level"] for m in metrics) == [1, 2, 3, 4]
    ends = ("Mario fell into a pit", "Mario ran into a Goomba", "Mario reached the flagpole", "max_rounds")
    assert all(m["reason"] in ends and m["valid_rate"] == 1.0 for m in metrics)
    assert all(m["score"] % 100 == 0 and 0 < m["frames"] <= TABLE_21[m["level"]][3] for m in metrics)
    levels = summary["vmage"]["levels"]
    assert set(levels) == {f"supermario/{n}" for n in range(1, 5)}
    assert levels["supermario/2"]["paper"]["human"] == 800.0


async def test_llm_agent_takes_the_supermario_template_and_its_six_actions(tmp_path):
    model = ScriptedChatModel(vmage_replies("Observation: a pipe", "jump", "UP+RIGHT", "UP+RIGHT (over the pipe)"))
    h = Harness(quiet=True, episodes=1, run_dir=tmp_path)
    h.add("env", "nodes.game.vmage.node:VmageEnv", params={"game": "supermario", "level": 1, "max_rounds": 20},
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
    assert (m["frames"], m["invalid"], m["reason"]) == (20, 3, "max_rounds")  # 4 valid decisions, 3 invalid
    assert "Super Mario" in model.systems[0] and "UP+LEFT" in model.systems[0]
