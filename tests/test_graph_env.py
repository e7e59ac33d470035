"""kernel.gym.GraphEnv: a bundled graph as a Gymnasium env with its agent node played by the caller,
checked by Gymnasium's own env checker on several packs."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from kernel.gym import GraphEnv, GraphError
from tests.helpers import ROOT

GRAPHS = ["hello.yaml", "sokoban_random.yaml", "kidgym_random.yaml", "cartpole_random.yaml",
          pytest.param("football_random.yaml", marks=pytest.mark.skipif(importlib.util.find_spec("gfootball") is None,
                                                                        reason="gfootball is not installed"))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("launch_file", GRAPHS)
def test_gymnasium_env_checker_passes_on_bundled_graphs(launch_file):
    env = GraphEnv(launch_file, agent="agent")
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.timeout(300)
def test_a_gym_env_graph_offers_the_envs_own_spaces_and_typed_observations():
    """No per-game code: gym.env declares CartPole's spaces, GraphEnv offers them, and the
    observations are CartPole's float32 vectors (episode s resets CartPole with seed 0 + s)."""
    import gymnasium
    import numpy as np

    reference = gymnasium.make("CartPole-v1")
    env = GraphEnv("cartpole_random.yaml", agent="agent")
    try:
        assert env.observation_space == reference.observation_space and env.action_space == reference.action_space
        assert isinstance(env.observation_space, gymnasium.spaces.Box) and env.actions == ["0", "1"]
        obs, info = env.reset(seed=3)
        expected, _ = reference.reset(seed=3)
        assert obs.dtype == np.float32 and np.array_equal(obs, expected)
        assert info["obs"]["observation"] == expected.tolist()
        obs, reward, terminated, truncated, info = env.step(1)
        expected, *_ = reference.step(1)
        assert np.array_equal(obs, expected) and info["action"] == "1" and reward == 1.0
        check_env(env, skip_render_check=True)
    finally:
        env.close()
    pendulum = gymnasium.make("Pendulum-v1")  # a Box action goes on the bus as a list of numbers
    env = GraphEnv("cartpole_random.yaml", agent="agent", sets=["env.id=Pendulum-v1"])
    try:
        assert env.action_space == pendulum.action_space and env.observation_space == pendulum.observation_space
        assert env.actions == []
        env.reset(seed=0)
        obs, reward, *_, info = env.step(np.array([1.5], dtype=np.float32))
        assert info["action"] == [1.5] and info["valid"] and obs.shape == (3,) and reward < 0
        with pytest.raises(ValueError, match="is not in Box"):
            env.step(np.array([9.0], dtype=np.float32))
        check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.timeout(300)
def test_dict_observations_stay_typed_and_text_games_keep_the_text_space():
    from gymnasium import spaces

    env = GraphEnv("minigrid_random.yaml", agent="agent")  # MiniGrid: the view, the direction, the mission
    try:
        space = env.observation_space
        assert isinstance(space, spaces.Dict) and set(space.spaces) == {"image", "direction", "mission"}
        assert space["image"].shape == (7, 7, 3) and space["direction"] == spaces.Discrete(4)
        assert isinstance(space["mission"], spaces.Text) and env.actions[:3] == ["left", "right", "forward"]
        obs, _ = env.reset(seed=0)
        assert obs["mission"] == "use the key to open the door and then get to the goal" and space.contains(obs)
        check_env(env, skip_render_check=True)
    finally:
        env.close()
    env = GraphEnv("hello.yaml", agent="agent")
    try:
        assert isinstance(env.observation_space, spaces.Text) and env.action_space == spaces.Discrete(3)
    finally:
        env.close()


def test_a_declaration_is_checked_and_names_the_key_that_is_wrong():
    import kernel.sdk.spaces as decl
    from kernel.gym.spaces import AgentSpaces, from_describe
    from kernel.sdk.gymspaces import build

    good = {"obs": {"observation": decl.text(), "action": decl.discrete(["a", "b"])}}
    assert decl.check(good, "env") is good
    bad = [({"obs": {"observation": decl.text()}}, "env['obs']: expected the keys 'observation' and 'action'"),
           ({"obs": {"observation": {"key": "x", "space": {"type": "Graph"}}, "action": decl.listed()}},
            "env['obs'].observation.space: space type 'Graph' is not one of Discrete, Box"),
           ({"obs": {"observation": {"key": None, "space": {"type": "Discrete", "n": 2}}, "action": decl.listed()}},
            "key None needs a Dict space"),
           ({"obs": {"observation": decl.text(), "action": {"space": {"type": "Box", "shape": [1]}}}},
            "env['obs'].action.space: a Box space needs dtype, high, low"),
           ({"obs": {"observation": decl.text(), "action": {"space": {"type": "Discrete", "n": 3}, "names": ["a"]}}},
            "env['obs'].action.names: expected 3 strings"),
           ({"obs": {"observation": decl.text(), "action": {"names": ["a"]}}}, "needs a 'space' (or listed: true)")]
    for declared, message in bad:
        with pytest.raises(ValueError) as err:
            decl.check(declared, "env")
        assert message in str(err.value), (message, str(err.value))
    with pytest.raises(ValueError, match=r"here: .* is not a valid Box space"):
        build({"type": "Box", "shape": [2], "dtype": "float32", "low": [0, 0, 0], "high": 1}, "here")
    spaces_ = AgentSpaces({"observation": {"key": "observation", "space": {"type": "Discrete", "n": 4}},
                           "action": decl.listed()}, "env['obs']", max_actions=4)
    with pytest.raises(ValueError, match=r"env\['obs'\]: the obs body has no 'observation'.*keys: actions, text"):
        spaces_.observation({"actions": [], "text": ""})
    assert spaces_.action(1, {"actions": ["x", "y"]}) == "y" and spaces_.action(3, {"actions": ["x"]}) is None
    named = AgentSpaces({"observation": decl.text(), "action": {"space": {"type": "Discrete", "n": 2, "start": 1},
                                                                "names": ["l", "r"]}}, "env['obs']", max_actions=4)
    assert [named.action(a, {}) for a in (1, 2, np.int64(2), True)] == ["l", "r", "r", "l"]
    for wrong in (0, 3, -1, 1.0, "1", None):
        with pytest.raises(ValueError, match="is not in Discrete"):
            named.action(wrong, {})
    assert from_describe({"actions": ["l", "r"]}, ["obs"])["obs"]["action"]["names"] == ["l", "r"]


def test_episodes_seeds_rewards_metrics_and_a_clean_close():
    env = GraphEnv("hello.yaml", agent="agent")
    try:
        assert env.actions == ["left", "right", "stay"] and env.dropped == []
        first, _ = env.reset(seed=1)
        again, _ = env.reset(seed=1)  # mid-episode: the episode is stopped, the same one comes again
        assert first == again and "goal" in first
        right = env.actions.index("right")
        total, steps = 0.0, 0
        while True:
            obs, reward, terminated, truncated, info = env.step(right)
            total, steps = total + reward, steps + 1
            assert info["action"] == "right" and info["valid"]
            if terminated or truncated:
                break
        assert info["metrics"]["steps"] == steps and "score" in info["metrics"]  # the judge's metrics
        with pytest.raises(GraphError, match="call reset"):
            env.step(right)
        with pytest.raises(ValueError):
            env.reset()
            env.step(7)
        procs = [p.process for p in env.supervisor.procs.values()]
    finally:
        env.close()
    assert all(p is None or p.returncode is not None for p in procs)


def _cartpole(tmp_path, restart: str) -> str:
    import yaml

    data = yaml.safe_load((ROOT / "launch" / "cartpole_random.yaml").read_text())
    for node in data["nodes"]:
        if node["id"] == "env":
            node["restart"] = {"policy": restart, "backoff": 0.1}
    path = tmp_path / f"cartpole_{restart}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _kill_env(env: GraphEnv) -> None:
    import os
    import signal

    os.kill(env.supervisor.procs["env"].process.pid, signal.SIGKILL)


@pytest.mark.timeout(120)
def test_a_dead_env_node_ends_the_waiting_step_at_once_and_a_restarted_one_plays_on(tmp_path):
    """A node that dies mid-episode: step() says so at once (not at its 120 s timeout), naming the
    node and what to do; with a restart policy, reset() deals the lost episode again and play goes on."""
    import time

    env = GraphEnv(_cartpole(tmp_path, "on-failure"), agent="agent")
    try:
        first, _ = env.reset(seed=0)
        env.step(0)
        _kill_env(env)
        started = time.monotonic()
        with pytest.raises(GraphError, match=r"node 'env' exited with code -9 during episode ep\d+, which is lost.*"
                                             r"call reset\(\)"):
            for _ in range(100):
                env.step(0)
        assert time.monotonic() - started < 10
        with pytest.raises(GraphError, match="which is lost"):  # until reset() it stays so
            env.step(0)
        again, _ = env.reset(seed=0)  # the restarted node plays the same seed's episode
        assert (again == first).all()
        for _ in range(30):
            _, _, terminated, truncated, _ = env.step(1)
            if terminated or truncated:
                env.reset()
    finally:
        env.close()
    env = GraphEnv(_cartpole(tmp_path, "never"), agent="agent")
    try:
        env.reset(seed=0)
        _kill_env(env)
        started = time.monotonic()
        with pytest.raises(GraphError, match="node 'env' exited with code -9 and is not restarted"):
            for _ in range(100):
                env.step(0)
        with pytest.raises(GraphError, match="cannot play on"):
            env.reset()
        assert time.monotonic() - started < 10
    finally:
        env.close()


@pytest.mark.timeout(120)
def test_a_step_that_hears_nothing_within_the_timeout_names_what_it_waited_for(tmp_path):
    """An env node that stalls (stopped, not dead): the step's wait ends at the graph's timeout with
    the input it waited on and the logs' folder, and the graph still closes cleanly."""
    import os
    import signal
    import time

    env = GraphEnv(_cartpole(tmp_path, "never"), agent="agent")
    pid = env.supervisor.procs["env"].process.pid
    try:
        env.reset(seed=0)
        env.graph.timeout = 1.5  # started with the default; the waits from here on get 1.5 s
        os.kill(pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(GraphError, match=r"nothing arrived on agent\.step within 2 s \(logs: .*logs\)"):
            env.step(0)
        assert 1.4 < time.monotonic() - started < 10
    finally:
        os.kill(pid, signal.SIGCONT)
        env.close()


@pytest.mark.timeout(120)
def test_an_action_on_a_block_edge_waits_for_its_credit_and_play_goes_on(tmp_path):
    """The caller sends an action from its own thread, except on a ``block`` edge, where it first
    waits for a credit on the loop: 300 steps through a 2-slot block queue (credits that leaked would
    stall it), with pauses long enough for the keeper thread to serve the loop between some of them."""
    import time

    import yaml

    data = yaml.safe_load((ROOT / "launch" / "cartpole_random.yaml").read_text())
    for node in data["nodes"]:
        if node["id"] == "env":
            node["inputs"]["action"] = {"from": "agent/action", "policy": "block", "size": 2}
    path = tmp_path / "cartpole_block.yaml"
    path.write_text(yaml.safe_dump(data))
    env = GraphEnv(str(path), agent="agent")
    try:
        env.reset(seed=0)
        for i in range(300):
            _, _, terminated, truncated, info = env.step(i % 2)
            assert info["valid"]
            if i % 60 == 0:
                time.sleep(0.12)  # away longer than IDLE_S: the keeper runs the loop meanwhile
            if terminated or truncated:
                env.reset()
    finally:
        env.close()


CTRL_C = r"""
import json, os, signal, sys
from kernel.gym import GraphEnv
env = GraphEnv("cartpole_random.yaml", agent="agent")
signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))  # Ctrl-C, at a chosen moment
interrupted = played = 0
try:
    env.reset(seed=0)
    for i in range(200):
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.00005 + 0.0002 * (i % 5))  # inside the step, mostly
            _, _, terminated, truncated, _ = env.step(i % 2)
            if terminated or truncated or i % 7 == 0:
                env.reset()  # a reset ends the episode in play with a stop request: Ctrl-C may land there too
            signal.setitimer(signal.ITIMER_REAL, 0)
        except KeyboardInterrupt:
            signal.setitimer(signal.ITIMER_REAL, 0)
            interrupted += 1
            env.reset()  # the way back a user takes
    for i in range(200):
        _, _, terminated, truncated, _ = env.step(i % 2)
        played += 1
        if terminated or truncated:
            env.reset()
finally:
    env.close()
print(json.dumps({"interrupted": interrupted, "played": played}))
"""


@pytest.mark.timeout(180)
def test_ctrl_c_in_the_middle_of_steps_leaves_a_graph_that_plays_on():
    """Ctrl-C lands inside step() (in the loop's wait, between reading the record and the
    observation, ...): each time a KeyboardInterrupt, no message dropped on the way, and reset()
    and later steps go on at once (they used to wait for a message already taken: 120 s)."""
    import json
    import subprocess
    import sys

    from tests.helpers import launch_env

    done = subprocess.run([sys.executable, "-c", CTRL_C], env=launch_env(), capture_output=True, text=True,
                          timeout=150, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["interrupted"] >= 20 and report["played"] == 200, report


def test_a_model_server_only_the_agent_used_is_not_started():
    env = GraphEnv("sokoban_local.yaml", agent="agent")
    try:
        assert env.dropped == ["model"] and "model" not in env.supervisor.procs
        obs, _ = env.reset(seed=0)
        assert "Legend" in obs
    finally:
        env.close()


def test_a_graph_without_the_agent_or_its_obs_is_refused():
    with pytest.raises(GraphError, match="no node 'player'"):
        GraphEnv("hello.yaml", agent="player")
    with pytest.raises(GraphError, match="no 'obs' input"):
        GraphEnv("hello.yaml", agent="judge")


# --- GraphParallelEnv: every agent node played by the caller, as a PettingZoo ParallelEnv ---------------------
from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402

from kernel.gym import GraphParallelEnv  # noqa: E402

FOOTBALL = pytest.mark.skipif(importlib.util.find_spec("gfootball") is None, reason="gfootball is not installed")
PARALLEL = ["hello.yaml", "sokoban_random.yaml", "kidgym_random.yaml", "rps_random.yaml",  # rps: pettingzoo.env's typed spaces
            pytest.param("football_multiagent.yaml", marks=FOOTBALL),
            pytest.param("football_random.yaml", marks=FOOTBALL)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("launch_file", PARALLEL)
def test_pettingzoo_parallel_api_and_seed_tests_pass_on_bundled_graphs(launch_file):
    env = GraphParallelEnv(launch_file)
    try:
        parallel_api_test(env, num_cycles=20)
    finally:
        env.close()
    made: list[GraphParallelEnv] = []

    def make() -> GraphParallelEnv:
        made.append(GraphParallelEnv(launch_file))
        return made[-1]

    try:
        parallel_seed_test(make, num_cycles=10)
    finally:
        for env in made:
            env.close()


@FOOTBALL
@pytest.mark.timeout(300)
def test_multiagent_football_keys_by_agent_node_and_leaves_the_model_unstarted():
    env = GraphParallelEnv("football_multiagent.yaml")
    try:
        assert env.possible_agents == ["llm_a", "llm_b", "rnd_a", "rnd_b"] and env.dropped == ["model"]
        assert "model" not in env.supervisor.procs and "judge" in env.supervisor.procs
        obs, infos = env.reset(seed=0)
        assert set(obs) == set(env.possible_agents) and all(isinstance(o, str) and o for o in obs.values())
        idle = env.actions.index("idle") if "idle" in env.actions else 0
        obs, rewards, terms, truncs, infos = env.step({a: idle for a in env.agents})
        assert set(rewards) == set(env.possible_agents) and not any(terms.values())
        assert all(info["action"] == env.actions[idle] for info in infos.values())
    finally:
        env.close()
