"""gym.env: any Gymnasium env as an environment node (spaces to fields, action names and checks,
terminated/truncated, validate-time errors for bad ids), on CartPole, ALE Pong, MiniGrid and Crafter."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from kernel.sdk.plain import plain
from kernel.testing import Harness
from nodes.game.gym import spaces as sp
from nodes.game.gym.node import GymEnv
from nodes.game.gym.worlds import check_id
from tests.helpers import ROOT, launch

ENV = "nodes.game.gym.node:GymEnv"


# --- spaces to bus values -------------------------------------------------------------------------------
def test_fields_map_every_space_to_msgpack_friendly_values():
    space = spaces.Dict({"pos": spaces.Box(-1, 1, (3,), np.float32), "n": spaces.Discrete(4),
                         "mission": spaces.Text(40), "pair": spaces.Tuple((spaces.Discrete(2), spaces.MultiBinary(3))),
                         "image": spaces.Box(0, 255, (16, 16, 3), np.uint8), "text": spaces.Discrete(2)})
    value = space.sample()
    got = sp.fields(space, value)
    assert isinstance(got["pos"], list) and all(isinstance(v, float) for v in got["pos"])
    assert isinstance(got["n"], int) and isinstance(got["mission"], str)
    assert isinstance(got["pair"], list) and isinstance(got["pair"][0], int) and got["pair"][1] == value["pair"][1].tolist()
    assert isinstance(got["image"], np.ndarray) and got["image"].shape == (16, 16, 3)
    assert "obs_text" in got and "text" not in got  # a reserved key of the convention is renamed
    assert sp.fields(spaces.Discrete(3), np.int64(2)) == {"observation": 2}
    big = spaces.Box(0, 1, (40, 40), np.float32)
    assert isinstance(sp.fields(big, big.sample())["observation"], np.ndarray)
    assert plain({"a": np.float32(1.5), "b": (np.int8(2),), "c": object()})["a"] == 1.5
    # a step record's info (BrowserGym's) notes a big array instead of carrying it
    assert plain({1: np.zeros(300), "b": (np.int8(2),)}, big="note", small=64) == {"1": "array(300,)", "b": [2]}


def test_action_names_come_from_the_env_or_the_labels():
    import ale_py
    import minigrid  # noqa: F401

    gymnasium.register_envs(ale_py)
    pong = gymnasium.make("ALE/Pong-v5")
    assert sp.action_names(pong, pong.action_space, None) == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
    grid = gymnasium.make("MiniGrid-Empty-5x5-v0")
    assert sp.action_names(grid, grid.action_space, None) == ["left", "right", "forward", "pickup", "drop", "toggle", "done"]
    cart = gymnasium.make("CartPole-v1")
    assert sp.action_names(cart, cart.action_space, None) == ["0", "1"]
    assert sp.action_names(cart, cart.action_space, ["push_left", "push_right"]) == ["push_left", "push_right"]
    pend = gymnasium.make("Pendulum-v1")
    assert sp.action_names(pend, pend.action_space, None) is None
    assert sp.parse_action(pend.action_space, [1.5]).shape == (1,)
    for bad in ([5.0], "left", [1.0, 2.0], True):
        with pytest.raises(ValueError):
            sp.parse_action(pend.action_space, bad)


# --- ids refused before anything starts -------------------------------------------------------------------
def test_check_id_names_the_nearest_ids_the_namespace_and_the_package():
    assert check_id("CartPole-v1") == "CartPole-v1"
    assert check_id("ALE/Pong-v5") == "ALE/Pong-v5"
    with pytest.raises(ValueError, match="did you mean 'CartPole-v1'"):
        check_id("CartPole-v9")
    with pytest.raises(ValueError, match="namespace 'Nope' of 'Nope/Game-v0' is not registered"):
        check_id("Nope/Game-v0")
    with pytest.raises(ValueError, match="needs the package 'procgen', which is not installed: pip install procgen"):
        check_id("procgen-coinrun-v0")
    with pytest.raises(ValueError, match="module 'no_such_pack.envs'"):
        check_id("CartPole-v1", module="no_such_pack.envs")


def _validate(tmp_path, env_id: str) -> Any:
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\nnodes:\n  - id: env\n    uses: gym.env\n    params:\n      frames: false\n"
                    f"      id: {env_id}\n    inputs:\n      action: agent/action\n"
                    "  - id: agent\n    uses: agent.random\n    inputs:\n      obs: env/obs\n")
    return launch("validate", str(path), timeout=60)


async def test_env_calls_move_to_a_thread_and_back_as_the_median_of_the_window_says(monkeypatch):
    """The window's count of slow calls only skips the median when it cannot change the mode: the
    switches happen on the same call as with the median taken on every call."""
    from collections import deque

    import nodes.game.gym.node as gym_node
    import statistics

    node = GymEnv()
    node.id = "env"
    node.params = GymEnv.Params(id="CartPole-v1")
    node._offload, node._times, node._slow = False, deque(maxlen=32), 0
    slow = 3 * gym_node.OFFLOAD_S
    durations = [0.0] * 40 + [slow] * 40 + [0.0] * 40  # quick, then slow, then quick again
    stamps = iter(t for i, d in enumerate(durations) for t in (float(i), i + d))  # each call's start and end
    monkeypatch.setattr(gym_node.time, "perf_counter", lambda: next(stamps))
    modes, expected, window = [], [], deque(maxlen=32)
    offload = False
    for d in durations:
        await node._call(lambda: None)
        window.append(node._times[-1])  # the call's time as measured (d, up to rounding)
        if len(window) >= 8:
            offload = statistics.median(window) > gym_node.OFFLOAD_S
        modes.append(node._offload)
        expected.append(offload)
    assert modes == expected
    assert True in modes and modes[-1] is False  # it went to the thread and came back
    assert node._slow == sum(t > gym_node.OFFLOAD_S for t in node._times)


def test_launch_validate_refuses_a_wrong_id_at_its_line_with_the_package(tmp_path):
    result = _validate(tmp_path, "CartPole-v9")
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "bad.yaml:7:11: nodes.env.params.id" in out and "'CartPole-v1'" in out
    result = _validate(tmp_path, "procgen-bigfish-v0")
    out = result.stdout + result.stderr
    assert result.returncode == 2 and "bad.yaml:7:11" in out and "pip install procgen" in out
    result = _validate(tmp_path, "Foo/Bar-v0")
    assert result.returncode == 2 and "namespace 'Foo'" in result.stdout + result.stderr
    assert _validate(tmp_path, "ALE/Pong-v5").returncode == 0


# --- the node on the bus ----------------------------------------------------------------------------------
async def test_cartpole_node_fields_names_checks_and_terminated_apart():
    async with Harness(quiet=True, episodes=2) as h:
        h.add("env", ENV, params={"id": "CartPole-v1", "seed": 3, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        described = await probe.request("env", "describe", {})
        assert described["actions"] == ["0", "1"] and described["action_space"] == {"type": "Discrete", "n": 2, "start": 0}
        assert described["observation_space"]["type"] == "Box" and described["render_fps"] == 50
        reference = gymnasium.make("CartPole-v1")
        expected, _ = reference.reset(seed=3)
        obs = (await probe.recv("obs")).body
        assert obs["env"] == "CartPole-v1" and obs["actions"] == ["0", "1"] and obs["idle"] is None
        assert obs["observation"] == pytest.approx(expected.tolist()) and obs["text"].startswith("observation: ")
        await probe.publish("action", "left", step=0)  # not an action: nothing is applied
        step = (await probe.recv("step")).body
        assert step["valid"] is False and step["action"] is None and step["info"]["invalid"] == 1
        assert (await probe.recv("obs")).body["observation"] == obs["observation"]
        await probe.publish("action", None, step=1)  # no action and no idle action: the world waits
        step = (await probe.recv("step")).body
        assert step["valid"] and step["info"]["skipped"]
        t, total = 2, 0.0
        while True:  # always push right: the pole falls, terminated (not truncated)
            await probe.recv("obs")
            await probe.publish("action", "1", step=t)
            step = (await probe.recv("step")).body
            expected, reward, term, trunc, _ = reference.step(1)
            assert step["reward"] == reward and step["info"]["terminated"] == term and step["info"]["truncated"] == trunc
            total += reward
            t += 1
            if step["done"]:
                break
        assert term and not trunc and step["info"]["return"] == total
        await probe.recv("obs")
        await probe.publish("action", {"stop": True, "reason": "test"}, step=0)
        await h.wait_finished(20)
        metrics = [r["metrics"] for r in h.kernel.book.records.values()]
        assert metrics[0]["return"] == total and metrics[0]["length"] == t - 2 and metrics[0]["terminated"] == 1.0
        assert metrics[0]["truncated"] == 0.0 and metrics[0]["invalid"] == 1 and metrics[1]["stopped"] is True


async def test_pong_node_names_frames_through_shared_memory_and_idle_on_a_realtime_clock():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"id": "ALE/Pong-v5", "seed": 0, "frames": True, "frame_size": [80, 105],
                                  "max_steps": 40, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "realtime", "fps": 60})
        probe = h.probe(inputs={"obs": {"from": "env/obs", "policy": "fifo", "size": 64},
                                "step": {"from": "env/step", "policy": "fifo", "size": 64}}, outputs=["action"])
        await h.start()
        obs = (await probe.recv("obs")).body
        assert obs["actions"][:2] == ["NOOP", "FIRE"] and obs["idle"] == "NOOP"
        assert obs["frame"].shape == (105, 80, 3) and obs["observation"].shape == (210, 160, 3)
        await probe.publish("action", "FIRE", step=obs["t"])
        steps = []
        while not (steps and steps[-1]["done"]):
            steps.append((await probe.recv("step")).body)
        # the agent sent one action; every other frame applied the idle action (None -> NOOP)
        assert len(steps) == 40 and steps[-1]["info"]["truncated"] is True
        assert all(s["valid"] for s in steps) and sum(s["action"] == "FIRE" for s in steps) >= 1
        await h.wait_finished(20)
        (record,) = h.kernel.book.records.values()
        assert record["metrics"]["length"] == 40 and record["metrics"]["truncated"] == 1.0


async def test_minigrid_mission_is_the_goal_and_the_view_a_field():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"id": "BabyAI-GoToRedBall-v0", "seed": 1, "max_steps": 3, "judge": False,
                                  "image_size": [14, 14]},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        obs = (await probe.recv("obs")).body
        assert obs["goal"].startswith("go to the red ball") and obs["mission"] == obs["goal"]
        assert obs["image"].shape == (14, 14, 3) and isinstance(obs["direction"], int)
        assert "forward" in obs["actions"] and "image: array 7x7x3 uint8" in obs["text"]
        for t in range(3):
            await probe.publish("action", "forward", step=t)
            step = (await probe.recv("step")).body
            assert step["valid"] and step["action"] == "forward"
            if not step["done"]:
                await probe.recv("obs")
        await h.wait_finished(20)


# --- launch files --------------------------------------------------------------------------------------------
def run_launch(tmp_path, name: str, *args: str, timeout: float = 240) -> dict[str, Any]:
    out = tmp_path / name
    result = launch("run", f"{name}.yaml", *args, "--out", str(out), timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "summary.json").read_text())


def test_cartpole_random_and_scripted_through_the_bus(tmp_path):
    summary = run_launch(tmp_path, "cartpole_random")
    assert summary["episodes"]["completed"] == 10 and 8 < summary["metrics"]["return"] < 60
    assert summary["metrics"]["terminated"] == 1.0
    summary = run_launch(tmp_path, "cartpole_scripted", "--episodes", "1")
    assert summary["metrics"]["return"] == 500.0 and summary["metrics"]["truncated"] == 1.0
    assert summary["metrics"]["terminated"] == 0.0


@pytest.mark.timeout(400)
def test_pong_random_and_scripted_through_the_bus(tmp_path):
    summary = run_launch(tmp_path, "atari_pong_random", "--episodes", "1", "--set", "env.max_steps=300", "--record")
    assert summary["episodes"]["completed"] == 1 and summary["metrics"]["length"] == 300
    assert (tmp_path / "atari_pong_random" / "recording.mcap").stat().st_size > 100_000  # the frames
    summary = run_launch(tmp_path, "atari_pong_scripted", "--set", "env.max_steps=1200")
    assert summary["metrics"]["length"] == 1200 or summary["metrics"]["terminated"] == 1.0
    assert summary["metrics"]["return"] > -21  # a random player scores next to nothing; the tracker scores


@pytest.mark.timeout(300)
def test_minigrid_and_crafter_random(tmp_path):
    summary = run_launch(tmp_path, "minigrid_random", "--episodes", "3")
    assert summary["episodes"]["completed"] == 3 and summary["metrics"]["length"] > 0
    summary = run_launch(tmp_path, "crafter_random", "--episodes", "1", "--set", "env.max_steps=60")
    assert summary["episodes"]["completed"] == 1 and summary["metrics"]["length"] == 60


@pytest.mark.timeout(240)
def test_highway_random_runs_on_the_venvs_pygame(tmp_path):
    """highway-env asks for pygame-ce in its metadata; setup.sh installs it with --no-deps, and this is
    what says it runs on plain pygame: a few steps of highway_random.yaml, frames drawn."""
    pytest.importorskip("highway_env", reason="highway-env is not installed (setup.sh installs it: "
                        "pip install --no-deps 'highway-env>=1.12,<1.13' pandas)")
    summary = run_launch(tmp_path, "highway_random", "--episodes", "1", "--set", "env.max_steps=5")
    assert summary["episodes"]["completed"] == 1 and summary["metrics"]["length"] == 5


WORLD_FILES = ["cartpole_random", "cartpole_scripted", "atari_pong_random", "atari_breakout_random",
               "atari_pong_scripted", "atari_pong_local", "minigrid_random", "minigrid_local", "crafter_random",
               "crafter_local", "highway_random", "highway_local"]


@pytest.mark.parametrize("name", WORLD_FILES)
def test_every_world_launch_file_validates(name: str) -> None:
    if name.startswith("highway") and importlib.util.find_spec("highway_env") is None:
        pytest.skip("highway-env is not installed (setup.sh installs it)")
    result = launch("validate", f"{name}.yaml", timeout=60)
    assert result.returncode == 0, name + result.stdout + result.stderr
    assert (ROOT / "nodes" / "agent" / "templates" / "gym.yaml").exists()


def test_the_node_class_is_what_gym_env_names():
    from kernel.sdk.registry import load_node_class

    assert load_node_class("gym.env") is GymEnv


def test_bench_gym_prints_one_object_with_the_bus_and_raw_numbers_side_by_side():
    import subprocess
    import sys

    from tests.helpers import launch_env

    result = subprocess.run([sys.executable, str(ROOT / "bench" / "gym.py"), "--json", "--steps", "200", "--only", "cartpole",
                             "--rounds", "2"],
                            env=launch_env(), capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("cartpole_in_process_steps_per_s", "cartpole_node_steps_per_s", "cartpole_bus_added_us_p50",
                "cartpole_raw_rtt_us_p50", "cartpole_bus_added_vs_raw_rtt_ratio", "graphenv_step_us_p50",
                "graphenv_vs_raw_rtt_ratio", "cartpole_loop_rtt_us_p50", "cartpole_bus_added_vs_loop_rtt_ratio",
                "graphenv_vs_loop_rtt_ratio", "cartpole_loop_reader_rtt_us_p50",
                "cartpole_bus_added_vs_loop_reader_rtt_ratio"):
        assert out[key] > 0, key
    assert out["cartpole_node_steps"] > 150 and out["rounds"] == 2
    assert len(out["graphenv_step_us_p50_rounds"]) == len(out["cartpole_loop_reader_rtt_us_p50_rounds"]) == 2
