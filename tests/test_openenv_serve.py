"""``launch serve FILE --openenv`` end to end: openenv-core's own client plays a served graph
(sokoban, random moves) over WebSocket sessions, a client past ``--replicas`` is refused, the token
is required, and framebus's ``openenv.env`` node plays the same server back; a public address
without a token is refused before anything starts."""

from __future__ import annotations

import json
import random
import signal
import socket
import urllib.error
import urllib.request

import pytest

pytest.importorskip("openenv", reason="openenv-core is not installed (the train extra)")

from openenv.core import GenericEnvClient  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

from tests.helpers import ROOT, alive, children_of, launch, launch_bg, wait_until  # noqa: E402

TOKEN = "graph-served-token-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def play(env, rng: random.Random, seed: int | None = None) -> tuple[list[float], dict]:
    """One episode with uniform random moves; the rewards and the last observation."""
    result = env.reset(seed=seed) if seed is not None else env.reset()
    assert result.done is False and result.observation["actions"] == ["Up", "Down", "Left", "Right"]
    rewards = []
    while not result.done:
        result = env.step({"action": rng.choice(result.observation["actions"])})
        assert isinstance(result.reward, float)
        rewards.append(result.reward)
        assert len(rewards) <= 50, "sokoban_random's episodes end within 50 steps"
    return rewards, result.observation


@pytest.mark.timeout(120)
def test_an_openenv_client_plays_twenty_episodes_of_a_served_graph(tmp_path):
    port = free_port()
    server = launch_bg("serve", "sokoban_random.yaml", "--openenv", "--port", str(port), "--replicas", "2",
                       "--token", TOKEN)
    try:
        assert wait_until(lambda: "openenv: serving" in server.output() or server.poll() is not None, 60), \
            server.output()
        assert server.poll() is None, server.output()
        base = f"http://127.0.0.1:{port}"
        with pytest.raises(urllib.error.HTTPError) as refused:  # no token, no answer
            urllib.request.urlopen(f"{base}/health", timeout=10)
        assert refused.value.code == 401
        request = urllib.request.Request(f"{base}/health", headers={"Authorization": f"Bearer {TOKEN}"})
        assert json.loads(urllib.request.urlopen(request, timeout=10).read())["status"] == "healthy"

        rng = random.Random(0)
        episodes, returns = set(), []
        with GenericEnvClient(base_url=f"{base}/{TOKEN}").sync() as env:  # the token as the base URL's path
            for _ in range(20):
                rewards, last = play(env, rng)
                assert last["metrics"]["steps"] == len(rewards) and "score" in last["metrics"]
                assert last["truncated"] == (len(rewards) == 50 and not last["metrics"]["success"])
                episodes.add(last["episode"])
                returns.append(sum(rewards))
            assert env.state()["step_count"] == len(rewards)
            first = env.reset(seed=5).observation
            assert env.reset(seed=5).observation["text"] == first["text"]  # a seed is an episode of the run
            with pytest.raises(RuntimeError, match="unknown action 'Jump'; allowed now: Up, Down, Left, Right"):
                env.step({"action": "Jump"})
            assert env.step({"action": 1}).observation["t"] == 1  # an index is an action too
        assert len(episodes) == 20 and len({round(r, 3) for r in returns}) > 1  # rewards move with the moves

        a, b = (GenericEnvClient(base_url=f"{base}/{TOKEN}").sync() for _ in range(2))
        with a, b:
            a.reset()
            b.reset()
            # the third session is refused at once: openenv's error, then the close (read raw, as
            # EnvClient may still be sending its reset into the closing socket)
            with ws_connect(f"ws://127.0.0.1:{port}/{TOKEN}/ws", open_timeout=10) as c:
                refusal = json.loads(c.recv(timeout=30))
            assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED"
            assert refusal["data"]["max_sessions"] == 2

        run = launch("run", str(ROOT / "tests/data/openenv_served.yaml"), "--set", f"env.url={base}/{TOKEN}",
                     "--out", str(tmp_path / "run"), "--json", timeout=90)
        assert run.returncode == 0, run.stdout + run.stderr
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        assert summary["episodes"]["completed"] == 2 and summary["metrics"]["steps"] == 50

        nodes = children_of(server.pid)
        assert nodes, "the replicas' node processes run under the server"
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0, server.output()
        assert wait_until(lambda: not any(alive(pid) for pid in nodes), 15), "a replica's node outlived the server"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_a_public_address_without_a_token_is_refused():
    refused = launch("serve", "sokoban_random.yaml", "--openenv", "--host", "0.0.0.0", "--port", str(free_port()))
    assert refused.returncode == 2
    assert "--host 0.0.0.0 is not a loopback address" in refused.stdout + refused.stderr
    assert "--token" in refused.stdout + refused.stderr
    unnamed = launch("serve", "sokoban_random.yaml")
    assert unnamed.returncode == 2 and "--openenv" in unnamed.stdout + unnamed.stderr
