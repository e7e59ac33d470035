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
