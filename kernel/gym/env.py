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
``step(action)`` sends the action as the agent's ``action`` on the bus and returns the next
observation, the step stream's reward, and, when the episode ends, the metrics the judge (or the
env) ended it with in ``info["metrics"]``. Nodes only the replaced agent used (its model server) are
not started.

The spaces are the env node's own declaration (its ``spaces`` service, ``kernel.gym.spaces``), so
no game is written here: a ``gym.env`` node over CartPole offers CartPole's Box and Discrete, and
observations are typed values of the Box; a text game offers its text view (``obs["text"]``) as a
Text space and its action names as a Discrete (action i sends the i-th name; for an env whose
actions change with the state, the i-th of the current observation's ``actions``, out of
``max_actions``). ``info["obs"]`` is the whole observation body.

The graph (the kernel, the stand-in for the agent, kernel.graph.local) runs on an event loop of its
own that the caller's thread runs inside each call: a step sends the action from the caller's thread
and runs the loop only until the answer is queued (a future, no task per step), with no other thread
in between (two hand-offs between threads cost more than the bus step). While the caller is away
longer than ``IDLE_S``, a keeper thread runs the loop, so heartbeats and timers go on while it
thinks. Call it from plain code, not from inside a running event loop. ``close()`` stops every node and removes the run's sockets.
"""

from __future__ import annotations

import asyncio
import _signal
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Coroutine, Sequence, TypeVar

import gymnasium
from gymnasium import spaces

import kernel.sdk.spaces as decl
from kernel.bus.episode_ids import episode_index
from kernel.bus.errors import RemoteError
from kernel.bus.inputs import InputQueue
from kernel.graph.local import LocalGraph
from kernel.gym.spaces import AgentSpaces, from_describe
from kernel.launchfile import InputSpec, LaunchFile, NodeSpec
from kernel.launchfile.pipeline import load
from kernel.sdk.node import Message, Node
from kernel.sdk.registry import load_node_class
from kernel.sdk.steps import StepRecord, StepRecordError, parse_step

try:
    from pettingzoo import ParallelEnv
except ImportError:  # pettingzoo comes with the worlds extra; GraphEnv works without it
    ParallelEnv = object  # type: ignore[assignment,misc]

__all__ = ["GraphEnv", "GraphParallelEnv", "GraphError"]

class GraphError(RuntimeError):
    """The graph could not be started, or a node failed while the caller was waiting on it."""


class _Interrupted(Exception):
    """A call ended early because what it waited for cannot come (a node it needed exited)."""


class _Stand(Node):
    """The node that stands in for a replaced agent: the caller's thread, holding the graph's loop,
    reads its inputs and sends its ``action``."""

    outputs = ("action",)

    def __init__(self, inputs: Sequence[str]) -> None:
        self.inputs = tuple(inputs)

    def ports(self, params: Any) -> tuple[Sequence[str], Sequence[str]]:
        return self.inputs, self.outputs

    def queue(self, input: str) -> InputQueue:
        return self._rt.queue(input)

    def publish_now(self, output: str, body: Any, *, step: int | None = None) -> bool:
        """Send from plain code; False (nothing sent) where the output waits for credits (a block edge)."""
        return self._rt.publish_nowait(output, body, step=step)


def _same(body: dict[str, Any]) -> dict[str, Any]:
    """A body without its episode id (``GraphEnv.episode`` has it), so that one seed and one action
    give equal infos, as Gymnasium's checker asks."""
    return {k: v for k, v in body.items() if k != "episode"}


def _new_loop() -> asyncio.AbstractEventLoop:
    """asyncio's own loop, not uvloop: the caller's thread runs the loop once per call, and uvloop
    sets up its signal socket pair on every run in the main thread (23 us a run against 7 us,
    measured), more than it saves on a step's few messages."""
    return asyncio.new_event_loop()


T = TypeVar("T")


class _Arrival(asyncio.Future):  # type: ignore[type-arg]
    """What a step waits on: a future that stops its loop as it is done, in the same turn (a done
    callback, as ``run_until_complete`` adds, would stop it one turn later: a poll of the
    sockets and a pass over the ready callbacks more per wait)."""

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        self.get_loop().stop()

    def cancel(self, msg: Any = None) -> bool:
        cancelled = super().cancel(msg)
        self.get_loop().stop()
        return cancelled

# Ctrl-C's handler is swapped twice per call: through ``_signal`` (what ``signal`` wraps), since the
# wrapper's enum conversions made the two swaps cost 6.7 us against 0.4 us (measured), per step.
_SIGINT = int(signal.SIGINT)
_MAIN_THREAD = threading.main_thread().ident

IDLE_S = 0.05
"""How long the caller may be away (between calls) before the keeper thread serves the loop."""


class _LoopHost:
    """The graph's event loop, run by one thread at a time: the caller's, inside each call (so a
    step reaches the bus and hears back in the caller's thread), or, once the caller has been away
    ``IDLE_S``, a keeper thread's, which gives it back as soon as the caller calls again."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()  # held by the thread that runs the loop
        self._left = time.monotonic()  # when the caller last gave the loop back
        self._wanted = False  # a caller is taking the loop: the keeper must not start a turn
        self._closed = False
        self._task: asyncio.Future[Any] | None = None  # what the call in progress waits on
        self._interrupted: str | None = None  # why interrupt() ended it
        self._keeper = threading.Thread(target=self._keep, name="graphenv", daemon=True)
        self._keeper.start()

    def hold(self) -> None:
        """Take the loop for this thread (the keeper stays off it) until ``release``: for sends and ``wait``."""
        self._wanted = True  # before trying: from here on the keeper takes no new turn
        try:
            if self._lock.acquire(blocking=False):
                return
            self.loop.call_soon_threadsafe(self._stop_keeper)  # the keeper has it: its run ends, it lets go
            self._lock.acquire()
        finally:
            self._wanted = False

    def release(self) -> None:
        self._left = time.monotonic()
        self._lock.release()

    def wait(self, awaited: asyncio.Future[T], timeout: float) -> T:
        """Holding the loop: run it until ``awaited`` is done (a future: no task, and one turn
        of the loop fewer than a coroutine would take); asyncio.TimeoutError past ``timeout``."""
        self._task = awaited
        expired = self.loop.call_later(timeout, awaited.cancel)
        try:
            if isinstance(awaited, _Arrival):
                while not awaited.done():
                    self.loop.run_forever()
                return awaited.result()
            return self.loop.run_until_complete(awaited)
        except asyncio.CancelledError:
            why, self._interrupted = self._interrupted, None
            if why is not None:
                raise _Interrupted(why) from None
            if expired.when() <= self.loop.time():
                raise asyncio.TimeoutError from None
            raise
        finally:
            expired.cancel()
            self._task = None

    def interrupt(self, why: str) -> None:
        """On the loop: end the wait in progress, which raises _Interrupted(why); none: nothing to do."""
        if self._task is not None and not self._task.done():
            self._interrupted = why
            self._task.cancel()

    def _stop_keeper(self) -> None:
        if threading.get_ident() == self._keeper.ident:  # late, in the caller's run: nothing to stop
            self.loop.stop()

    def _keep(self) -> None:
        while not self._closed:
            time.sleep(IDLE_S / 2)
            if self._closed or time.monotonic() - self._left < IDLE_S or not self._lock.acquire(blocking=False):
                continue
            try:
                # Checked with the lock held: a caller that set it before this turn began is waiting
                # (or about to be) and this turn would outlive its one stop request; one that sets it
                # later sends the stop into the run below.
                if not self._closed and not self._wanted:
                    self.loop.run_forever()
            finally:
                self._lock.release()

    def close(self) -> None:
        """Stop the keeper (the loop stays open, for the caller to close)."""
        self._closed = True
        self.hold()
        self.release()
        self._keeper.join(5)


class _Graph:
    """A launch file running on a loop the caller's thread drives (kernel.graph.local), with
    ``agents`` (node ids) played by stand-in nodes in this process; the first agent's stand also
    reads the env's ``step``."""

    def __init__(self, launch_file: str | Path, agents: Sequence[str] | None, *, sets: Sequence[str],
                 episodes: int, timeout: float) -> None:
        self.timeout = timeout
        lf = load(launch_file, sets=sets, episodes=episodes, node_class=load_node_class)
        self.lf = lf
        specs = {s.id: s for s in lf.nodes}
        if agents is None:  # every node that reads an env's obs and acts on it
            agents = [s.id for s in lf.nodes if "obs" in s.inputs and any(
                f"{s.id}/action" in src for o in lf.nodes for i in o.inputs.values() for src in i.sources)]
        for agent in agents:
            if agent not in specs:
                raise GraphError(f"{lf.source}: no node {agent!r} to replace (nodes: {', '.join(specs)})")
            if "obs" not in specs[agent].inputs:
                raise GraphError(f"{lf.source}: node {agent!r} has no 'obs' input to take observations from")
        if not agents:
            raise GraphError(f"{lf.source}: no agent node (one with an 'obs' input whose action an env reads)")
        self.agents = list(agents)
        envs = {specs[a].inputs["obs"].sources[0].split("/", 1)[0] for a in self.agents}
        if len(envs) != 1:
            raise GraphError(f"{lf.source}: the agents read observations of several nodes ({', '.join(sorted(envs))})")
        self.env_id = envs.pop()
        self.outputs = {a: specs[a].inputs["obs"].sources[0].split("/", 1)[1] for a in self.agents}
        """The env output each agent reads its observations from (``obs``; ``obs_A`` of pettingzoo.env)."""
        replaced = [specs[a] for a in self.agents]
        kept = [s for s in lf.nodes if s.id not in self.agents and not self._only_for(s, replaced, lf)]
        self.dropped = sorted(set(specs) - {s.id for s in kept} - set(self.agents))
        env_spec = specs[self.env_id]
        readers = [s for s in kept if any(src.startswith(f"{self.env_id}/step") for i in s.inputs.values()
                                          for src in i.sources)]
        env_cls = load_node_class(env_spec.uses) if env_spec.uses else None
        params_model = getattr(env_cls, "Params", None)
        if not readers and params_model is not None and "judge" in getattr(params_model, "model_fields", {}):
            env_spec.params = {**env_spec.params, "judge": False}  # the stand reads step; the env still ends episodes
        self.stands: dict[str, _Stand] = {}
        self._stand_specs = []
        for i, spec in enumerate(replaced):
            inputs = dict(spec.inputs)
            if i == 0:
                inputs["step"] = InputSpec(sources=[f"{self.env_id}/step"], policy="fifo", size=256)
            self.stands[spec.id] = _Stand(list(inputs))
            self._stand_specs.append(NodeSpec(id=spec.id, uses=f"{_Stand.__module__}:_Stand", params={}, inputs=inputs))
        self.lead = self.agents[0]
        self._run_dir = Path(tempfile.mkdtemp(prefix="graphenv-"))
        self.graph = LocalGraph(LaunchFile(name=lf.name, source=lf.source, bus=lf.bus,
                                           nodes=[*kept, *self._stand_specs], run=lf.run),
                                self._run_dir, local=self.stands)
        self._loop = _new_loop()
        self._host = _LoopHost(self._loop)
        self._closed = False
        self._waiting = ""  # the input the call in progress waits on, for the error that says so
        self._sigint = False  # Ctrl-C came during the call in progress
        self._lost: str | None = None  # why the episode in play ended without its end (a node died); reset() clears it
        self._fatal: str | None = None  # why the graph cannot play on (its env exited for good)
        try:
            self.call(self.graph.open(ready_timeout=timeout), timeout + 15)
            self.kernel, self.supervisor = self.graph.kernel, self.graph.supervisor
            self.kernel.exit_listeners.append(self._node_exited)
            self.declared = self.call(self._declare(), timeout)
        except BaseException:
            self.close()
            raise
        self.want: int | None = None  # the content the next dealt episode plays (reset's seed)
        self.plays: dict[int, int | None] = {}  # dealt index -> the seed it was dealt for (None: any)
        self.kernel.book.content = self._content
        self.episode: str | None = None
        self.t = 0
        self.done = True
        self.last: dict[str, dict[str, Any]] = {}
        self.sent = False  # an action is out whose answer was not read (its call was interrupted: Ctrl-C)
        self._record: StepRecord | None = None  # that answer's step record, where it came before the interruption
        self._taken: dict[str, dict[str, Any]] = {}  # observations taken before an interrupted wait (next_obs)
        self._stopping = False  # a stop request is out whose episode's last record was not read yet

    async def _declare(self) -> dict[str, decl.ObsSpaces]:
        """The env node's ``spaces`` for each agent's output (checked); the default from its
        ``describe`` where it serves no ``spaces``."""
        outputs = sorted(set(self.outputs.values()))
        stand = self.stands[self.lead]
        where = f"{self.lf.source}: node {self.env_id!r}'s spaces"
        try:
            declared = await stand.request(self.env_id, "spaces", {})
        except RemoteError as exc:
            if exc.remote_type != "UnknownService":
                raise GraphError(f"{where}: {exc}") from None
            declared = from_describe(await stand.request(self.env_id, "describe", {}), outputs)
        try:
            declared = decl.check(declared, where)
        except ValueError as exc:
            raise GraphError(str(exc)) from None
        missing = [o for o in outputs if o not in declared]
        if missing:
            raise GraphError(f"{where}: nothing declared for the output(s) {', '.join(missing)} the agents read "
                             f"(declared: {', '.join(declared)})")
        return declared

    def spaces(self, agent: str, *, max_actions: int, max_text: int | None) -> AgentSpaces:
        """``agent``'s spaces from the declaration of the output it reads."""
        output = self.outputs[agent]
        try:
            return AgentSpaces(self.declared[output], f"{self.lf.source}: node {self.env_id!r}'s spaces[{output!r}]",
                               max_actions=max_actions, max_text=max_text)
        except ValueError as exc:
            raise GraphError(str(exc)) from None

    def observe(self, spaces_: AgentSpaces, body: dict[str, Any]) -> Any:
        """An obs body as a value of the agent's observation space; a GraphError where it does not fit."""
        try:
            return spaces_.observation(body)
        except ValueError as exc:
            raise GraphError(str(exc)) from None

    @staticmethod
    def _only_for(spec: NodeSpec, replaced: list[NodeSpec], lf: LaunchFile) -> bool:
        """Whether ``spec`` is a node only the replaced agents use (named in their params, read by
        no one else's inputs or params): their model server."""
        def named(node: NodeSpec) -> bool:
            return spec.id in {str(v) for v in node.params.values() if isinstance(v, (str, int))}

        ids = {r.id for r in replaced}
        if not any(named(r) for r in replaced):
            return False
        for other in lf.nodes:
            if other.id == spec.id or other.id in ids:
                continue
            if named(other) or any(src.split("/", 1)[0] == spec.id for i in other.inputs.values() for src in i.sources):
                return False
        return True

    # -- holding the loop --------------------------------------------------------------------------------
    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the graph's loop in the caller's thread; a GraphError past ``timeout``."""
        return self._holding(lambda: self._host.wait(self._loop.create_task(coro), timeout), timeout)

    def _holding(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """``fn()`` in the caller's thread holding the loop (its waits run it); a wait that ended
        early or timed out (``timeout``: this graph's) as the GraphError that says why.

        Ctrl-C meanwhile is held back to a safe point (``_on_sigint``), as ``asyncio.run`` does: a
        KeyboardInterrupt raised inside the loop could land between a message's read and its queueing,
        or between taking the step record and taking the observation, and the graph would wait for a
        message it had already dropped. The KeyboardInterrupt is raised once the call has let go."""
        self._waiting = ""
        sigint = self._catch_sigint()  # before the loop is taken, and given back after it is let go
        try:
            self._host.hold()
            try:
                return fn()
            except _Interrupted as exc:
                if self._sigint:
                    raise KeyboardInterrupt from None
                raise GraphError(str(exc)) from None
            except asyncio.TimeoutError:
                timeout = self.timeout if timeout is None else timeout
                if self._waiting:
                    raise GraphError(f"nothing arrived on {self._waiting} within {timeout:.0f} s "
                                     f"(logs: {self._run_dir / 'logs'})") from None
                raise GraphError(f"the graph did not answer within {timeout:.0f} s") from None
            finally:
                self._host.release()
        finally:
            if sigint:
                _signal.signal(_SIGINT, signal.default_int_handler)
            if self._sigint:
                self._sigint = False
                raise KeyboardInterrupt

    def _catch_sigint(self) -> bool:
        """Hold Ctrl-C back for this call where Python's own handler has it (the main thread, and the
        caller installed no handler of its own); True where it did."""
        if threading.get_ident() != _MAIN_THREAD or _signal.getsignal(_SIGINT) is not signal.default_int_handler:
            return False
        _signal.signal(_SIGINT, self._on_sigint)
        return True

    def _on_sigint(self, signum: int, frame: Any) -> None:
        """Ctrl-C during a call: a wait in progress ends (its messages stay queued); the call then
        raises KeyboardInterrupt. An action already sent is answered on the next call (``sent``)."""
        self._sigint = True
        self._host.interrupt("interrupted (Ctrl-C)")

    @staticmethod
    async def _cancel_rest() -> None:
        """Cancel what is left on the loop (finished runtimes' timers)."""
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    def _node_exited(self, node_id: str, code: int | None, restarting: bool, lost: Collection[str]) -> None:
        """The kernel's word (on the loop) that a node exited: the call waiting on what it would have
        sent ends now with the reason, rather than at its timeout."""
        if node_id in self.stands or self._closed:
            return  # a stand is this process; at close every node exits
        logs = self._run_dir / "logs"
        if not restarting:  # the run waits for a whole graph before it deals again: it never will
            self._fatal = (f"node {node_id!r} exited with code {code} and is not restarted (its restart policy): "
                           f"the graph cannot play on (logs: {logs})")
            self._host.interrupt(self._fatal)
        elif self.episode is not None and not self.done and self.episode in lost:
            self._lost = (f"node {node_id!r} exited with code {code} during episode {self.episode}, which is lost "
                          f"(the run deals it again); call reset() (logs: {logs})")
            self.done = True
            self._host.interrupt(self._lost)

    def _content(self, index: int) -> int:
        """The book's hook (on the graph's loop): a dealt episode plays the seed reset asked for."""
        want = self.want
        self.plays[index] = want
        return index if want is None else want

    # -- in the caller's thread, holding the loop (_holding) --------------------------------
    def get(self, agent: str, name: str) -> Message:
        """The next message on a stand's input; while there is none, the loop runs (in this thread)."""
        queue = self.stands[agent].queue(name)
        while (msg := queue.get_nowait()) is None:
            self._waiting = f"{agent}.{name}"
            self._host.wait(queue.arrival(_Arrival(loop=self._loop)), self.timeout)
        return msg

    def publish(self, actions: dict[str, Any]) -> None:
        for agent, body in actions.items():
            stand = self.stands[agent]
            try:
                if not stand.publish_now("action", body, step=self.t):  # a block edge: wait for its credit
                    self._host.wait(self._loop.create_task(stand.publish("action", body, step=self.t)), self.timeout)
            except (_Interrupted, asyncio.TimeoutError):
                raise
            except Exception as exc:
                raise GraphError(f"sending {agent}'s action failed: {exc}") from exc

    def next_step(self) -> StepRecord:
        """The next record of the env's step stream, typed; a GraphError where it is none."""
        try:
            return parse_step(self.get(self.lead, "step").body)
        except StepRecordError as exc:
            raise GraphError(f"node {self.env_id!r} sent a step that is no step record: {exc}") from None

    def next_obs(self) -> dict[str, dict[str, Any]]:
        """The next observation of every agent (each stand hears the env's obs once); those taken
        before an interrupted wait are kept for the next call."""
        taken = self._taken
        for agent in self.agents:
            if agent not in taken:
                taken[agent] = self.get(agent, "obs").body
        self._taken = {}
        return taken

    def stop_current(self) -> None:
        """End the episode in play with a stop request (the others send no action), and wait for its last step."""
        if not self._stopping:  # sent once, also when the wait below was interrupted and reset() called again
            self.publish({a: ({"stop": True, "reason": "reset"} if a == self.lead else None) for a in self.agents})
            self._stopping = True
        while True:
            record = self.next_step()
            if record["episode"] == self.episode and record["done"]:
                self._stopping, self.done = False, True
                return

    def _reset(self, seed: int | None) -> dict[str, dict[str, Any]]:
        self.want = seed
        fresh = self._lost is not None  # the episode in play was lost: it may be dealt again, under its id
        if fresh:
            self.episode, self.done, self._lost = None, True, None
            self.sent, self._record, self._taken, self._stopping = False, None, {}, False
        if self.sent:
            self._answer()  # the env is a step further than the caller saw: catch up before stopping it
        if not self.done:
            self.stop_current()
        while True:
            bodies = self.next_obs()
            body = bodies[self.lead]
            if body.get("episode") == self.episode or (fresh and int(body.get("t", 0)) != 0):
                continue  # the ended episode's, or a dead node's last words
            self.episode, self.t, self.done = body.get("episode"), int(body.get("t", 0)), False
            dealt = episode_index(self.episode)
            if seed is None or (dealt is not None and self.plays.get(dealt) == seed):
                break
            self.stop_current()  # dealt before this reset asked for its seed: the next one will play it
        self.last = bodies
        return bodies

    def _step(self, actions: dict[str, Any]) -> tuple[StepRecord, dict[str, dict[str, Any]] | None]:
        if self.sent:  # an earlier step was interrupted after its action went out: it happened, take its answer
            self._answer()
            self.playing()
        self.publish(actions)
        self.sent = True
        return self._answer()

    def _answer(self) -> tuple[StepRecord, dict[str, dict[str, Any]] | None]:
        """The answer to the action sent for step ``t``: its record, and the next observations
        (None when the episode ended)."""
        record = self._record
        while record is None:
            taken = self.next_step()
            if taken["episode"] == self.episode and taken["t"] == self.t:
                record = self._record = taken  # kept until the answer is whole: a wait below may be interrupted
        if record["done"]:
            self.done, self.sent, self._record = True, False, None
            return record, None
        self.last = self.next_obs()
        self.t = int(self.last[self.lead].get("t", self.t + 1))
        self.sent, self._record = False, None
        return record, self.last

    # -- the caller's side ------------------------------------------------------------------------------
    def reset(self, seed: int | None) -> dict[str, dict[str, Any]]:
        if self._fatal is not None:
            raise GraphError(self._fatal)
        try:
            return self._holding(lambda: self._reset(seed))
        except GraphError:
            if self._lost is None or self._fatal is not None:
                raise
            return self._holding(lambda: self._reset(seed))  # a node died while this reset waited: once more

    def playing(self) -> None:
        """Raise the GraphError that says why no step can be sent now (none: one can)."""
        if self._fatal is not None or self._lost is not None:
            raise GraphError(self._fatal or self._lost or "")
        if self.done or self._stopping:
            raise GraphError("step() after the episode ended: call reset()")

    def step(self, actions: dict[str, Any]) -> tuple[StepRecord, dict[str, dict[str, Any]] | None]:
        """Send the actions; the step record, and the next observations (None when the episode ended).
        The action goes out from this thread, and the loop runs only while the answer is awaited. A
        step interrupted after its action went out (Ctrl-C) did happen: the next step or reset first
        takes its answer, so caller and env agree on where the episode is."""
        self.playing()
        return self._holding(lambda: self._step(actions))

    def metrics(self) -> dict[str, Any]:
        """The ended episode's metrics as the kernel recorded them ({} if it has not ended within the timeout)."""
        episode = self.episode or ""
        book = self.kernel.book

        def wait() -> dict[str, Any]:
            record = book.records.get(episode)
            if record is None:  # the end is on its way (the judge or the env's done): hear it, not poll for it
                ended: asyncio.Future[dict[str, Any]] = self._loop.create_future()

                def seen(rec: dict[str, Any]) -> None:
                    if rec["episode_id"] == episode and not ended.done():
                        ended.set_result(rec)

                book.on_record.append(seen)
                try:
                    record = self._host.wait(ended, self.timeout)
                except asyncio.TimeoutError:
                    return {}
                finally:
                    book.on_record.remove(seen)
            return dict(record.get("metrics") or {})

        return self._holding(wait)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._host.close()
            self.call(self.graph.close(), 30)
            self.call(self._cancel_rest(), 10)
        finally:
            self._loop.close()
            shutil.rmtree(self._run_dir, ignore_errors=True)


class GraphEnv(gymnasium.Env):
    """A launch file as a Gymnasium env, with the node ``agent`` played by the caller; its spaces
    are the ones the env node declares (``kernel.gym.spaces``)."""

    metadata = {"render_modes": []}

    def __init__(self, launch_file: str | Path, agent: str = "agent", *, sets: Sequence[str] = (),
                 episodes: int = 1_000_000, timeout: float = 120.0, max_text: int | None = None,
                 max_actions: int = 16) -> None:
        self.graph = _Graph(launch_file, [agent], sets=sets, episodes=episodes, timeout=timeout)
        self.agent = agent
        self.env_id, self.dropped, self.supervisor = self.graph.env_id, self.graph.dropped, self.graph.supervisor
        try:
            self.spaces = self.graph.spaces(agent, max_actions=max_actions, max_text=max_text)
        except BaseException:
            self.graph.close()
            raise
        self.actions: list[str] = self.spaces.actions
        """The action names (index i sends ``actions[i]``); empty where the actions are not fixed names."""
        self.dynamic = self.spaces.listed
        self.action_space = self.spaces.action_space
        self.observation_space = self.spaces.observation_space

    @property
    def episode(self) -> str | None:
        """The id of the episode in play (or the last one), as the run's results name it."""
        return self.graph.episode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """The next dealt episode; with ``seed``, one that plays episode index ``seed`` of the
        launch file's run (its level, its seed), so the same seed gives the same episode."""
        super().reset(seed=seed)
        body = self.graph.reset(seed)[self.agent]
        return self.graph.observe(self.spaces, body), {"obs": _same(body)}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.graph.playing()
        last = self.graph.last[self.agent]
        sent = self.spaces.action(action, last)
        record, bodies = self.graph.step({self.agent: sent})
        reward = record["reward"]
        info: dict[str, Any] = {"action": sent, "valid": record["valid"], "step": _same(record)}
        if bodies is None:
            truncated = record["truncated"]
            info["metrics"] = self.graph.metrics()
            return self.graph.observe(self.spaces, last), reward, not truncated, truncated, info
        info["obs"] = _same(bodies[self.agent])
        return self.graph.observe(self.spaces, bodies[self.agent]), reward, False, False, info

    def close(self) -> None:
        self.graph.close()


class GraphParallelEnv(ParallelEnv):
    """A launch file as a PettingZoo ParallelEnv keyed by agent node id: every agent node (one that
    reads the env's ``obs`` and whose ``action`` the env reads), or those named in ``agents``, is
    played by the caller; nodes only they used (their model server) are not started. Each agent's
    spaces are the ones the env node declares for the output it reads."""

    metadata = {"render_modes": [], "name": "framebus_graph", "is_parallelizable": True}

    def __init__(self, launch_file: str | Path, agents: Sequence[str] | None = None, *, sets: Sequence[str] = (),
                 episodes: int = 1_000_000, timeout: float = 120.0, max_text: int | None = None,
                 max_actions: int = 16) -> None:
        if ParallelEnv is object:
            raise GraphError("GraphParallelEnv needs pettingzoo: pip install pettingzoo (setup.sh installs it)")
        self.graph = _Graph(launch_file, agents, sets=sets, episodes=episodes, timeout=timeout)
        self.possible_agents = list(self.graph.agents)
        self.agents: list[str] = []
        self.dropped, self.supervisor = self.graph.dropped, self.graph.supervisor
        try:
            self.spaces = {a: self.graph.spaces(a, max_actions=max_actions, max_text=max_text)
                           for a in self.possible_agents}
        except BaseException:
            self.graph.close()
            raise
        self.actions: list[str] = self.spaces[self.graph.lead].actions
        """The first agent's action names (``spaces[agent].actions`` has each agent's)."""

    def observation_space(self, agent: str) -> spaces.Space:
        return self.spaces[agent].observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self.spaces[agent].action_space

    @property
    def episode(self) -> str | None:
        return self.graph.episode

    def _obs(self, bodies: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {a: self.graph.observe(self.spaces[a], bodies[a]) for a in self.possible_agents}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        bodies = self.graph.reset(seed)
        self.agents = list(self.possible_agents)
        return self._obs(bodies), {a: {"obs": _same(bodies[a])} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        self.graph.playing()
        sent: dict[str, Any] = {}
        for agent in self.agents:
            action = actions.get(agent)
            try:
                sent[agent] = None if action is None else self.spaces[agent].action(action, self.graph.last[agent])
            except ValueError as exc:
                raise ValueError(f"{agent!r}: {exc}") from None
        record, bodies = self.graph.step(sent)
        per_agent = record.get("rewards")
        per_agent = per_agent if isinstance(per_agent, dict) else {}
        rewards = {a: float(per_agent.get(a, record["reward"])) for a in self.agents}
        infos: dict[str, dict[str, Any]] = {a: {"action": sent[a], "valid": record["valid"]} for a in self.agents}
        if bodies is None:
            truncated = record["truncated"]
            metrics = self.graph.metrics()
            for a in self.agents:
                infos[a]["metrics"] = metrics
            obs = self._obs(self.graph.last)
            terms = {a: not truncated for a in self.agents}
            truncs = {a: truncated for a in self.agents}
            self.agents = []
            return obs, rewards, terms, truncs, infos
        return (self._obs(bodies), rewards, {a: False for a in self.agents}, {a: False for a in self.agents}, infos)

    def render(self) -> None:
        return None

    def close(self) -> None:
        self.graph.close()
