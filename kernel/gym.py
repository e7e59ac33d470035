"""Any graph as a Gymnasium env: a launch file runs as usual (launcher, processes, bus) with one
agent node replaced by the caller.

    from kernel.gym import GraphEnv

    env = GraphEnv("sokoban_random.yaml", agent="agent")
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

``reset()`` takes the next episode the kernel deals (a stop request ends one still in play);
``reset(seed=s)`` one that plays episode index ``s`` of the run (its level and seed), so a seed
always gives the same episode;
``step(i)`` publishes the i-th of the env node's actions (its ``describe`` service; for an env
whose actions change with the state and so describes none, the i-th of the current observation's
``actions``, out of ``max_actions``) as the agent's ``action`` on the bus and returns the next observation, the step stream's reward, and, when the
episode ends, the metrics the judge (or the env) ended it with in ``info["metrics"]``. Nodes only
the replaced agent used (its model server) are not started. The observation is the env's text view
(``obs["text"]``) as a Gymnasium Text space; ``info["obs"]`` is the whole observation body.

The graph runs on its own event loop in a background thread; the Gymnasium calls block the
caller's thread only, never that loop. ``close()`` stops every node and removes the run's sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import shutil
import string
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

import gymnasium
from gymnasium import spaces
from rich.console import Console

from kernel.bus.runtime import NodeRuntime
from kernel.graph.runner import open_graph
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import InputSpec, LaunchFile, NodeSpec
from kernel.launchfile.pipeline import load
from kernel.sdk.node import Message, Node
from kernel.sdk.registry import load_node_class

__all__ = ["GraphEnv", "GraphError"]

CHARSET = frozenset(string.printable) | frozenset(chr(c) for c in range(0xA0, 0x3000))
"""The characters an observation's text may hold (Gymnasium's Text space lists them)."""


class GraphError(RuntimeError):
    """The graph could not be started, or a node failed while the caller was waiting on it."""


class _Stand(Node):
    """The node that stands in for the replaced agent: what arrives on its inputs goes to the
    caller's thread through queues, and the caller's actions go out on ``action``."""

    outputs = ("action",)

    def __init__(self, inputs: Sequence[str]) -> None:
        self.inputs = tuple(inputs)
        self.received: dict[str, queue.Queue[Message]] = {name: queue.Queue() for name in self.inputs}

    def ports(self, params: Any) -> tuple[Sequence[str], Sequence[str]]:
        return self.inputs, self.outputs

    async def setup(self) -> None:
        for name in self.inputs:
            asyncio.ensure_future(self._pump(name))

    async def _pump(self, name: str) -> None:
        while True:
            msg = await self.recv(name)
            self.received[name].put(msg)


def _same(body: dict[str, Any]) -> dict[str, Any]:
    """A body without its episode id (``GraphEnv.episode`` has it), so that one seed and one action
    give equal infos, as Gymnasium's checker asks."""
    return {k: v for k, v in body.items() if k != "episode"}


class GraphEnv(gymnasium.Env):
    """A launch file as a Gymnasium env, with the node ``agent`` played by the caller."""

    metadata = {"render_modes": []}

    def __init__(self, launch_file: str | Path, agent: str = "agent", *, sets: Sequence[str] = (),
                 episodes: int = 1_000_000, timeout: float = 120.0, max_text: int = 65536,
                 max_actions: int = 16) -> None:
        self.timeout = timeout
        lf = load(launch_file, sets=sets, episodes=episodes, node_class=load_node_class)
        self.lf = lf
        specs = {s.id: s for s in lf.nodes}
        if agent not in specs:
            raise GraphError(f"{lf.source}: no node {agent!r} to replace (nodes: {', '.join(specs)})")
        replaced = specs[agent]
        obs_src = next((src for name, inp in replaced.inputs.items() if name == "obs" for src in inp.sources), None)
        if obs_src is None:
            raise GraphError(f"{lf.source}: node {agent!r} has no 'obs' input to take observations from")
        self.env_id = obs_src.split("/", 1)[0]
        self.agent = agent
        kept = [s for s in lf.nodes if s.id != agent and not self._only_for(s, replaced, lf)]
        self.dropped = sorted(set(specs) - {s.id for s in kept} - {agent})
        env_spec = specs[self.env_id]
        readers = [s for s in kept if any(src.startswith(f"{self.env_id}/step") for i in s.inputs.values()
                                          for src in i.sources)]
        env_cls = load_node_class(env_spec.uses) if env_spec.uses else None
        params_model = getattr(env_cls, "Params", None)
        if not readers and params_model is not None and "judge" in getattr(params_model, "model_fields", {}):
            env_spec.params = {**env_spec.params, "judge": False}  # the stand reads step; the env still ends episodes
        inputs = {name: inp for name, inp in replaced.inputs.items()}
        inputs["step"] = InputSpec(sources=[f"{self.env_id}/step"], policy="fifo", size=256)
        self._stand = _Stand(list(inputs))
        self._stand_spec = NodeSpec(id=agent, uses=f"{_Stand.__module__}:_Stand", params={}, inputs=inputs)
        self._specs = kept
        self._run_dir = Path(tempfile.mkdtemp(prefix="graphenv-"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="graphenv", daemon=True)
        self._thread.start()
        self._cleanup = contextlib.AsyncExitStack()
        self._closed = False
        try:
            self._call(self._start(), timeout)
            described = self._call(self._stand.request(self.env_id, "describe", {}), timeout)
        except BaseException:
            self.close()
            raise
        self.actions: list[str] = list(described.get("actions") or [])
        # An env whose actions change with the state (KidGym's lettered options) describes none: then
        # action i is the i-th of the current observation's actions, and one past them sends no action.
        self.dynamic = not self.actions
        self.action_space = spaces.Discrete(max_actions if self.dynamic else len(self.actions))
        self.observation_space = spaces.Text(max_length=max_text, min_length=0, charset=CHARSET)
        self._want: int | None = None  # the content the next dealt episode plays (reset's seed)
        self._plays: dict[int, int | None] = {}  # dealt index -> the seed it was dealt for (None: any)
        self.kernel.book.content = self._content
        self._episode: str | None = None
        self._t = 0
        self._done = True
        self._last_obs: dict[str, Any] | None = None

    @staticmethod
    def _only_for(spec: NodeSpec, replaced: NodeSpec, lf: LaunchFile) -> bool:
        """Whether ``spec`` is a node only the replaced agent uses (named in its params, read by no
        one else's inputs or params): its model server."""
        def named(node: NodeSpec) -> bool:
            return spec.id in {str(v) for v in node.params.values() if isinstance(v, (str, int))}

        if not named(replaced):
            return False
        for other in lf.nodes:
            if other.id in (spec.id, replaced.id):
                continue
            if named(other) or any(src.split("/", 1)[0] == spec.id for i in other.inputs.values() for src in i.sources):
                return False
        return True

    # -- the graph on its own loop ----------------------------------------------------------------------
    def _call(self, coro: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise GraphError(f"the graph did not answer within {timeout:.0f} s") from None

    async def _start(self) -> None:
        lf = LaunchFile(name=self.lf.name, source=self.lf.source, bus=self.lf.bus,
                        nodes=[*self._specs, self._stand_spec], run=self.lf.run)
        self.kernel, self.ipc_dir, env = await open_graph(lf, self._run_dir, self._cleanup, trace=None, keys=None)
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)

        def on_exit(node_id: str, code: int | None, restart: bool) -> None:
            self.kernel.node_exited(node_id, code, restart)

        self.supervisor = Supervisor(self._specs, env, self._run_dir / "logs", Console(stderr=True, quiet=True), on_exit)
        self._cleanup.push_async_callback(self.supervisor.stop_all, self.kernel.stop_nodes)
        await self.supervisor.start_all()
        rt = NodeRuntime(self._stand, self.agent, self.kernel.endpoint, inbox_dir=str(self.ipc_dir),
                         exit_on_orphan=False, params={})
        self._stand_task = asyncio.ensure_future(rt.main())
        self._cleanup.push_async_callback(self._stop_stand)
        await asyncio.wait_for(self.kernel.ready_event.wait(), self.timeout)
        self.kernel.start()
        await asyncio.wait_for(rt.wait_started(), 10)

    async def _stop_stand(self) -> None:
        try:
            await asyncio.wait_for(self._stand_task, 3.0)
        except Exception:
            self._stand_task.cancel()

    @staticmethod
    async def _cancel_rest() -> None:
        """Cancel what is left on the loop (the stand's pumps, finished runtimes' timers)."""
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    def _get(self, name: str) -> Message:
        try:
            return self._stand.received[name].get(timeout=self.timeout)
        except queue.Empty:
            raise GraphError(f"nothing arrived on {self.agent}.{name} within {self.timeout:.0f} s "
                             f"(logs: {self._run_dir / 'logs'})") from None

    def _metrics(self, episode: str) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            for _ in range(int(self.timeout * 20)):
                record = self.kernel.book.records.get(episode)
                if record is not None and record.get("metrics") is not None and record.get("status"):
                    return dict(record["metrics"])
                await asyncio.sleep(0.05)
            return {}

        return self._call(wait(), self.timeout + 5)

    # -- Gymnasium ----------------------------------------------------------------------------------------
    def _observation(self, body: dict[str, Any]) -> str:
        text = str(body.get("text") or "")
        text = "".join(c if c in CHARSET else "?" for c in text)
        return text[: self.observation_space.max_length]

    def _content(self, index: int) -> int:
        """The book's hook (on the graph's loop): a dealt episode plays the seed reset asked for."""
        want = self._want
        self._plays[index] = want
        return index if want is None else want

    def _stop_current(self) -> None:
        """End the episode in play with a stop request, and wait for its last step."""
        self._publish({"stop": True, "reason": "reset"})
        while True:
            record = self._get("step").body
            if record.get("episode") == self._episode and record.get("done"):
                return

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """The next dealt episode; with ``seed``, one that plays episode index ``seed`` of the
        launch file's run (its level, its seed), so the same seed gives the same episode."""
        super().reset(seed=seed)
        self._want = seed
        if not self._done:  # an episode still in play: stop it
            self._stop_current()
        while True:
            msg = self._get("obs")
            if msg.body.get("episode") == self._episode:
                continue
            self._episode, self._t, self._done = msg.body.get("episode"), int(msg.body.get("t", 0)), False
            dealt = int(str(self._episode)[2:]) if str(self._episode).startswith("ep") else -1
            if seed is None or self._plays.get(dealt) == seed:
                break
            self._stop_current()  # dealt before this reset asked for its seed: the next one will play it
        self._last_obs = msg.body
        return self._observation(msg.body), {"obs": _same(msg.body)}

    @property
    def episode(self) -> str | None:
        """The id of the episode in play (or the last one), as the run's results name it."""
        return self._episode

    def _publish(self, body: Any) -> None:
        self._call(self._stand.publish("action", body, step=self._t), self.timeout)

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise GraphError("step() after the episode ended: call reset()")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        assert self._last_obs is not None
        current = list(self._last_obs.get("actions") or []) if self.dynamic else self.actions
        name = current[int(action)] if int(action) < len(current) else None
        self._publish(name)
        while True:
            record = self._get("step").body
            if record.get("episode") == self._episode and record.get("t") == self._t:
                break
        reward = float(record.get("reward", 0.0))
        info: dict[str, Any] = {"action": name, "valid": record.get("valid"), "step": _same(record)}
        if record.get("done"):
            self._done = True
            truncated = bool(record.get("info", {}).get("truncated"))
            info["metrics"] = self._metrics(self._episode or "")
            assert self._last_obs is not None
            return self._observation(self._last_obs), reward, not truncated, truncated, info
        msg = self._get("obs")
        self._last_obs = msg.body
        self._t = int(msg.body.get("t", self._t + 1))
        info["obs"] = _same(msg.body)
        return self._observation(msg.body), reward, False, False, info

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._loop.is_running():
                self._call(self._cleanup.aclose(), 30)
            self._call(self._cancel_rest(), 10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            shutil.rmtree(self._run_dir, ignore_errors=True)
