"""``launch serve FILE --openenv``: a graph as an OpenEnv environment server, for trainers that learn
online (TRL, torchforge) and speak OpenEnv's reset/step/state contract.

The HTTP and WebSocket routes, the sessions (one per WebSocket client) and the refusal past
``max_concurrent_envs`` are openenv-core's own (``openenv.core.env_server.create_fastapi_app``):
framebus only supplies the ``Environment`` behind them. Each session plays on one replica of the
graph, a ``kernel.gym.GraphEnv`` (the launch file run in-process with its agent node played by the
client); ``--replicas K`` bounds both the replicas and the sessions, and a client past them gets
openenv's ``CAPACITY_REACHED`` error. A replica outlives its session and serves the next one, since
starting a graph costs seconds and a trainer opens sessions all the time.

Observations are the body's convention keys (``text``, ``actions``, ``goal``, ``idle``, ``env``,
``episode``, ``t``), the step's ``valid`` and ``truncated``, the judge's ``metrics`` at the end, and
the other keys under ``fields`` when they are plain JSON; an array of at most ``SMALL_ARRAY`` numbers
comes as nested lists, anything bigger (a frame, a picture) is left out and named in ``omitted``:
pixels over JSON would cost more than the step, so serve such a graph with ``frames: false`` or use
GraphEnv in-process. An action is a name from ``actions`` or its index.

It binds loopback only unless ``--token`` is given; with a token, every request, HTTP or WebSocket,
must carry it, as ``Authorization: Bearer TOKEN`` or as the URL's first path segment
(``http://host:port/TOKEN``), which stock OpenEnv clients keep when they append ``/ws``.
"""

from __future__ import annotations

import argparse
import functools
import hmac
import json
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, TypeVar

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field
from starlette.websockets import WebSocketDisconnect

from kernel.bus.errors import FramebusError
from kernel.launchfile import is_loopback

__all__ = ["ClosedQuietly", "GraphAction", "GraphEnvironment", "GraphObservation", "ReplicaPool", "ServeRefused",
           "TokenGate", "action_index", "check_bind", "command", "create_app", "is_loopback", "observation_of"]

SMALL_ARRAY = 1024
"""The most numbers an array of the observation may hold to be sent (as nested lists)."""

MAX_LISTED = 4096
"""The most actions an observation of a graph whose actions change with the state may list."""

MIN_TOKEN = 16
"""The fewest characters a token may have: one short enough to guess is no gate."""

CONVENTION = ("text", "actions", "goal", "idle", "env", "episode", "t")
"""The observation keys with fields of their own (docs/environments.md)."""

T = TypeVar("T")


class ServeRefused(FramebusError):
    """``launch serve`` cannot serve as asked (a public address without a token, a bad flag)."""


# -- pure parts: the address check, the action and the observation mapping -------------------------------

def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve a graph where anyone on the network could drive it without a token: a
    ServeRefused naming the flag that is missing or too weak."""
    if token is not None and len(token) < MIN_TOKEN:
        raise ServeRefused(f"--token: a token needs at least {MIN_TOKEN} characters (got {len(token)}); "
                           "e.g. python -c 'import secrets; print(secrets.token_urlsafe())'")
    if not is_loopback(host) and token is None:
        raise ServeRefused(f"--host {host} is not a loopback address (127.0.0.1, ::1, localhost): serving a graph "
                           "to the network needs --token TOKEN, which every request must then carry")


def action_index(action: str | int, fixed: list[str], current: list[str]) -> int:
    """The index GraphEnv takes for ``action``: a name among the fixed action names (or, for an
    environment whose actions change, among the current observation's), or an index into them."""
    names = fixed or current
    if isinstance(action, bool):
        raise ValueError(f"action {action!r}: send an action name or its index")
    if isinstance(action, int):
        if not 0 <= action < len(names):
            raise ValueError(f"action index {action} is out of range: {len(names)} actions ({', '.join(names)})")
        return action
    if action in names:
        return names.index(action)
    raise ValueError(f"unknown action {action!r}; allowed now: {', '.join(names) or 'none'}")


def _plain(value: Any) -> tuple[bool, Any]:
    """(True, the value as JSON data) for plain data and small arrays; (False, None) otherwise."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True, value
    if hasattr(value, "tolist") and hasattr(value, "size"):  # a numpy array or scalar
        return (True, value.tolist()) if int(value.size) <= SMALL_ARRAY else (False, None)
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            ok, plain = _plain(item)
            if not ok:
                return False, None
            out.append(plain)
        return (True, out) if len(json.dumps(out)) <= 64 * SMALL_ARRAY else (False, None)
    if isinstance(value, dict):
        parts = {}
        for key, item in value.items():
            ok, plain = _plain(item)
            if not ok or not isinstance(key, str):
                return False, None
            parts[key] = plain
        return (True, parts) if len(json.dumps(parts)) <= 64 * SMALL_ARRAY else (False, None)
    return False, None


class GraphAction(Action):
    """One decision: an action name from the observation's ``actions``, or its index."""

    action: str | int = Field(description="an action name from the observation's actions, or its index")


class GraphObservation(Observation):
    """The agent's observation in framebus's convention (docs/environments.md), as JSON."""

    text: str = Field(default="", description="the text rendering of the state")
    actions: list[str] = Field(default_factory=list, description="the action names allowed now")
    goal: str | None = Field(default=None, description="the task in words, where the env gives one")
    idle: str | None = Field(default=None, description="the action that does nothing, if any")
    env: str | None = Field(default=None, description="the environment family")
    episode: str | None = Field(default=None, description="the framebus episode id")
    t: int = Field(default=0, description="the decision index within the episode")
    valid: bool = Field(default=True, description="whether the last action was applied")
    truncated: bool = Field(default=False, description="the episode was cut off by a step budget")
    metrics: dict[str, Any] = Field(default_factory=dict, description="the episode's metrics, once it ended")
    fields: dict[str, Any] = Field(default_factory=dict, description="the observation's other keys, as JSON")
    omitted: list[str] = Field(default_factory=list, description="keys left out: arrays over SMALL_ARRAY numbers")


def observation_of(body: dict[str, Any], *, episode: str | None = None, reward: float | None = None,
                   done: bool = False, valid: bool = True, truncated: bool = False,
                   metrics: dict[str, Any] | None = None) -> GraphObservation:
    """A framebus ``obs`` body as an OpenEnv observation (see the module's docstring); ``episode``
    where the body has no id (GraphEnv's bodies leave it out, its ``episode`` has it)."""
    fields: dict[str, Any] = {}
    omitted: list[str] = []
    for key, value in body.items():
        if key in CONVENTION:
            continue
        ok, plain = _plain(value)
        if ok:
            fields[key] = plain
        else:
            omitted.append(key)
    _, metrics_plain = _plain(dict(metrics or {}))
    return GraphObservation(
        text=str(body.get("text") or ""), actions=[str(a) for a in body.get("actions") or []],
        goal=body.get("goal") if isinstance(body.get("goal"), str) else None,
        idle=body.get("idle") if isinstance(body.get("idle"), str) else None,
        env=str(body["env"]) if body.get("env") is not None else None,
        episode=str(body["episode"]) if body.get("episode") is not None else episode,
        t=int(body.get("t") or 0), valid=valid, truncated=truncated, metrics=metrics_plain or {},
        fields=fields, omitted=omitted, reward=reward, done=done)


# -- the replicas ----------------------------------------------------------------------------------------

class Replica:
    """One GraphEnv and the one thread it is used from: its results store (SQLite) and its event loop
    belong to the thread that made them, while OpenEnv calls each session from a thread of its own."""

    def __init__(self, make: Callable[[], Any], number: int) -> None:
        self.number = number
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"replica{number}")
        self.env = self.call(make)

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return self._thread.submit(fn, *args, **kwargs).result()

    def close(self) -> None:
        try:
            self.call(self.env.close)
        finally:
            self._thread.shutdown(wait=True)


class ReplicaPool:
    """Up to ``size`` replicas of the graph, started on demand and lent to one session at a time."""

    def __init__(self, make: Callable[[], Any], size: int, wait_s: float = 60.0) -> None:
        self._make = make
        self.size = size
        self.wait_s = wait_s
        self._idle: list[Replica] = []
        self._count = 0  # replicas started or starting
        self._cond = threading.Condition()
        self._closed = False

    def acquire(self) -> Replica:
        """An idle replica, else a new one while under ``size``, else the next one given back
        (a stateless HTTP /reset holds one for a moment); a RuntimeError after ``wait_s``."""
        deadline = time.monotonic() + self.wait_s
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the server is shutting down")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.size:
                    self._count += 1
                    number = self._count
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"all {self.size} replicas of the graph are in use (launch serve --replicas)")
                self._cond.wait(left)
        try:
            return Replica(self._make, number)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def release(self, replica: Replica) -> None:
        with self._cond:
            if not self._closed:
                self._idle.append(replica)
                self._cond.notify()
                return
        try:  # given back after close(): stopped here, by the session's thread
            replica.close()
        finally:
            with self._cond:
                self._count -= 1
                self._cond.notify_all()

    def close(self, wait_s: float = 15.0) -> None:
        """Stop every replica: the idle ones now, and those sessions still hold as they give them back
        (their WebSockets close as the server stops), waiting up to ``wait_s`` for those."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for replica in idle:
            replica.close()
        deadline = time.monotonic() + wait_s
        with self._cond:
            while self._count > 0 and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)


class GraphEnvironment(Environment):
    """An OpenEnv environment over a replica of the graph, taken at the first reset and given back
    at close, so that OpenEnv's stateless routes (/metadata, /state, /schema), which make and close
    an environment per request, start no graph."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has a replica of its own

    def __init__(self, pool: ReplicaPool, source: str) -> None:
        super().__init__()
        self.pool = pool
        self.source = source
        self.replica: Replica | None = None
        self.body: dict[str, Any] = {}
        self.done = True
        self.steps = 0
        self.episode: str | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> GraphObservation:
        """The next episode; with ``seed``, episode index ``seed`` of the launch file's run (its level
        and seed), as GraphEnv plays it. ``episode_id`` is not used: framebus names its episodes."""
        if self.replica is None:
            self.replica = self.pool.acquire()
        _, info = self.replica.call(self.replica.env.reset, seed=seed)
        self.body, self.done, self.steps = info["obs"], False, 0
        self.episode = self.replica.env.episode
        return observation_of(self.body, episode=self.episode)

    def step(self, action: GraphAction, timeout_s: float | None = None, **kwargs: Any) -> GraphObservation:
        if self.replica is None:
            raise RuntimeError("no episode in play: reset first (OpenEnv's HTTP /step is stateless; a session "
                               "over the WebSocket, /ws, as EnvClient opens, keeps its episode)")
        if self.done:
            raise RuntimeError(f"episode {self.episode} has ended: reset for the next one")
        env = self.replica.env
        index = action_index(action.action, list(env.actions), list(self.body.get("actions") or []))
        _, reward, terminated, truncated, info = self.replica.call(env.step, index)
        self.steps += 1
        step = info.get("step", {})
        if terminated or truncated:
            self.done = True
            return observation_of(self.body, episode=self.episode, reward=float(reward), done=True,
                                  valid=bool(step.get("valid", True)), truncated=bool(truncated),
                                  metrics=info.get("metrics"))
        self.body = info["obs"]
        return observation_of(self.body, episode=self.episode, reward=float(reward),
                              valid=bool(step.get("valid", True)))

    @property
    def state(self) -> State:
        return State(episode_id=self.episode, step_count=self.steps, launch_file=self.source,
                     replica=self.replica.number if self.replica is not None else None)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=Path(self.source).stem, version=None, documentation_url=None,
                                   description=f"the framebus graph {self.source}, its agent node played by the client "
                                   "(actions: a name from the observation's actions, or its index)")

    def close(self) -> None:
        replica, self.replica = self.replica, None
        if replica is not None:
            self.pool.release(replica)


# -- the token gate --------------------------------------------------------------------------------------

class TokenGate:
    """ASGI middleware that admits a request, HTTP or WebSocket (FastAPI's http middleware never
    sees the WebSocket handshake), only with the token: a bearer header, or the first path segment,
    which it strips so OpenEnv's routes see their own paths."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    def admitted(self, scope: dict[str, Any]) -> dict[str, Any] | None:
        """The scope to pass on (its path without the token) or None to refuse it."""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization" and value.startswith(b"Bearer "):
                if hmac.compare_digest(value[7:].strip(), self._token):
                    return scope
        path: str = scope.get("path", "")
        first, _, rest = path.lstrip("/").partition("/")
        if hmac.compare_digest(first.encode(), self._token):
            rest = "/" + rest
            raw = scope.get("raw_path")
            return {**scope, "path": rest, "raw_path": rest.encode() if raw is not None else None}
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        passed = self.admitted(scope)
        if passed is not None:
            await self.app(passed, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "a token is required"})
        else:
            body = json.dumps({"detail": "a token is required: Authorization: Bearer TOKEN, or "
                               "http://host:port/TOKEN/... as the base URL"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": body})


class ClosedQuietly:
    """ASGI middleware that lets a WebSocket session end without a traceback when its client has
    gone first: openenv-core 0.3.0 closes the socket after every session and catches only
    RuntimeError there, while starlette 1.x raises WebSocketDisconnect for a socket the client
    already closed, so uvicorn logged "Exception in ASGI application" at every ordinary goodbye.
    The session is destroyed before that close, so nothing is lost."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            pass


# -- the app and the command -----------------------------------------------------------------------------

def create_app(pool: ReplicaPool, source: str, token: str | None = None) -> Any:
    """openenv-core's FastAPI app over ``pool``, behind the token gate when there is a token."""
    app = ClosedQuietly(create_fastapi_app(functools.partial(GraphEnvironment, pool, source), GraphAction,
                                           GraphObservation, max_concurrent_envs=pool.size))
    return TokenGate(app, token) if token is not None else app


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeRefused(f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})") from None
    sock.listen(128)
    return sock


def command(args: argparse.Namespace) -> int:
    """Check the flags, start the first replica (so a bad launch file fails here, not at a client's
    first reset), then serve until SIGINT or SIGTERM; every replica is stopped on the way out."""
    from kernel import launchfile

    if not args.openenv:
        raise ServeRefused("launch serve: name the protocol to speak: --openenv (the only one so far)")
    if args.replicas < 1:
        raise ServeRefused(f"--replicas {args.replicas}: at least 1")
    if not 0 <= args.port <= 65535:
        raise ServeRefused(f"--port {args.port}: a port is a number from 0 (a free one) to 65535")
    check_bind(args.host, args.token)

    path = launchfile.resolve_path(args.file)
    # uvicorn stops on SIGTERM and then raises it again once it has shut down: with the default action
    # that kills the process before the replicas are stopped, leaving their node processes behind
    signal.signal(signal.SIGTERM, _stopped)
    try:
        return _serve(args, path)
    except _Stopped:
        return 0


class _Stopped(Exception):
    """SIGTERM: the ordinary end of a server."""


def _stopped(signum: int, frame: Any) -> None:
    raise _Stopped


def _serve(args: argparse.Namespace, path: Path) -> int:
    import uvicorn

    from kernel.gym import GraphEnv, GraphError

    # max_actions bounds only the index space of an env whose actions change with the state; a client
    # names its action, so any count the env lists must fit
    pool = ReplicaPool(lambda: GraphEnv(path, agent=args.agent, sets=args.sets, max_actions=MAX_LISTED),
                       args.replicas)
    try:
        first = pool.acquire()
    except GraphError as exc:
        raise ServeRefused(str(exc)) from None
    pool.release(first)
    sock = _listen(args.host, args.port)
    port = sock.getsockname()[1]
    try:
        app = create_app(pool, str(path), args.token)
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"openenv: serving {path} at http://{shown}:{port} (WebSocket /ws; actions "
              f"{', '.join(first.env.actions) or 'as each observation lists them'}; up to {args.replicas} "
              f"session{'s' if args.replicas != 1 else ''})", flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        sock.close()
        pool.close()
    return 0
