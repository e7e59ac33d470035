"""Agents on the bus: baselines swapped in by one line of a launch file, the LLM agent's memory,
regeneration and invalid-action policies, and the human player (window and terminal)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from kernel.sdk.node import Node, service
from kernel.testing import Harness
from nodes.agent.human import HumanPlayer
from nodes.agent.records import read_records
from tests.helpers import ROOT, launch

HELLO = (ROOT / "launch" / "hello.yaml").read_text()


def swapped(tmp_path: Path, old: str, new: str) -> Path:
    """hello.yaml with exactly one line changed, as a user would edit it."""
    assert HELLO.count(old) == 1
    path = tmp_path / "swapped.yaml"
    path.write_text(HELLO.replace(old, new))
    assert sum(a != b for a, b in zip(HELLO.splitlines(), path.read_text().splitlines())) == 1
    return path


def run_and_read(path: Path, out: Path, *args: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = launch("run", str(path), "--out", str(out), *args, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return summary, episodes


@pytest.mark.parametrize("agent, check", [
    ("agent.scripted", lambda eps: all(e["metrics"]["success"] == 1.0 and e["metrics"]["score"] == 100.0
                                       for e in eps)),
    ("agent.idle", lambda eps: all(e["metrics"]["success"] == 0.0 for e in eps)),
    ("agent.random", lambda eps: len({e["metrics"]["steps"] for e in eps}) > 1),
])
def test_swapping_the_agent_is_one_line(tmp_path, agent, check):
    path = swapped(tmp_path, "uses: hello.agent", f"uses: {agent}")
    summary, episodes = run_and_read(path, tmp_path / "run")
    assert summary["episodes"]["completed"] == 5 and len(episodes) == 5
    assert check([e for e in episodes if e["status"] == "completed"])


def test_random_agent_is_reproducible_from_the_seed(tmp_path):
    path = swapped(tmp_path, "uses: hello.agent", "uses: agent.random")
    steps = []
    for i in range(2):
        _, episodes = run_and_read(path, tmp_path / f"run{i}", "--set", "run.seed=7")
        steps.append(sorted((e["episode_id"], e["metrics"]["steps"]) for e in episodes))
    assert steps[0] == steps[1]


def test_replay_agent_plays_a_recording_then_stops(tmp_path):
    path = swapped(tmp_path, "uses: hello.agent", "uses: agent.replay")
    summary, episodes = run_and_read(path, tmp_path / "run", "--set", "agent.actions=[stay, stay, stay]",
                                     "--episodes", "2")
    # three recorded moves, then the agent stops each episode: four steps, never reaching the target
    assert [e["metrics"]["steps"] for e in episodes] == [4, 4]
    assert all(e["metrics"]["success"] == 0.0 for e in episodes)


class CannedModel(Node):
    """A model node whose replies the test chooses, so the agent's own logic (memory, regenerate,
    invalid-action policies, IFE) can be checked exactly. The real model is tested end to end in
    test_llm_agent.py; this one only stands in for its answers."""

    inputs = ()
    outputs = ()

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    @service("chat")
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        text = self.replies.pop(0) if self.replies else "nothing useful"
        return {"text": text, "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "latency_s": 0.01,
                "cost_usd": 0.0}


async def _play(tmp_path: Path, replies: list[str], agent_params: dict[str, Any], episodes: int = 1,
                env_params: dict[str, Any] | None = None) -> tuple[Harness, CannedModel, list[dict[str, Any]]]:
    model = CannedModel(replies)
    h = Harness(quiet=True, episodes=episodes, run_dir=tmp_path)
    h.add("env", "nodes.game.hello:CountdownEnv", params={"length": 8, "max_steps": 6, "target": 7, **(env_params or {})},
          inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
    h.add("agent", "nodes.agent.llm:LLMAgent", params={"template": "hello", **agent_params},
          inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
    h.add("judge", "nodes.judge.hello:HelloJudge", inputs={"step": "env/step"})
    h.local("model", model)
    async with h:
        await h.start()
        await h.wait_finished(60)
    return h, model, read_records(tmp_path / "steps" / "agent.jsonl")


async def test_regenerate_is_bounded_and_invalid_replies_are_skipped(tmp_path):
    # the target is out of reach (7 in 6 steps); replies are read by the hello template's forgiving parser
    h, model, records = await _play(tmp_path, ["right", "uhh", "hmm", "errr", "right", "left", "stay", "stay"],
                                    {"regenerate": 2, "on_invalid": "skip"})
    assert [r["sent"] for r in records[:3]] == ["right", None, "right"]
    assert records[1]["attempts"] == 3 and records[1]["valid"] is False  # one call and two regenerations
    assert records[2]["attempts"] == 1
    regen = model.requests[3]["messages"]  # the second regeneration sees both failed replies
    assert [m["content"] for m in regen[-4:] if m["role"] == "assistant"] == ["uhh", "hmm"]
    metrics = next(iter(h.kernel.book.records.values()))["metrics"]
    assert metrics["agent_unparsable"] == 1 and metrics["agent_regenerations"] == 2
    assert all(r["usage"]["prompt_tokens"] > 0 and "prompt" in r for r in records)


async def test_invalid_policy_end_stops_the_episode_and_flags_ife(tmp_path):
    h, _, records = await _play(tmp_path, [], {"regenerate": 0, "on_invalid": "end", "invalid_after": 2})
    assert [r["sent"] for r in records][:1] == [None]
    assert records[1]["sent"]["stop"] is True and len(records) == 2
    metrics = next(iter(h.kernel.book.records.values()))["metrics"]
    assert metrics["agent_ife"] == 1 and metrics["steps"] == 2 and metrics["success"] == 0.0


async def test_invalid_policy_random_after_k(tmp_path):
    _, _, records = await _play(tmp_path, [], {"regenerate": 0, "on_invalid": "random", "invalid_after": 2})
    sent = [r["sent"] for r in records]
    assert sent[0] is None and all(s in ("left", "right", "stay") for s in sent[1:])


async def test_invalid_policy_idle(tmp_path):
    _, _, records = await _play(tmp_path, [], {"regenerate": 0, "on_invalid": "idle"})
    assert {r["sent"] for r in records} == {"stay"}


async def test_global_planning_makes_one_call_and_plays_the_plan(tmp_path):
    h, model, records = await _play(tmp_path, ["right, right, right, left"], {"planning": "global"})
    assert len(model.requests) == 1
    assert [r["sent"] for r in records][:4] == ["right", "right", "right", "left"]
    assert records[4]["sent"]["stop"] is True  # the plan ran out: the agent ends the episode
    system = model.requests[0]["messages"][0]["content"]
    assert "list of moves" in system  # the template's global output format


async def test_memory_window_across_steps_and_reset_per_episode(tmp_path):
    replies = ["right"] * 12
    _, model, _ = await _play(tmp_path, replies, {"am": 1, "om": 1}, episodes=2, env_params={"max_steps": 3})
    first, second, third = (r["messages"] for r in model.requests[:3])
    assert len(first) == 2 and len(second) == 4 and len(third) == 4  # system + (one past exchange) + now
    assert "no longer shown" in third[1]["content"]  # the old observation was replaced, its reply kept
    assert third[2] == {"role": "assistant", "content": "right"}
    new_episode = next(r["messages"] for r in model.requests[3:] if len(r["messages"]) == 2)
    assert new_episode[1]["content"].startswith("You are at 0")


async def test_human_player_window_maps_keys_to_actions(tmp_path):
    import pygame

    player = HumanPlayer()
    async with Harness(quiet=True, episodes=1, run_dir=tmp_path) as h:
        h.add("env", "nodes.game.hello:CountdownEnv", params={"length": 8, "max_steps": 10, "target": 7},
              inputs={"action": "human/action"}, clock={"mode": "lockstep"})
        h.add("judge", "nodes.judge.hello:HelloJudge", inputs={"step": "env/step"})
        h.local("human", player, params={"mode": "window"}, inputs={"obs": "env/obs"})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo"}})
        await h.start()
        for key in (pygame.K_LEFT, pygame.K_1, pygame.K_a, pygame.K_RIGHT, pygame.K_SPACE, pygame.K_ESCAPE):
            await asyncio.sleep(0.3)
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="", scancode=0))
        await h.wait_finished(30)
        steps = [(await asyncio.wait_for(probe.recv("step"), 10)).body for _ in range(5)]
    # an arrow, "1" (the first action), "a" (bound to nothing here: the options are not lettered, so it
    # is ignored), the other arrow, space (the idle action), Escape (give up)
    assert [s["action"] for s in steps] == ["left", "left", "right", "stay", None]
    assert steps[-1]["info"]["stopped"] and steps[-1]["done"]


async def test_human_player_terminal_reads_typed_commands(tmp_path):
    fifo = tmp_path / "commands"
    os.mkfifo(fifo)

    def type_commands() -> None:
        with open(fifo, "w") as fh:
            for line in ("jump\n", "1\n", "left\n", "idle\n", "quit\n"):
                fh.write(line)
                fh.flush()

    writer = threading.Thread(target=type_commands, daemon=True)
    writer.start()
    async with Harness(quiet=True, episodes=1, run_dir=tmp_path) as h:
        h.add("env", "nodes.game.hello:CountdownEnv", params={"length": 8, "max_steps": 10, "target": 7},
              inputs={"action": "human/action"}, clock={"mode": "lockstep"})
        h.add("judge", "nodes.judge.hello:HelloJudge", inputs={"step": "env/step"})
        h.add("human", HumanPlayer, params={"mode": "terminal", "input": str(fifo)}, inputs={"obs": "env/obs"})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo"}})
        await h.start()
        await h.wait_finished(30)
        steps = [(await asyncio.wait_for(probe.recv("step"), 10)).body for _ in range(4)]
    writer.join(5)
    # "jump" is refused and asked again; then "1" (left), left, idle (stay), and quit ends the episode
    assert [s["action"] for s in steps] == ["left", "left", "stay", None]
    assert steps[-1]["info"]["stopped"]
