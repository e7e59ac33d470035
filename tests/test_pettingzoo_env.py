"""pettingzoo.env: PettingZoo worlds (Parallel and AEC) as one node with an input and an output per
PettingZoo agent, wired to agent nodes; turn order, legal moves from the action mask, leaving agents."""

from __future__ import annotations

import importlib.util
import json
import time

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.classic import tictactoe_v3

from kernel.testing import Harness, Probe
from nodes.game.gym.moves import Moves
from nodes.game.gym.pz import PettingZooParams
from tests.helpers import launch

ENV = "nodes.game.gym.pz:PettingZooEnv"


def test_params_refuse_a_module_that_is_missing_or_not_an_env():
    assert PettingZooParams(env="pettingzoo.classic.rps_v2").env == "pettingzoo.classic.rps_v2"
    with pytest.raises(ValueError, match="no module 'pettingzoo.classic.nope_v1'"):
        PettingZooParams(env="pettingzoo.classic.nope_v1")
    if importlib.util.find_spec("pymunk") is None:
        with pytest.raises(ValueError, match="needs the package 'pymunk', which is not installed: pip install pymunk"):
            PettingZooParams(env="pettingzoo.butterfly.pistonball_v6")
    if importlib.util.find_spec("Box2D") is None:
        with pytest.raises(ValueError, match="needs the package 'box2d', which is not installed: pip install box2d"):
            PettingZooParams(env="pettingzoo.sisl.multiwalker_v9")
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


# --- actions other than Discrete names, and the realtime clock -----------------------------------------------
def test_moves_check_labels_idle_and_vector_actions_naming_the_param_and_the_agent():
    box = spaces.Box(-1.0, 1.0, (2,), np.float32)
    moves = Moves.make("w", "a", box, None, None, realtime=True)  # a vector space idles at zero
    assert moves.names is None and moves.idle.tolist() == [0.0, 0.0] and moves.legal(None) == []
    value, wrong = moves.parse([0.5, -1.0], [])
    assert not wrong and value.dtype == np.float32 and value.tolist() == [0.5, -1.0]
    for bad in ([2.0, 0.0], [0.5], "UP", True, {"x": 1}):
        assert moves.parse(bad, []) == (None, True), bad
    assert moves.parse(None, []) == (None, False) and moves.fallback(np.random.default_rng(0), []) is moves.idle
    shifted = Moves.make("w", "a", spaces.Box(0.5, 1.0, (1,), np.float32), None, None, realtime=False)
    assert shifted.idle.tolist() == [0.5]  # zero clipped into the space
    multi = Moves.make("w", "a", spaces.MultiDiscrete([3, 2], start=[1, 0]), None, {"a": [2, 1]}, realtime=False)
    assert multi.idle.tolist() == [2, 1] and multi.parse([3, 0], [])[0].tolist() == [3, 0]
    assert multi.parse([0, 0], []) == (None, True)  # below the start
    named = Moves.make("w", "a", spaces.Discrete(3), ["STAY", "UP", "DOWN"], "STAY", realtime=True)
    assert named.idle == 0 and named.idle_body == "STAY" and named.legal([0, 1, 1]) == ["UP", "DOWN"]
    assert named.parse("UP", ["UP", "DOWN"]) == (1, False) and named.parse("STAY", ["UP"]) == (None, True)
    errors = [(dict(space=spaces.Discrete(3), labels=["a", "b"], idle=None, realtime=False),
               "params.labels: 2 names given, but w's agent a has the action space Discrete(3)"),
              (dict(space=box, labels=["a"], idle=None, realtime=False), "params.labels: 1 names given"),
              (dict(space=spaces.Discrete(3), labels=None, idle="9", realtime=False),
               "params.idle: '9' is not an action of a (actions: ['0', '1', '2'])"),
              (dict(space=spaces.Discrete(3), labels=None, idle=None, realtime=True),
               "params.idle: a realtime clock applies each agent's idle action"),
              (dict(space=spaces.Discrete(3), labels=None, idle={"b": "0"}, realtime=False),
               "params.idle: no idle action for agent a"),
              (dict(space=box, labels=None, idle=[3.0, 0.0], realtime=False),
               "params.idle: [3.0, 0.0] is not an action of a, whose action space is Box")]
    for kwargs, message in errors:
        with pytest.raises(ValueError) as err:
            Moves.make("w", "a", **kwargs)
        assert message in str(err.value), (message, str(err.value))


async def test_realtime_clock_steps_cooperative_pong_every_frame_with_the_idle_action():
    """PettingZoo's own butterfly Pong (pygame only): the world moves at the clock's rate whether or not
    the paddles answer; a paddle that has not answered holds still (its idle action), one that has
    keeps its newest action."""
    async with Harness(quiet=True, episodes=2) as h:
        h.add("env", ENV, params={"env": "pettingzoo.butterfly.cooperative_pong_v6", "seed": 0, "judge": False,
                                  "labels": ["STAY", "UP", "DOWN"], "idle": "STAY", "max_steps": 12},
              inputs={"action_paddle_0": "p0/action", "action_paddle_1": "p1/action"},
              clock={"mode": "realtime", "fps": 30})
        p0 = h.local("p0", Probe(["obs"], ["action"]), inputs={"obs": {"from": "env/obs_paddle_0", "policy": "latest"}})
        h.local("p1", Probe(["obs"], ["action"]), inputs={"obs": {"from": "env/obs_paddle_1", "policy": "latest"}})
        steps = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 64}}, outputs=[])
        await h.start()
        described = await steps.request("env", "describe", {})
        assert described["render_fps"] == 15 and described["idle"] == {"paddle_0": "STAY", "paddle_1": "STAY"}
        obs = (await p0.recv("obs")).body
        assert obs["actions"] == ["STAY", "UP", "DOWN"] and obs["idle"] == "STAY" and obs["observation"].ndim == 3
        start = time.monotonic()
        await p0.publish("action", "UP", step=obs["t"])
        records = []
        while not (records and records[-1]["done"]):
            records.append((await steps.recv("step")).body)
        took = time.monotonic() - start
        assert len(records) == 12 and records[-1]["info"]["truncated"] is True and took >= 10 / 30
        assert all(r["action"]["paddle_1"] is None and r["valid"] for r in records)  # never answered: idle
        ups = [r["action"]["paddle_0"] for r in records]
        assert "UP" in ups and ups[ups.index("UP"):] == ["UP"] * (12 - ups.index("UP"))  # the newest action holds
        await p0.publish("action", {"stop": True, "reason": "enough"})
        await h.wait_finished(30)
        first, second = h.kernel.book.records.values()
        assert first["metrics"]["length"] == 12 and second["metrics"]["stopped"] is True


@pytest.mark.skipif(importlib.util.find_spec("pymunk") is None,
                    reason="pistonball needs pymunk (the worlds extra installs it; pip install pymunk)")
async def test_box_actions_on_pistonball_are_lists_of_numbers_checked_against_the_space():
    async with Harness(quiet=True, episodes=1) as h:
        # 4 pistons: with 3 the ball leaves the screen at the first step
        h.add("env", ENV, params={"env": "pettingzoo.butterfly.pistonball_v6", "seed": 0, "judge": False,
                                  "kwargs": {"n_pistons": 4, "continuous": True}, "max_steps": 3},
              inputs={f"action_piston_{i}": f"p{i}/action" for i in range(4)}, clock={"mode": "lockstep"})
        probes = [h.local(f"p{i}", Probe(["obs"], ["action"]), inputs={"obs": f"env/obs_piston_{i}"}) for i in range(4)]
        steps = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 64}}, outputs=[])
        await h.start()
        described = await steps.request("env", "describe", {})
        assert described["action_spaces"]["piston_0"] == {"type": "Box", "shape": [1], "dtype": "float32",
                                                          "low": [-1.0], "high": [1.0]}
        sent = [[[0.5], [2.0], "UP", [0]], [[-1.0], [0.0], None, [0]], [[1.0], [1.0], [1.0], [0]]]  # step x piston
        for t, bodies in enumerate(sent):
            for probe, body in zip(probes, bodies, strict=True):
                obs = (await probe.recv("obs")).body
                assert obs["actions"] == [] and obs["idle"] is None and obs["action_space"]["type"] == "Box"
                await probe.publish("action", body, step=t)
            record = (await steps.recv("step")).body
            expected_valid = t != 0  # [2.0] is outside [-1, 1] and "UP" is no vector: both invalid, idle applied
            assert record["valid"] is expected_valid, record
            assert record["action"]["piston_0"] == bodies[0] and record["action"]["piston_1"] == (
                None if t == 0 else bodies[1])
        assert record["done"] and record["info"]["invalid"] == 2
        await h.wait_finished(30)
