"""kernel.gym.GraphEnv: a bundled graph as a Gymnasium env with its agent node played by the caller,
checked by Gymnasium's own env checker on several packs."""

from __future__ import annotations

import importlib.util

import pytest
from gymnasium.utils.env_checker import check_env

from kernel.gym import GraphEnv, GraphError

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
PARALLEL = ["hello.yaml", "sokoban_random.yaml", "kidgym_random.yaml", pytest.param("football_multiagent.yaml", marks=FOOTBALL),
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
