"""V-MAGE's history layout (spec §3) on a real episode: the env, the LLM agent and the judge as
processes, a scripted model node in the test's process, and a probe reading the env's observations,
so each past decision's picture and info line is checked against what the env actually sent."""

from __future__ import annotations

import numpy as np

from kernel.testing import Harness
from tests.nodes_extra import ScriptedChatModel

ENV = "nodes.game.vmage.node:VmageEnv"
JUDGE = "nodes.judge.vmage:VmageJudge"
PONG = ["LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE"]
REPLIES = [  # one a decision, in cycle; the second is invalid (words after the action, as V-MAGE counts it)
    "Observation: the ball flies left\nReasoning: nothing to do yet\nAction: NONE",
    "Observation: the ball rises\nReasoning: meet it\nAction: LEFTUP (to meet the ball)",
    "Observation: the ball is high\nReasoning: the left paddle must climb\nAction: LEFTUP",
    "**Observation:** the ball falls\n**Reasoning:** follow it\nwith the left paddle\n**Action:** LEFTDOWN",
]
PARSED = [
    "{'observation': 'the ball flies left', 'reasoning': 'nothing to do yet', 'action': 'NONE'}",
    "{'observation': 'the ball rises', 'reasoning': 'meet it', 'action': 'LEFTUP (to meet the ball)'}",
    "{'observation': 'the ball is high', 'reasoning': 'the left paddle must climb', 'action': 'LEFTUP'}",
    "{'observation': 'the ball falls', 'reasoning': 'follow it with the left paddle', 'action': 'LEFTDOWN'}",
]


async def _play(tmp_path, env_params: dict, agent_params: dict, replies: list[str]):
    """One lockstep episode through real processes; the model's calls and every observation sent."""
    model = ScriptedChatModel(replies)
    h = Harness(quiet=True, episodes=1, run_dir=tmp_path)
    h.add("env", ENV, params={"frames": True, "height": 120, **env_params},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"model": "model", **agent_params},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", JUDGE, inputs={"step": {"from": "env/step", "policy": "block"}})
    probe = h.probe(inputs={"obs": {"from": "env/obs", "policy": "block", "size": 256},
                            "step": {"from": "env/step", "policy": "block", "size": 256}})
    h.local("model", model)
    observations = []
    async with h:
        await h.start()
        while True:
            observations.append((await probe.recv("obs")).body)
            if (await probe.recv("step")).body["done"]:
                break
        status, _ = await h.wait_finished(60)
        assert status == "completed"
    return model.calls, observations


def _kinds(content: list[dict]) -> str:
    return "".join("I" if part["type"] == "image" else "T" for part in content)


async def test_each_call_carries_the_last_three_decisions_then_the_current_screen(tmp_path):
    calls, observations = await _play(tmp_path, {"game": "pong", "level": 1, "max_rounds": 30}, {}, REPLIES)
    assert len(calls) == len(observations) >= 6
    for t, call in enumerate(calls):
        system, user = call  # the rules, then one user message: no past turn is replayed as a chat
        assert system["role"] == "system" and user["role"] == "user"
        past = min(t, 3)
        assert _kinds(user["content"]) == ("T" if past else "") + "IT" * past + "IT"  # 4 images from t = 3 on
    t = 5  # past decisions t = 2, 3, 4
    content = calls[t][1]["content"]
    assert content[0]["text"].startswith("Below are the screens of your most recent decisions, oldest first")
    for i, past_t in enumerate((2, 3, 4)):
        picture, line = content[1 + 2 * i], content[2 + 2 * i]["text"]
        assert np.array_equal(np.asarray(picture["image"]), observations[past_t]["frame"])  # its own screenshot
        info = observations[past_t + 1]["info"]  # what the env said after that decision's action
        assert line == (f"The screen above was {3 - i} steps before the current one. Your reply to it, read as "
                        f"fields, was {PARSED[past_t % 4]}. Once that action had run, the game reported: \"{info}\"")
    infos = [observations[past_t + 1]["info"] for past_t in (2, 3, 4)]
    assert infos == ["Game is running.", "Game is running.", "Game is running."]
    assert np.array_equal(np.asarray(content[7]["image"]), observations[t]["frame"])  # the current screen last
    assert content[8]["text"] == "The current step of the game:\n(the screenshot above)\nChoose your action."
    # the invalid reply of t = 1 and t = 5: its info line is the env's complaint, and the game did not move
    line = calls[4][1]["content"][2]["text"]  # t = 4 looks back at t = 1 first
    assert PARSED[1] in line and f"reported: \"Invalid action, which should be one of {PONG}\"" in line
    assert observations[2]["game_frame"] == observations[1]["game_frame"]


async def test_a_no_history_level_sends_the_current_screen_alone(tmp_path):
    race = ["Description: the cup is right\nReasoning: drive to it\nAction: RIGHT"]
    calls, observations = await _play(tmp_path, {"game": "race", "level": 7}, {}, race)
    assert observations[0]["template"] == "vmage_race_map_no_history" and len(calls) >= 2
    for call in calls:
        assert [m["role"] for m in call] == ["system", "user"] and _kinds(call[1]["content"]) == "IT"
    assert calls[1][1]["content"][1]["text"] == "The current step of the game:\n(the screenshot above)\nChoose your action."
