"""pettingzoo.env: PettingZoo worlds (Parallel and AEC) as one node with an input and an output per
PettingZoo agent, wired to agent nodes; turn order, legal moves from the action mask, leaving agents."""

from __future__ import annotations

import json

import pytest
from pettingzoo.classic import tictactoe_v3

from kernel.sdk.testing import Harness, Probe
from nodes.game.gym.pz import PettingZooParams
from tests.helpers import launch

ENV = "nodes.game.gym.pz:PettingZooEnv"


def test_params_refuse_a_module_that_is_missing_or_not_an_env():
    assert PettingZooParams(env="pettingzoo.classic.rps_v2").env == "pettingzoo.classic.rps_v2"
    with pytest.raises(ValueError, match="no module 'pettingzoo.classic.nope_v1'"):
        PettingZooParams(env="pettingzoo.classic.nope_v1")
    with pytest.raises(ValueError, match="pip install pettingzoo\\[butterfly\\]"):
        PettingZooParams(env="pettingzoo.butterfly.pistonball_v6")
    with pytest.raises(ValueError, match="has no parallel_env"):
        PettingZooParams(env="pettingzoo.classic.tictactoe_v3", api="parallel")


async def test_aec_turn_order_legal_moves_and_the_same_game_as_pettingzoo():
    moves = [0, 3, 1, 4, 2]  # player_1 takes a line on its third move; replayed against PettingZoo itself
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"env": "pettingzoo.classic.tictactoe_v3", "seed": 0, "judge": False},
              inputs={"action_player_1": "p1/action", "action_player_2": "p2/action"}, clock={"mode": "lockstep"})
        p1 = h.local("p1", Probe(["obs"], ["action"]), inputs={"obs": "env/obs_player_1"})
        p2 = h.local("p2", Probe(["obs"], ["action"]), inputs={"obs": "env/obs_player_2"})
        step_probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 64}}, outputs=[])
        await h.start()
        reference = tictactoe_v3.env()
        reference.reset(seed=0)
        for t, move in enumerate(moves):
            agent = reference.agent_selection
            probe = p1 if agent == "player_1" else p2
            obs = (await probe.recv("obs")).body
            mask = reference.last()[0]["action_mask"]
            assert obs["agent"] == agent and obs["t"] == t
            assert obs["actions"] == [str(i) for i in range(9) if mask[i]]  # only the legal moves
            await probe.publish("action", str(move), step=t)
            step = (await step_probe.recv("step")).body
            reference.step(move)
            assert step["action"] == {agent: str(move)} and step["rewards"] == {a: float(r) for a, r in reference.rewards.items()}
            if step["done"]:
                break
        assert step["done"] and set(step["rewards"].values()) == {1.0, -1.0}
        await h.wait_finished(20)
        (record,) = h.kernel.book.records.values()
        assert record["metrics"]["return_player_1"] == -record["metrics"]["return_player_2"] != 0


def run_launch(tmp_path, name: str, *args: str) -> dict:
    out = tmp_path / name
    result = launch("run", f"{name}.yaml", *args, "--out", str(out), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "summary.json").read_text())


def test_parallel_and_aec_worlds_with_random_agents_through_the_bus(tmp_path):
    summary = run_launch(tmp_path, "rps_random")
    assert summary["episodes"]["completed"] == 5 and summary["metrics"]["length"] == 20
    assert summary["metrics"]["return_player_0"] == pytest.approx(-summary["metrics"]["return_player_1"])
    summary = run_launch(tmp_path, "tictactoe_random", "--episodes", "6")
    assert summary["episodes"]["completed"] == 6 and 5 <= summary["metrics"]["length"] <= 9
    assert summary["metrics"]["invalid"] == 0
