"""vmage.env and judge.vmage on the bus: typed params, the pause, frames, the oracle, and real
``launch run`` of the random launch files through real processes."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from kernel.sdk.registry import registered_nodes
from kernel.testing import Harness
from nodes.agent.memory import ChatMemory, Turn
from nodes.agent.parsers import action_line_exact
from nodes.game.vmage.node import VmageEnv
from tests.helpers import ROOT, launch
from tests.nodes_extra import ScriptedChatModel, vmage_replies

ENV = "nodes.game.vmage.node:VmageEnv"
JUDGE = "nodes.judge.vmage:VmageJudge"


def test_params_name_the_key_and_the_allowed_values():
    with pytest.raises(ValidationError, match=r"game[\s\S]*'pong', 'flappybird'[\s\S]*'race'[\s\S]*'supermario'"):
        VmageEnv.parse_params({"game": "tetris"})
    with pytest.raises(ValidationError, match=r"level: 8 is not a level of flappybird; allowed: 1-7"):
        VmageEnv.parse_params({"game": "flappybird", "level": 8})
    with pytest.raises(ValidationError, match="height"):
        VmageEnv.parse_params({"game": "pong", "height": 0})
    p = VmageEnv.parse_params({"game": "pong", "level": [1, 3]})
    assert p.level == [1, 3] and p.height == 360 and p.sample_frames is None


async def test_lockstep_holds_the_game_while_the_agent_thinks_and_plays_sample_frames_per_decision():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"game": "pong", "level": 3, "frames": True, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        described = await probe.request("env", "describe", {})
        assert described["cells"] == [["pong", 3]] and described["levels"]["3"]["sample_frames"] == 3
        obs = (await probe.recv("obs")).body
        assert obs["env"] == "vmage" and obs["game"] == "pong" and obs["level"] == 3 and obs["round"] == 0
        assert obs["frame"].shape == (360, 480, 3) and obs["game_frame"] == 0 and obs["idle"] == "NONE"
        assert obs["actions"] == ["LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE"]
        assert obs["template"] == "vmage_pong" and "Left paddle" in obs["text"]
        await probe.publish("action", None, step=0)  # no action: V-MAGE's game does not advance
        step = (await probe.recv("step")).body
        assert step["info"]["frames"] == 0 and step["info"]["played"] == 0
        obs = (await probe.recv("obs")).body
        assert obs["game_frame"] == 0 and obs["info"].startswith("Invalid action, which should be one of")
        await probe.publish("action", "jump", step=1)  # not an action of Pong: invalid, nothing applied
        step = (await probe.recv("step")).body
        assert not step["valid"] and step["info"]["frames"] == 0
        t = 2
        while True:
            obs = (await probe.recv("obs")).body
            answer = await probe.request("env", "oracle", {"episode": obs["episode"]})
            assert answer in obs["actions"]
            await probe.publish("action", answer, step=t)
            step = (await probe.recv("step")).body
            assert step["valid"] and step["info"]["frames"] == 3 * (t - 1)  # each decision: 3 frames
            t += 1
            if t == 6:
                break
        await probe.publish("action", {"stop": True, "reason": "enough"}, step=6)
        (await probe.recv("obs"))
        await h.wait_finished(20)
        (record,) = h.kernel.book.records.values()
        assert record["metrics"]["frames"] == 12 and record["metrics"]["reason"] == "stopped: enough"


async def test_realtime_plays_one_frame_per_tick_and_runs_on_without_actions():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"game": "flappybird", "level": 4, "max_rounds": 20, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "realtime", "fps": 200})
        probe = h.probe(inputs={"step": "env/step"}, outputs=["action"])
        await h.start()
        frames = []
        while True:
            step = (await probe.recv("step")).body
            frames.append(step["info"]["frames"])
            if step["done"]:
                break
        await h.wait_finished(20)
        assert frames == list(range(1, 21)) and step["info"]["reason"] == "max_rounds"
        assert step["info"]["clock"] == "realtime"


# --- the LLM agent ---------------------------------------------------------------------------------
def test_the_action_must_be_exactly_a_name_of_the_level():
    actions = ["UP", "KEEP", "NONE"]
    assert action_line_exact("Observation: low\nReasoning: climb\nAction: UP", actions) == ["UP"]
    assert action_line_exact("**Action:**\n  UP  \n", actions) == ["UP"]
    assert action_line_exact("Action: UP (to reach the gap)", actions) == []  # V-MAGE's instruction error
    assert action_line_exact("Action: up", actions) == []  # case counts
    assert action_line_exact("Action: DOWN", actions) == []  # not an action of this level
    assert action_line_exact("I would go UP", actions) == []


def test_action_memory_keeps_every_past_turn_until_its_window_is_full():
    memory = ChatMemory(am=3, om=4, images=False)
    for n in range(5):
        memory.add(Turn(prompt=f"turn {n} {{observation}}", text="", reply="r"))
        users = [m["content"] for m in memory.messages([]) if m["role"] == "user"]
        assert users == [f"turn {i} " for i in range(max(0, n - 3), n + 1)]


async def test_llm_agent_takes_the_levels_template_and_an_invalid_reply_does_not_advance_the_game(tmp_path):
    model = ScriptedChatModel(vmage_replies("Observation: the ball", "wait", "NONE", "NONE (wait for the ball)"))
    h = Harness(quiet=True, episodes=1, run_dir=tmp_path)
    h.add("env", ENV, params={"game": "pong", "level": 1, "frames": True, "height": 120, "max_rounds": 30},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "on_invalid": "random"},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", JUDGE, inputs={"step": {"from": "env/step", "policy": "block"}})
    h.local("model", model)
    async with h:
        await h.start()
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        (record,) = h.kernel.book.records.values()
    m = record["metrics"]
    # replies alternate valid, invalid, ..., valid: 10 valid decisions of 3 frames, 9 invalid ones
    assert (m["frames"], m["decisions"], m["invalid"], m["reason"]) == (30, 19, 9, "max_rounds")
    assert m["valid_rate"] == pytest.approx(30 / 39)
    assert m["reply_runs"] == 19  # each reply differs from the one before (NONE, none for an invalid one)
    system = model.calls[0][0]["content"]
    assert "you control BOTH paddles" in system and "LEFTUP" in system
    images = [sum(1 for msg in call if isinstance(msg["content"], list) for part in msg["content"]
                  if part.get("type") == "image") for call in model.calls]
    assert images[:5] == [1, 2, 3, 4, 4]  # the current screen and those of the last 3 decisions


async def test_the_third_invalid_reply_in_a_row_plays_a_random_action_and_counts_as_invalid(tmp_path):
    """V-MAGE's game loop, not its agent, applies the rule: the agent sends no action for a reply it
    cannot use, and the env plays a random valid one on the third in a row, then counts afresh."""
    garbage = "I think the ball is going somewhere."
    model = ScriptedChatModel([garbage, garbage, garbage, *vmage_replies("Observation: the ball", "wait", "NONE", "NONE")])
    h = Harness(quiet=True, episodes=1, run_dir=tmp_path)
    h.add("env", ENV, params={"game": "pong", "level": 1, "max_rounds": 30},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "images": False},  # on_invalid: skip
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", JUDGE, inputs={"step": {"from": "env/step", "policy": "block"}})
    probe = h.probe(inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
    h.local("model", model)
    async with h:
        await h.start()
        steps = []
        while not steps or not steps[-1]["done"]:
            steps.append((await probe.recv("step")).body)
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        (record,) = h.kernel.book.records.values()
    # per cycle of 5 replies: garbage x3 (the third plays a random action: 3 frames), NONE x2 (6 frames);
    # 30 frames = 3 cycles (27 frames) and the fourth cycle's third garbage reply
    assert len(steps) == 18
    drawn = [s["t"] for s in steps if s["info"]["random_action"] is not None]
    assert drawn == [2, 7, 12, 17]  # the counter restarts after each: never on the 4th, 5th... in a row
    for s in steps:
        invalid_reply = s["t"] % 5 < 3
        assert (s["action"] is None) == invalid_reply  # the agent sent nothing for garbage
        assert s["info"]["played"] == (3 if (not invalid_reply or s["t"] in drawn) else 0)
        if s["t"] in drawn:
            assert s["info"]["random_action"] in ["LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE"]
            assert s["info"]["game_info"] == ("Game is running." if not s["done"] else "Game Over, You got 0 score.")
        elif invalid_reply:
            assert s["info"]["game_info"].startswith("Invalid action, which should be one of ['LEFTUP'")
    m = record["metrics"]
    assert (m["frames"], m["decisions"], m["invalid"], m["random_actions"], m["reason"]) == (30, 18, 12, 4, "max_rounds")
    assert m["valid_share"] == pytest.approx(6 / 18)  # the paper's wording: valid decisions / decisions
    assert m["valid_rate"] == pytest.approx(30 / (30 + 12))  # V-MAGE's code: frames / (frames + invalid)
    assert m["agent_unparsable"] == 12 and m["agent_decisions"] == 18


async def test_llm_agent_switches_to_each_flappybird_levels_own_prompt(tmp_path):
    model = ScriptedChatModel(vmage_replies("Observation: a gap", "climb", "UP"))
    h = Harness(quiet=True, episodes=2, run_dir=tmp_path)
    h.add("env", ENV, params={"game": "flappybird", "level": [1, 7]},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", "images": False},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", JUDGE, inputs={"step": {"from": "env/step", "policy": "block"}})
    h.local("model", model)
    async with h:
        await h.start()
        status, _ = await h.wait_finished(60)
        assert status == "completed"
        reasons = sorted(r["metrics"]["reason"] for r in h.kernel.book.records.values())
    assert reasons == ["the bird flew out of the top of the screen"] * 2
    first, last = model.systems[0], model.systems[-1]
    assert "gravity switched off" in first and "3. KEEP" in first and "NONE" not in first
    assert "two actions" in last and "2. NONE" in last and "KEEP" not in last


# --- launch files ----------------------------------------------------------------------------------
def launch_file(tmp_path: Path, name: str) -> str:
    """The bundled launch file, with the pack's short names spelt as module paths while this checkout's
    entry points are not installed yet (pip install -e . registers them)."""
    text = (ROOT / "launch" / f"{name}.yaml").read_text()
    if "vmage.env" in registered_nodes():
        return name
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["framebus.nodes"]
    text = re.sub(r"uses: (vmage\.env|judge\.vmage)\b", lambda m: f"uses: {table[m.group(1)]}", text)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def run_launch(tmp_path: Path, name: str, *args: str) -> tuple[dict, list[dict]]:
    out = tmp_path / f"run-{name}"
    result = launch("run", launch_file(tmp_path, name), *args, "--out", str(out), timeout=180)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return json.loads((out / "summary.json").read_text()), episodes


def test_launch_random_pong_ends_each_episode_at_the_first_miss(tmp_path):
    summary, episodes = run_launch(tmp_path, "vmage_pong_random", "--episodes", "9")
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 9
    metrics = [e["metrics"] for e in episodes]
    assert sorted((m["level"], m["round"]) for m in metrics) == [(lv, r) for lv in (1, 2, 3) for r in range(3)]
    assert all("missed the ball" in m["reason"] and m["valid_rate"] == 1.0 for m in metrics)
    levels = summary["vmage"]["levels"]
    assert set(levels) == {"pong/1", "pong/2", "pong/3"} and levels["pong/1"]["paper"]["random"] == 0.63
    assert sum(v["episodes"] for v in levels.values()) == 9


def test_launch_random_flappybird_plays_every_level_with_its_action_set(tmp_path):
    summary, episodes = run_launch(tmp_path, "vmage_flappy_random", "--episodes", "14")
    assert summary["episodes"]["completed"] == 14
    metrics = [e["metrics"] for e in episodes]
    assert sorted(m["level"] for m in metrics) == sorted(list(range(1, 8)) * 2)
    assert all(m["reason"].startswith("the bird") and m["frames"] > 0 for m in metrics)
    assert set(summary["vmage"]["levels"]) == {f"flappybird/{n}" for n in range(1, 8)}


def test_launch_scripted_beats_random_through_the_bus(tmp_path):
    scripted, _ = run_launch(tmp_path, "vmage_scripted", "--set", "env.game=flappybird", "--set", "env.level=[4, 7]",
                             "--set", "env.frame_cap=600", "--episodes", "4")
    rand, _ = run_launch(tmp_path, "vmage_flappy_random", "--set", "env.level=[4, 7]", "--episodes", "4")
    assert scripted["metrics"]["score"] > rand["metrics"]["score"] + 2
    assert set(scripted["vmage"]["levels"]) == {"flappybird/4", "flappybird/7"}


def test_every_vmage_launch_file_loads_with_the_papers_settings(monkeypatch, tmp_path):
    from kernel.launchfile import load, resolve_path

    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    names = ("vmage_pong_random", "vmage_flappy_random", "vmage_scripted", "vmage_pong_local", "vmage_pong_gpt4o")
    files = {name: load(resolve_path(launch_file(tmp_path, name))) for name in names}
    for name, lf in files.items():
        env = lf.node("env-0" if name == "vmage_scripted" else "env")  # scripted: replicas across games
        assert env.uses.endswith(("vmage.env", "VmageEnv")) and env.clock.mode == "lockstep"
    assert files["vmage_scripted"].node("env-1").params["game"] == "all" and files["vmage_scripted"].run.episodes == 33
    gpt = files["vmage_pong_gpt4o"]
    assert gpt.node("model").params["sampling"] == {"temperature": 0.8, "top_p": 0.9, "max_tokens": 2048}
    agent = gpt.node("agent").params
    # an unusable reply is sent as no action; the env plays a random one on the third in a row
    assert (agent["am"], agent["om"], agent["images"], agent["on_invalid"]) == (3, 4, True, "skip")
    assert "random_after" not in gpt.node("env").params  # the env's default: V-MAGE's 3
    assert gpt.node("env").params["frames"] is True and gpt.node("env").params["height"] == 360
    local = files["vmage_pong_local"]
    assert local.node("env").params["frames"] is False and local.node("agent").params["images"] is False
