"""V-MAGE Race: the spec's level table (Table 19) and both views' action names, the rules (trophy
100, crash or time limit 0), determinism, 360 px frames, the scripted policy beating random, the No
History levels shown one screenshot per call, and a real ``launch run`` through real processes."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from kernel.testing import Harness
from nodes.game.vmage import race_rules
from nodes.game.vmage.base import decide, play, render
from nodes.game.vmage.catalog import GAMES, cells, template_for
from nodes.game.vmage.paper import PAPER_SCORES
from nodes.game.vmage.race import Race
from nodes.game.vmage.race_rules import ARENA, CAR_RADIUS, TROPHY_RADIUS
from tests import test_vmage_env as env_tests
from tests.nodes_extra import ScriptedChatModel, vmage_replies

ENV = "nodes.game.vmage.node:VmageEnv"
JUDGE = "nodes.judge.vmage:VmageJudge"
MAP = ("LEFT", "RIGHT", "UP", "DOWN")


def random_play(game: Race, seed: int) -> Race:
    rng = random.Random(seed)
    return play(game, lambda g: rng.choice(g.level.actions))


# --- the level table (spec §2.1, Table 19) ---------------------------------------------------------
def test_each_level_is_table_19():
    assert GAMES["race"] is Race and sorted(Race.levels) == list(range(1, 10)) and Race.size == (1024, 768)
    rows = {n: (lv.settings["view"], lv.settings["obstacle"], lv.settings["heading"], lv.settings["acceleration"],
                lv.max_rounds, lv.sample_frames) for n, lv in Race.levels.items()}
    assert rows == {
        1: ("map", None, None, None, 100, 1), 2: ("map", "square", None, None, 150, 1),
        3: ("map", "wall", None, None, 150, 1), 4: ("car", None, "up", "low", 150, 3),
        5: ("car", None, "horizontal", "mid", 150, 3), 6: ("car", "square", "up", "mid", 150, 1),
        # the No History variants: levels 1-3 again, seed for seed, with history off
        7: ("map", None, None, None, 100, 1), 8: ("map", "square", None, None, 150, 1),
        9: ("map", "wall", None, None, 150, 1)}
    assert [Race.levels[n].settings["history"] for n in range(1, 10)] == [True] * 6 + [False] * 3
    assert [Race.levels[n].settings["base"] for n in range(1, 10)] == [1, 2, 3, 4, 5, 6, 1, 2, 3]
    assert race_rules.ACCELERATION["low"] < race_rules.ACCELERATION["mid"]
    assert [race_rules.level_name(n) for n in (1, 6, 7, 9)] == ["Level 1", "Level 6", "Level 1 No History",
                                                          "Level 3 No History"]
    assert len(cells("race", "all")) == 9


def test_each_view_has_its_own_action_names():
    for n in (1, 2, 3, 7, 8, 9):
        assert Race.levels[n].actions == MAP  # the released order for the map view
    assert Race.levels[4].actions == Race.levels[5].actions == ("LEFT", "RIGHT", "FORWARD", "BACKWARD")
    assert Race.levels[6].actions == ("FORWARD", "BACKWARD", "LEFT", "RIGHT")  # level 6: the default order
    assert all(lv.idle == "NONE" and "NONE" not in lv.actions for lv in Race.levels.values())


def test_each_level_names_its_prompt_and_the_no_history_ones_ask_for_no_memory():
    from nodes.agent.templates import load_template

    names = [template_for("race", n) for n in range(1, 10)]
    assert names == ["vmage_race_map", "vmage_race_map_obstacles", "vmage_race_map_obstacles", "vmage_race_car",
                     "vmage_race_car", "vmage_race_car", "vmage_race_map_no_history",
                     "vmage_race_map_obstacles_no_history", "vmage_race_map_obstacles_no_history"]
    for name in set(names):
        tpl = load_template(name)
        memory = (tpl.defaults["am"], tpl.defaults["om"])
        assert memory == ((0, 1) if name.endswith("no_history") else (3, 4)), name
        assert tpl.parsers["online"] == "action_line_exact" and "Description:" in tpl.io["online"]
        names_in_prompt = "FORWARD, BACKWARD, LEFT, RIGHT" if "car" in name else "UP, DOWN, LEFT, RIGHT"
        assert names_in_prompt in tpl.io["online"]
        assert ("obstacle" in tpl.io["online"]) == ("obstacles" in name or "car" in name)


def test_the_papers_table_5_is_beside_ours():
    paper = PAPER_SCORES["race"]
    assert paper[1] == {"random": 7.30, "human": 100.0, "gpt-4o": 99.99}
    assert paper[7]["gpt-4o"] == 97.87 and paper[9]["random"] == 0.0 and 6 not in paper  # L6 is not in Table 5


# --- layouts -----------------------------------------------------------------------------------------
def test_layouts_mirror_the_sides_and_put_the_obstacle_midway():
    sides = {Race(1, s).x < 512 for s in range(20)}
    assert sides == {True, False}
    for s in range(20):
        game = Race(1, s)
        assert (game.x < 512) != (game.trophy_x < 512) and not game.obstacles
    walls = set()
    for level in (2, 3, 6):
        for s in range(10):
            game = Race(level, s)
            (rect,) = game.obstacles
            assert math.dist(rect.center, ((game.x + game.trophy_x) / 2, (game.y + game.trophy_y) / 2)) < 1
            if level == 3:
                walls.add(rect.width > rect.height)
            else:
                assert rect.width == rect.height == race_rules.BLOCK
    assert walls == {True, False}  # level 3's short wall lies either way
    assert {Race(4, s).heading for s in range(10)} == {Race(6, s).heading for s in range(10)} == {90.0}
    assert {Race(5, s).heading for s in range(20)} == {0.0, 180.0}  # horizontal, facing either way


# --- the two views' controls ---------------------------------------------------------------------------
def test_the_map_view_translates_the_car_in_screen_directions():
    game = Race(1, 0)
    x, y, step = game.x, game.y, game.level.settings["step"]
    for action, (dx, dy) in {"UP": (0, -1), "LEFT": (-1, 0), "DOWN": (0, 1), "RIGHT": (1, 0)}.items():
        decide(game, action, 1, None)
        x, y = x + dx * step, y + dy * step
        assert (game.x, game.y) == (x, y) and game.speed == 0.0
    assert game.frame == 4 and not game.over


def test_the_car_view_accelerates_along_its_facing_and_steers_from_the_drivers_seat():
    low, mid = Race(4, 0), Race(6, 0)
    x, y = low.x, low.y
    decide(low, "FORWARD", 3, None)  # facing up: the car moves up the screen, faster each frame
    assert low.speed == pytest.approx(3 * 0.4) and low.y == pytest.approx(y - 0.4 - 0.8 - 1.2) and low.x == x
    decide(mid, "FORWARD", 3, None)
    assert mid.speed == pytest.approx(3 * 0.8)  # mid acceleration doubles low
    decide(low, "LEFT", 3, None)  # the driver's left, facing up, is the screen's left: the heading turns
    assert low.heading == pytest.approx(90 + 3 * race_rules.TURN)  # counter-clockwise, and the car rolls on
    assert 0 < low.speed < 3 * 0.4 and low.x < x
    decide(low, "RIGHT", 6, None)
    assert low.heading == pytest.approx(90 - 3 * race_rules.TURN)
    speed = low.speed
    decide(low, "BACKWARD", 3, None)  # brakes, then reverses
    assert low.speed == pytest.approx(speed - 3 * 0.4)
    decide(low, "BACKWARD", 30, None)
    assert low.speed == -race_rules.TOP_SPEED / 2


def test_no_key_held_stands_on_the_map_and_coasts_in_the_car():
    game = Race(1, 0)  # the realtime clock's idle action while no decision has arrived
    x, y = game.x, game.y
    decide(game, "NONE", 5, None)
    assert (game.x, game.y) == (x, y) and not game.over
    game = Race(5, 0)
    decide(game, "FORWARD", 3, None)
    speed, x = game.speed, game.x
    decide(game, "NONE", 3, None)
    assert speed * race_rules.DRAG**3 == pytest.approx(game.speed) and game.x != x


# --- end and score rules ---------------------------------------------------------------------------------
def test_the_trophy_scores_100_and_ends_the_episode():
    game = Race(1, 0)
    game.x, game.y = game.trophy_x - (CAR_RADIUS + TROPHY_RADIUS) - 10, game.trophy_y
    decide(game, "RIGHT", 1, None)
    assert game.over and game.score == 100.0 and game.reason == "the car reached the trophy"
    assert game.info() == "Game Over, You got 100 score." and game.progress() == 1.0


def test_a_crash_into_the_wall_or_an_obstacle_scores_0():
    game = Race(1, 1)
    while not game.over:
        decide(game, "UP", 1, None)
    assert game.reason == "the car hit the wall" and game.score == 0.0 and game.y - CAR_RADIUS < ARENA.top
    game = Race(2, 0)
    (block,) = game.obstacles
    game.x, game.y = block.left - CAR_RADIUS - 5, block.centery
    decide(game, "RIGHT", 1, None)
    assert game.reason == "the car hit an obstacle" and game.score == 0.0
    game = Race(6, 0)  # driving straight up into level 6's block
    while not game.over:
        decide(game, "FORWARD", 1, None)
    assert game.reason == "the car hit an obstacle" and game.score == 0.0


@pytest.mark.parametrize("level,frames", [(1, 100), (2, 150), (4, 150), (7, 100)])
def test_the_time_limit_is_max_rounds_frames_and_scores_0(level, frames):
    game = Race(level, 2)
    moves = ("UP", "DOWN") if game.view == "map" else ("LEFT", "RIGHT")  # dither on the spot
    play(game, lambda g: moves[g.frame // g.level.sample_frames % 2])
    assert game.over and game.reason == "max_rounds" and game.frame == frames and game.score == 0.0
    assert 0.0 <= game.progress() < 1.0


# --- determinism and frames ------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [2, 5, 6])
def test_the_same_seed_plays_the_same_frames_and_another_seed_does_not(level):
    def film(seed: int) -> tuple[list[bytes], float, str | None]:
        game, rng, shots = Race(level, seed), random.Random(7), []
        for _ in range(10):
            decide(game, rng.choice(game.level.actions), game.level.sample_frames, 150)
            shots.append(render(game).tobytes())
        return shots, game.score, game.reason

    assert film(3) == film(3)
    assert film(3)[0] != film(4)[0]


def test_a_no_history_level_is_its_base_level_seed_for_seed():
    for n, base in race_rules.NO_HISTORY.items():
        a, b = Race(n, 5), Race(base, 5)
        assert render(a).tobytes() == render(b).tobytes() and a.state() == b.state()


def test_frames_are_360_high_and_the_car_view_follows_the_car():
    for level in (1, 4):
        frame = render(Race(level, 0))
        assert frame.shape == (360, 480, 3) and frame.dtype == np.uint8
    game = Race(4, 0)
    before = render(game, 768)
    red = before[384 - 10:384 + 10, 512 - 6:512 + 6]  # the car is in the middle of the picture
    assert ((red[..., 0] > 180) & (red[..., 1] < 80)).sum() > 20
    for _ in range(6):
        decide(game, "FORWARD", 3, None)
    after = render(game, 768)
    assert not np.array_equal(before, after)  # the world moved under the camera ...
    red = after[384 - 10:384 + 10, 512 - 6:512 + 6]
    assert ((red[..., 0] > 180) & (red[..., 1] < 80)).sum() > 20  # ... and the car stayed in the middle
    gold = render(Race(1, 0), 768)
    t = Race(1, 0)
    cup = gold[round(t.trophy_y) - 15:round(t.trophy_y), round(t.trophy_x) - 8:round(t.trophy_x) + 8]
    assert ((cup[..., 0] > 200) & (cup[..., 1] > 150) & (cup[..., 2] < 90)).sum() > 50  # the golden cup


# --- baselines ---------------------------------------------------------------------------------------------
def test_the_scripted_policy_beats_random_on_every_level():
    for level in Race.levels:
        seeds = range(6)
        scripted = statistics.mean(play(Race(level, s), lambda g: g.policy()).score for s in seeds)
        rand = statistics.mean(random_play(Race(level, s), s).score for s in seeds)
        assert scripted >= 80 and scripted > rand + 50, (level, scripted, rand)


# --- on the bus ----------------------------------------------------------------------------------------------
async def test_the_llm_agent_sees_history_on_level_1_and_one_screenshot_on_its_no_history_variant(tmp_path):
    model = ScriptedChatModel(vmage_replies("Description: a car", "wait", "DOWN", "UP"))
    h = Harness(quiet=True, episodes=2, run_dir=tmp_path)
    h.add("env", ENV, params={"game": "race", "level": [1, 7], "frames": True, "height": 120, "max_rounds": 6},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "on_invalid": "random"},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", JUDGE, inputs={"step": {"from": "env/step", "policy": "block"}})
    h.local("model", model)
    async with h:
        await h.start()
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        records = sorted((r["metrics"]["level"], r["metrics"]["reason"], r["metrics"]["frames"])
                         for r in h.kernel.book.records.values())
    assert records == [(1, "max_rounds", 6), (7, "max_rounds", 6)]
    images = [sum(1 for msg in call if isinstance(msg["content"], list) for part in msg["content"]
                  if part.get("type") == "image") for call in model.calls]
    assert images == [1, 2, 3, 4, 4, 4] + [1] * 6  # level 1: the last 3 decisions too; level 7: the current one
    assert "top-down racing game" in model.calls[0][0]["content"] and "UP, DOWN, LEFT, RIGHT" in \
        model.calls[-1][0]["content"]
    assert [m["role"] for m in model.calls[-1]] == ["system", "user"]  # the rules, then this screen only
    # level 1: V-MAGE's history in the one user message, its last 3 replies read as fields after their screens
    assert [m["role"] for m in model.calls[5]] == ["system", "user"]
    texts = [part["text"] for part in model.calls[5][1]["content"] if part.get("type") == "text"]
    assert [t.split(" steps before")[0] for t in texts if t.startswith("The screen above was")] == [
        "The screen above was 3", "The screen above was 2", "The screen above was 1"]


async def test_the_env_serves_each_levels_actions_template_and_oracle():
    async with Harness(quiet=True, episodes=2) as h:
        h.add("env", ENV, params={"game": "race", "level": [5, 6], "frames": True, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        described = await probe.request("env", "describe", {})
        assert described["levels"]["6"]["acceleration"] == "mid" and described["window"] == [1024, 768]
        obs = (await probe.recv("obs")).body
        assert (obs["level"], obs["template"], obs["actions"]) == (5, "vmage_race_car",
                                                                   ["LEFT", "RIGHT", "FORWARD", "BACKWARD"])
        assert obs["frame"].shape == (360, 480, 3) and "car view" in obs["text"]
        await probe.publish("action", "UP", step=0)  # a map-view name is not an action of the car view
        step = (await probe.recv("step")).body
        assert not step["valid"] and step["info"]["frames"] == 0
        obs = (await probe.recv("obs")).body
        answer = await probe.request("env", "oracle", {"episode": obs["episode"]})
        await probe.publish("action", answer, step=1)
        step = (await probe.recv("step")).body
        assert step["valid"] and step["info"]["frames"] == 3 and step["info"]["played"] == 3
        await probe.publish("action", {"stop": True, "reason": "next"}, step=2)
        obs = (await probe.recv("obs")).body
        while obs["level"] != 6:
            obs = (await probe.recv("obs")).body
        assert obs["actions"] == ["FORWARD", "BACKWARD", "LEFT", "RIGHT"]
        await probe.publish("action", {"stop": True, "reason": "done"}, step=0)
        await h.wait_finished(20)


def test_the_gpt4o_launch_file_leaves_the_memory_to_each_levels_template(monkeypatch, tmp_path):
    from kernel.launchfile import load, resolve_path

    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    lf = load(resolve_path(env_tests.launch_file(tmp_path, "vmage_race_gpt4o")))
    agent = lf.node("agent").params
    assert "am" not in agent and "om" not in agent and "history" not in agent and agent["images"] is True
    assert lf.node("model").params["sampling"] == {"temperature": 0.8, "top_p": 0.9, "max_tokens": 2048}
    assert lf.node("env").params["level"] == "all" and lf.node("env").clock.mode == "lockstep"


# --- launch run through real processes ---------------------------------------------------------------------------
def test_launch_random_race_plays_every_level_and_scripted_beats_it(tmp_path):
    summary, episodes = env_tests.run_launch(tmp_path, "vmage_race_random", "--episodes", "9")
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 9
    metrics = [e["metrics"] for e in episodes]
    assert sorted(m["level"] for m in metrics) == list(range(1, 10)) and {m["round"] for m in metrics} == {0}
    ends = {"the car reached the trophy", "the car hit the wall", "the car hit an obstacle", "max_rounds"}
    for m in metrics:
        assert m["reason"] in ends and m["valid_rate"] == 1.0 and m["score"] in (0.0, 100.0)
        assert m["frames"] <= (100 if m["level"] in (1, 7) else 150)
        assert (m["score"] == 100.0) == (m["reason"] == "the car reached the trophy")
    levels = summary["vmage"]["levels"]
    assert set(levels) == {f"race/{n}" for n in range(1, 10)} and levels["race/7"]["paper"]["gpt-4o"] == 97.87
    scripted, runs = env_tests.run_launch(tmp_path, "vmage_scripted", "--set", "env.game=race", "--set",
                                          "env.level=[3, 6]", "--episodes", "2")
    assert [e["metrics"]["reason"] for e in runs] == ["the car reached the trophy"] * 2
    assert scripted["metrics"]["score"] == 100.0
