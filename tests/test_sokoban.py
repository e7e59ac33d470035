"""The MageBench Sokoban pack: rules and reward, XSB levels, the solver, the 182-level benchmark and
its tiers, scoring and baselines, rendering, the Gymnasium env, the bus node and judge, and the
launch files."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import warnings
from collections import deque
from typing import Any

import gymnasium
import numpy as np
import pytest

from kernel.sdk.node import Node, service
from kernel.testing import Harness
from nodes.game.sokoban import benchmark, render
from nodes.game.sokoban.baselines import baseline_scores, idle_policy, play
from nodes.game.sokoban.game import SokobanGame, prepare_level
from nodes.game.sokoban.gym_env import ENV_ID, SokobanGymEnv
from nodes.game.sokoban.levels import Level, LevelError, parse_xsb, parse_xsb_collection
from nodes.game.sokoban.rules import ACTIONS, Board, from_lurd
from nodes.game.sokoban.scoring import episode_score
from nodes.game.sokoban.solver import optimal_reward, solve
from nodes.game.sokoban.tiers import PAPER_BASELINES, TIER_BY_NAME, TIERS, TOTAL_LEVELS
from tests.helpers import ROOT, launch, launch_env

FULL = benchmark.levels("full")
MINI = benchmark.levels("mini")


def replay(level: Level, actions: list[str]) -> SokobanGame:
    game = SokobanGame(level)
    for a in actions:
        game.play(a)
    return game


def bfs_steps(level: Level, limit: int = 60) -> int | None:
    """Fewest steps by plain breadth-first search over (boxes, player): slow, obviously right."""
    start = (frozenset(level.boxes), level.player)
    seen = {start}
    frontier = deque([(start, 0)])
    while frontier:
        (boxes, player), depth = frontier.popleft()
        if boxes == level.targets:
            return depth
        if depth == limit:
            continue
        for a in ACTIONS:
            board = Board(level.with_state(boxes, player))
            if board.step(a).moved:
                state = board.state()
                if state not in seen:
                    seen.add(state)
                    frontier.append((state, depth + 1))
    return None


# --- rules and reward --------------------------------------------------------------------------
def test_push_never_pull_walls_and_two_boxes_block():
    level = parse_xsb("#######\n#.$@  #\n#  $  #\n#  .  #\n#######")
    board = Board(level)
    out = board.step("Right")  # walk away from the box: nothing follows (no pulling)
    assert out.moved and not out.pushed and board.boxes == set(level.boxes) and out.reward == -0.5
    board.step("Left")
    out = board.step("Left")  # push the box onto the target
    assert out.pushed and out.box_on and out.reward == 4.5 and board.on_target == 1
    out = board.step("Left")  # box against the wall: blocked, the step is still spent
    assert not out.moved and out.reward == -0.5 and board.player == level.cell(1, 2)
    stacked = Board(parse_xsb("#######\n#@$$. #\n#   . #\n#######"))
    out = stacked.step("Right")  # two boxes in a row cannot be pushed
    assert not out.moved and stacked.player == stacked.level.cell(1, 1)


def test_reward_off_target_and_finishing_bonus_include_the_box():
    level = parse_xsb("######\n#@*. #\n#  $ #\n######")
    board = Board(level)
    out = board.step("Right")  # pushes the box off its target onto the other one: off and on cancel
    assert out.pushed and not out.box_on and not out.box_off and out.reward == -0.5
    out = board.step("Right")  # off the target
    assert out.box_off and out.reward == -5.5 and board.on_target == 0
    level = parse_xsb("#####\n#@$.#\n#####")
    assert Board(level).step("Right").reward == 54.5  # +54.5 already holds the last box's +5
    assert optimal_reward(level, 1) == 54.5


# --- XSB -------------------------------------------------------------------------------------------
def test_xsb_round_trips_every_benchmark_level_and_every_symbol():
    for level in FULL:
        again = parse_xsb(level.to_xsb())
        assert (again.walls, again.targets, again.boxes, again.player) == (
            level.walls, level.targets, level.boxes, level.player)
    text = "  #####\n###   #\n#.@$  #\n### $.#\n#.##$ #\n# # . ##\n#$ *$$.#\n#   .  #\n########"
    assert parse_xsb(text).to_xsb() == text
    on_target = parse_xsb("######\n#+$  #\n#  $.#\n######")
    assert on_target.player in on_target.targets and on_target.to_xsb() == "######\n#+$  #\n#  $.#\n######"
    dashes = parse_xsb("#####\n#@$.#\n#---#\n#####")  # '-' and '_' are floor too
    assert dashes.to_xsb() == "#####\n#@$.#\n#   #\n#####"


def test_xsb_collections_titles_and_errors():
    levels = parse_xsb_collection("; first\n#####\n#@$.#\n#####\n\nTitle: second\n######\n#@ $.#\n######\n", "pack")
    assert [lv.name for lv in levels] == ["first", "second"]
    with pytest.raises(LevelError, match="exactly one player"):
        parse_xsb("#####\n#@$@#\n#. .#\n#####")
    with pytest.raises(LevelError, match="2 boxes but 1 targets"):
        parse_xsb("######\n#@$$.#\n######")
    with pytest.raises(LevelError, match="walk off the board"):
        parse_xsb("#####\n#@$. \n#####")


def test_cli_solves_an_xsb_file_in_lurd_notation(tmp_path):
    level = FULL[TIER_BY_NAME["v0"].levels]  # the first v1 level
    path = tmp_path / "level.xsb"
    path.write_text(f"; {level.name}\n{level.to_xsb()}\n")
    result = subprocess.run([sys.executable, "-m", "nodes.game.sokoban", "solve", str(path)], cwd=ROOT,
                            env=launch_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lurd, summary = result.stdout.strip().splitlines()
    assert set(lurd) <= set("udlrUDLR") and summary.startswith(f"{len(lurd)} steps")
    assert len(lurd) == level.meta["steps"]
    game = SokobanGame(level)
    for ch in lurd:
        assert game.play(from_lurd(ch)[0]).pushed == ch.isupper()  # upper case exactly for pushes
    assert game.success and game.score == 100.0


# --- the solver and the benchmark --------------------------------------------------------------------
def test_replaying_each_stored_solution_scores_exactly_100_within_50_steps():
    assert len(FULL) == TOTAL_LEVELS == 182
    for level in FULL:
        game = replay(level, from_lurd(level.meta["solution"]))
        assert game.success, level.name
        assert game.t == level.meta["steps"] <= 50
        assert game.tracker.cumulative == level.meta["r_best"] == optimal_reward(level, game.t)
        assert game.score == 100.0, level.name
        idle = play(level, idle_policy)
        assert idle.score == 100.0 - level.meta["r_best"] and not idle.success


def test_solver_matches_plain_breadth_first_search():
    for level in [lv for lv in FULL if lv.tier == "small-v0"][:25]:
        assert bfs_steps(level) == level.meta["steps"], level.name
    hand = parse_xsb("#######\n#  .  #\n# $$  #\n#.@ $ #\n#   . #\n#######")
    sol = solve(hand, max_steps=60)
    assert sol is not None and sol.steps == bfs_steps(hand, 60)
    assert solve(hand, max_steps=sol.steps - 1) is None  # and nothing shorter exists


def test_stored_optimal_step_counts_are_reproduced_by_the_solver():
    quick = [lv for lv in FULL if lv.tier in ("small-v0", "small-v1", "v0")]
    for level in quick:
        sol = solve(level.with_state(level.boxes, level.player), max_steps=50)
        assert sol is not None and sol.steps == level.meta["steps"], level.name


def test_tiers_match_the_paper():
    counts = {t.name: 0 for t in TIERS}
    for level in FULL:
        tier = TIER_BY_NAME[level.tier]
        counts[level.tier] += 1
        assert (level.width, level.height) == (tier.width, tier.height), level.name
        assert len(level.boxes) == len(level.targets) == tier.boxes, level.name
        assert level.validate() is level
    assert counts == {t.name: t.levels for t in TIERS}
    assert (TIER_BY_NAME["large-v1"].boxes, TIER_BY_NAME["large-v1"].width, TIER_BY_NAME["large-v1"].height) == (
        5, 13, 11)
    for tier in TIERS:
        steps = [lv.meta["steps"] for lv in FULL if lv.tier == tier.name]
        assert abs(statistics.mean(steps) - tier.paper_mean_steps) <= 0.5, tier.name
        assert max(steps) <= 50
    assert len({lv.to_xsb() for lv in FULL}) == 182  # no level twice
    assert len(MINI) == 20 and {lv.name for lv in MINI} <= {lv.name for lv in FULL}
    assert {lv.tier for lv in MINI} == set(TIER_BY_NAME)


def test_the_stored_set_is_what_its_seed_generates():
    stored = [rec for rec in json.loads(benchmark.DATA.read_text())["levels"] if rec["tier"] == "small-v1"]
    rebuilt = benchmark.build_tier(TIER_BY_NAME["small-v1"], benchmark.DEFAULT_SEED, log=lambda _: None)
    assert rebuilt == stored


def test_idle_and_random_baselines_sit_near_the_papers():
    for which, levels in (("mini", MINI), ("full", FULL)):
        res = baseline_scores(levels, repeats=2, seed=1)
        paper = PAPER_BASELINES[which]
        assert res["idle"] == pytest.approx(100 - statistics.mean(lv.meta["r_best"] for lv in levels))
        assert abs(res["idle"] - paper["idle"]) < 6, (which, res)
        assert res["idle"] < res["random"] < res["idle"] + 6, (which, res)


def test_score_is_the_best_prefix_including_the_empty_one():
    assert episode_score([], 55.0) == 45.0
    assert episode_score([-0.5, 4.5, -5.5, -0.5], 55.0) == 49.0  # best prefix: -0.5 + 4.5
    assert episode_score([-0.5] * 10, 55.0) == 45.0  # never below idle
    assert episode_score([4.5] * 60, 55.0, limit=50) == 100.0 - 55.0 + 225.0


def test_game_budget_invalid_none_and_stop():
    level = MINI[0]
    game = SokobanGame(level, max_steps=3)
    assert not game.play("jump").valid and game.t == 1 and game.tracker.cumulative == 0
    assert game.play(None).valid and game.t == 2
    step = game.play({"stop": True})
    assert step.done and step.stopped and game.t == 2 and game.done and not game.success
    game = SokobanGame(level, max_steps=2)
    game.play("Up")
    assert game.play("Up").done and game.done and game.info()["steps"] == 2


def test_oracle_follows_the_solution_and_recovers_off_it():
    level = next(lv for lv in MINI if lv.tier == "v1")
    game = SokobanGame(level)
    while not game.success:
        game.play(game.oracle())
    assert game.score == 100.0 and game.t == level.meta["steps"]
    game = SokobanGame(level, max_steps=200)
    for a in ("Up", "Left", "Down", "Right"):  # a detour, then the oracle finishes optimally from there
        game.play(a)
    start = game.board.as_level()
    need = solve(start).steps
    for _ in range(need):
        game.play(game.oracle())
    assert game.success
    level = prepare_level(parse_xsb("######\n#    #\n# $ .#\n#@   #\n######"))
    assert level.meta["steps"] == 3 and level.meta["solution"] == "uRR"
    game = SokobanGame(level)
    game.play("Right")
    game.play("Up")  # the box goes against the top wall, where no target is: lost
    assert game.oracle() is None
    with pytest.raises(ValueError, match="no solution"):
        prepare_level(game.board.as_level())


# --- rendering -----------------------------------------------------------------------------------------
def test_frames_use_the_papers_sprites_and_resize_to_640():
    level = next(lv for lv in FULL if lv.tier == "large-v0")
    img = render.frame(level, level.boxes, level.player)
    assert img.shape == (542, 640, 3) and img.dtype == np.uint8  # 13 x 11 tiles, long edge 640
    native = render.frame(level, level.boxes, level.player, 0)
    assert native.shape == (11 * 16, 13 * 16, 3)
    t = render.TILE

    def tile(cell: int) -> np.ndarray:
        r, c = level.rowcol(cell)
        return native[r * t:(r + 1) * t, c * t:(c + 1) * t].reshape(-1, 3).astype(int)

    def share(px: np.ndarray, rgb: tuple[int, int, int], tol: int = 40) -> float:
        return float((np.abs(px - np.array(rgb)).max(axis=1) < tol).mean())

    player, box = tile(level.player), tile(next(iter(level.boxes - level.targets)))
    target = tile(next(iter(level.targets - level.boxes - {level.player})))
    wall = tile(next(iter(level.walls)))
    assert share(player, (40, 200, 70)) > 0.15  # a green character
    assert share(box, (236, 196, 40)) > 0.4  # a yellow box
    assert share(target, (225, 35, 35)) > 0.05 and share(target, (38, 38, 44)) > 0.5  # a red dot on floor
    assert share(wall, (160, 45, 33), 30) > 0.4  # red bricks
    text = render.text(level, level.boxes, level.player)
    assert text.splitlines()[:-1] == level.to_xsb().splitlines() and "Legend:" in text


# --- Gymnasium -------------------------------------------------------------------------------------------
def test_gymnasium_env_checker_passes():
    from gymnasium.utils.env_checker import check_env

    assert ENV_ID in gymnasium.registry
    for kwargs in ({"render_mode": "rgb_array"}, {"obs_type": "grid", "render_mode": "ansi", "set": "full"}):
        env = gymnasium.make(ENV_ID, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the checker's warnings are failures here
            check_env(env.unwrapped, skip_render_check=False)
        env.close()


def test_gymnasium_env_plays_the_benchmark_with_the_same_reward():
    env = SokobanGymEnv(set="mini", tier="small-v0", render_mode="rgb_array", obs_type="grid")
    level = env.levels[2]
    obs, info = env.reset(seed=3, options={"level": level.name})
    assert obs.shape == (7, 7) and info["level"] == level.name and "Legend" in info["text"]
    total, terminated = 0.0, False
    for a in from_lurd(level.meta["solution"]):
        obs, reward, terminated, truncated, info = env.step(ACTIONS.index(a))
        total += reward
    assert terminated and not truncated and total == level.meta["r_best"] and info["score"] == 100.0
    assert env.render().shape == (640, 640, 3)
    env.reset(seed=0, options={"level": 0})
    for _ in range(50):
        _, _, terminated, truncated, info = env.step(0 if info.get("steps", 0) % 2 else 1)
    assert truncated and not terminated and info["steps"] == 50


def test_users_bring_their_own_xsb_levels(tmp_path):
    path = tmp_path / "mine.xsb"
    path.write_text("; easy\n#####\n#@$.#\n#####\n\n; corner\n######\n#    #\n# $ .#\n#@   #\n######\n")
    env = SokobanGymEnv(levels=str(path), render_mode="ansi")
    assert [lv.name for lv in env.levels] == ["easy", "corner"]
    _, info = env.reset(options={"level": "corner"})
    assert info["optimal_steps"] == 3 and info["r_best"] == 53.5 and info["tier"] == ""
    for a in ("Up", "Right", "Right"):
        _, reward, terminated, _, info = env.step(ACTIONS.index(a))
    assert terminated and info["score"] == 100.0 and env.render().startswith("######")


# --- the bus ----------------------------------------------------------------------------------------------
async def test_env_node_services_oracle_invalid_and_stop():
    async with Harness(quiet=True, episodes=2) as h:
        h.add("env", "nodes.game.sokoban.node:SokobanEnv", params={"set": "mini", "tier": "small-v0", "judge": False, "frames": True,
                                                                   "resolution": 320},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        described = await probe.request("env", "describe", {})
        assert described["env"] == "sokoban" and described["actions"] == list(ACTIONS) and described["levels"] == 5
        level = [lv for lv in MINI if lv.tier == "small-v0"][0]
        while True:  # episode 0: the oracle's moves, then the score is 100
            obs = (await probe.recv("obs")).body
            assert obs["env"] == "sokoban" and obs["idle"] is None and obs["frame"].shape == (320, 320, 3)
            assert obs["level"] == level.name and "Legend" in obs["text"] and obs["goal"].startswith("Push")
            action = await probe.request("env", "oracle", {"episode": obs["episode"]})
            await probe.publish("action", action, step=obs["t"])
            step = (await probe.recv("step")).body
            assert step["valid"] and step["action"] == action
            if step["done"]:
                break
        assert step["info"]["success"] and step["info"]["score"] == 100.0 and step["t"] + 1 == level.meta["steps"]
        obs = (await probe.recv("obs")).body  # episode 1: an invalid action, no action, then stop
        await probe.publish("action", "Jump", step=0)
        step = (await probe.recv("step")).body
        assert step["valid"] is False and step["action"] is None and step["reward"] == 0.0
        await probe.recv("obs")
        await probe.publish("action", None, step=1)
        assert (await probe.recv("step")).body["valid"] is True
        await probe.recv("obs")
        await probe.publish("action", {"stop": True, "reason": "test"}, step=2)
        step = (await probe.recv("step")).body
        assert step["done"] and step["info"]["stopped"] and step["info"]["steps"] == 2
        await h.wait_finished(20)
        metrics = [r["metrics"] for r in h.kernel.book.records.values()]
        assert metrics[0]["score"] == 100.0 and metrics[1]["success"] == 0.0


async def test_judge_scores_from_the_step_stream_and_summarizes_per_tier():
    async with Harness(quiet=True, episodes=2) as h:
        h.add("judge", "nodes.judge.sokoban:SokobanJudge", inputs={"step": "probe/step"})
        probe = h.probe(outputs=["step"])
        await h.start()
        for tier, rewards in (("v0", [-0.5, 4.5, -5.5, -0.5]), ("small-v0", [-0.5, 54.5])):
            ep = await probe.next_episode()
            info = {"r_best": 54.0, "tier": tier, "level": f"{tier}-00", "optimal_steps": 2, "max_steps": 50,
                    "set": "full", "stopped": False}
            for t, r in enumerate(rewards):
                done = t == len(rewards) - 1
                score = episode_score(rewards[:t + 1], 54.0)  # the game's, as its info carries it
                best = score - 100 + 54.0
                await probe.publish("step", {"episode": ep.id, "t": t, "reward": r, "done": done, "valid": True,
                                             "info": {**info, "steps": t + 1, "success": done and r > 50,
                                                      "score": score, "best_reward": best}})
        await h.wait_finished(10)
        first, second = (r["metrics"] for r in h.kernel.book.records.values())
        assert first["score"] == 100 - 54 + 4.0 and first["success"] == 0.0 and first["tier"] == "v0"
        assert second["score"] == 100.0 and second["success"] == 1.0 and second["steps"] == 2
        for _ in range(50):  # the summary travels with heartbeats
            summary = h.kernel.summary_sections().get("sokoban", {})
            if summary.get("tiers", {}).get("all", {}).get("episodes") == 2:
                break
            await asyncio.sleep(0.1)
        assert summary["tiers"]["v0"]["score_mean"] == 50.0 and summary["tiers"]["small-v0"]["success_rate"] == 1.0
        assert summary["score_mean"] == 75.0 and summary["paper"] == PAPER_BASELINES["full"]


class SolvingModel(Node):
    """A model node that reads the XSB grid from the agent's prompt and answers with a shortest
    solution in MageBench's format (the whole list for Global, its first move for Online), so the
    LLM agent's Sokoban template and parsers run against this env's text observations."""

    @service("chat")
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        rows = text.split("Legend:")[0].splitlines()
        grid = [r for r in rows if r.strip() and set(r) <= set("#@+$*. ") and "#" in r]
        level = parse_xsb("\n".join(grid))
        moves = list(solve(level).actions)
        system = body["messages"][0]["content"]
        if "### Actions" in system:
            reply = "### Analyze\nplanned with a solver\n### Actions\n" + ", ".join(moves)
        else:
            reply = f"# analyze\nthe first move of a shortest solution\n# action\n{moves[0]}"
        return {"text": reply, "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "latency_s": 0.0,
                "cost_usd": 0.0}


@pytest.mark.parametrize("planning", ["online", "global"])
async def test_llm_agent_plays_the_text_view_in_both_settings(tmp_path, planning):
    h = Harness(quiet=True, episodes=2, run_dir=tmp_path)
    h.add("env", "nodes.game.sokoban.node:SokobanEnv", params={"set": "mini", "tier": "small-v1", "frames": False},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "template": "sokoban", "images": False,
                                                       "planning": planning, "am": 5, "om": 1, "cot": True},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", "nodes.judge.sokoban:SokobanJudge", inputs={"step": {"from": "env/step", "policy": "block"}})
    h.local("model", SolvingModel())
    async with h:
        await h.start()
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        metrics = [r["metrics"] for r in h.kernel.book.records.values()]
    assert [m["score"] for m in metrics] == [100.0, 100.0]
    assert [m["steps"] for m in metrics] == [lv.meta["steps"] for lv in MINI if lv.tier == "small-v1"]


# --- launch files ---------------------------------------------------------------------------------------------
def run_launch(tmp_path, name: str, *args: str) -> dict[str, Any]:
    out = tmp_path / name
    result = launch("run", f"{name}.yaml", *args, "--out", str(out), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "summary.json").read_text())


def test_launch_random_on_the_mini_set_puts_its_numbers_in_the_summary(tmp_path):
    summary = run_launch(tmp_path, "sokoban_random")
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 20
    table = summary["sokoban"]
    assert table["tiers"]["all"]["episodes"] == 20 and table["paper"] == PAPER_BASELINES["mini"]
    per_tier = {t: sum(lv.tier == t for lv in MINI) for t in TIER_BY_NAME}
    assert {t: v["episodes"] for t, v in table["tiers"].items() if t != "all"} == per_tier
    idle = 100 - statistics.mean(lv.meta["r_best"] for lv in MINI)
    assert idle <= table["score_mean"] < 100 and summary["metrics"]["score"] == pytest.approx(table["score_mean"])
    assert summary["metrics"]["steps"] <= 50


def test_launch_scripted_scores_100_and_idle_scores_100_minus_r_best(tmp_path):
    summary = run_launch(tmp_path, "sokoban_scripted", "--set", "env.set=mini", "--episodes", "20")
    assert summary["episodes"]["completed"] == 20
    assert summary["metrics"]["score"] == 100.0 and summary["metrics"]["success"] == 1.0
    assert summary["sokoban"]["tiers"]["all"]["successes"] == 20
    summary = run_launch(tmp_path, "sokoban_idle", "--episodes", "4")
    assert summary["metrics"]["score"] == pytest.approx(100 - statistics.mean(lv.meta["r_best"] for lv in MINI[:4]))
    assert summary["metrics"]["success"] == 0.0 and summary["metrics"]["steps"] == 50


def test_every_sokoban_launch_file_loads():
    from kernel.launchfile import load, resolve_path

    for name in ("sokoban_random", "sokoban_idle", "sokoban_scripted", "sokoban_local", "sokoban_gpt4o"):
        lf = load(resolve_path(name))
        assert lf.node("env").uses == "sokoban.env" and lf.node("judge").uses == "sokoban.judge"
        assert lf.node("env").params["max_steps"] == 50
    gpt = load(resolve_path("sokoban_gpt4o"))
    assert gpt.node("model").params["sampling"] == {"temperature": 0.1, "top_p": 0.95, "max_tokens": 300}
    agent = gpt.node("agent").params
    assert (agent["planning"], agent["am"], agent["om"], agent["images"]) == ("online", 5, 1, True)
    assert gpt.node("env").params["frames"] is True
    local = load(resolve_path("sokoban_local"))
    assert local.node("env").params["frames"] is False and local.node("agent").params["images"] is False
    assert local.node("model").params["serve"] == {"kind": "vllm-cpu"}
    assert load(resolve_path("sokoban_random")).run.episodes == len(MINI)
    assert load(resolve_path("sokoban_scripted")).run.episodes == len(FULL)
