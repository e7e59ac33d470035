"""``openenv.env``: any OpenEnv environment server as a framebus environment node.

    - id: env
      uses: openenv.env
      params: {package: envs/echo_env, actions: [hello, bye], max_steps: 8}

The server is either running already (``url``, on this machine only: the node sends it whatever the
agent says, and an episode's observations may hold anything the env shows) or started here from an
OpenEnv environment package (``package``, the folder ``openenv init`` makes, served with uvicorn
as its ``app`` on a free loopback port, and stopped at teardown). The node talks to it with
openenv-core's own WebSocket client (one session for the whole run), resets it at each episode with
the episode's seed, and steps it with the agent's action.

An OpenEnv action is a JSON object whose schema the server publishes (``/schema``); the agent's
action name goes into one of its fields (``action_field``: by default the only required one). The
allowed names are the observation's ``actions`` where it lists them (an env served by
``launch serve --openenv`` does), else the ``actions`` param; with neither, any text is an action.
The observation's ``text`` (or the ``text_key`` field, or else every field as ``key: value`` lines)
is the text view, ``goal`` the goal, and the whole observation is kept under ``openenv``. The step
result's reward and done are the step's; an env that never ends an episode needs ``max_steps``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode
from kernel.sdk.processes import stop_group

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_url(url: str) -> str:
    """``url`` if it is an http(s) or ws(s) address on this machine; a ValueError naming the param
    otherwise, since the node would send the server every action and trust what it answers."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        raise ValueError(f"params.url {url!r}: an http://, https://, ws:// or wss:// address is expected")
    host = parts.hostname or ""
    if host not in LOOPBACK and not host.startswith("127."):
        raise ValueError(f"params.url {url!r}: the server must be on this machine (127.0.0.1, localhost or ::1), "
                         f"not {host or 'an empty host'}; to play a remote one, tunnel it to a loopback port")
    return url


def action_field(schema: dict[str, Any], wanted: str | None) -> tuple[str, str | None]:
    """The action field the agent's name goes into and its JSON type: ``wanted`` if the schema has
    it, else its only required field besides ``metadata``; a ValueError that lists the fields."""
    props: dict[str, Any] = schema.get("properties") or {}
    fields = [k for k in props if k != "metadata"]
    if wanted is not None:
        if wanted not in props:
            raise ValueError(f"params.action_field {wanted!r}: the server's action has the fields "
                             f"{', '.join(fields) or 'none'}")
        name = wanted
    else:
        required = [k for k in schema.get("required") or [] if k != "metadata"]
        if len(required) != 1:
            raise ValueError(f"params.action_field: the server's action has {len(required)} required fields "
                             f"({', '.join(required) or 'none'}; fields: {', '.join(fields) or 'none'}): name the "
                             "one the agent's action goes into")
        name = required[0]
    kind = props[name].get("type")
    return name, kind if isinstance(kind, str) else None


def action_payload(action: str, field: str, kind: str | None) -> dict[str, Any]:
    """The OpenEnv action for an agent's action name: the name in ``field``, as a number where the
    field is one."""
    if kind == "integer":
        return {field: int(action)}
    if kind == "number":
        return {field: float(action)}
    return {field: action}


def text_of(observation: dict[str, Any], key: str | None) -> str:
    """The text view of an OpenEnv observation: the ``key`` field, its ``text``, or every field."""
    if key is not None:
        return str(observation.get(key, ""))
    if isinstance(observation.get("text"), str):
        return observation["text"]
    return "\n".join(f"{k}: {json.dumps(v) if not isinstance(v, str) else v}" for k, v in observation.items())


def framebus_obs(observation: dict[str, Any], actions: list[str] | None, text_key: str | None) -> Observation:
    """An OpenEnv observation in framebus's convention (docs/environments.md)."""
    listed = observation.get("actions")
    names = [str(a) for a in listed] if isinstance(listed, list) else list(actions or [])
    obs: Observation = {"actions": names, "idle": None, "text": text_of(observation, text_key)}
    if isinstance(observation.get("goal"), str):
        obs["goal"] = observation["goal"]
    obs["openenv"] = observation  # type: ignore[typeddict-unknown-key]
    return obs


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OpenEnvParams(EnvParams):
    url: str | None = Field(None, description="a running OpenEnv server on this machine (http://127.0.0.1:PORT; "
                            "with a token: http://127.0.0.1:PORT/TOKEN)")
    package: str | None = Field(None, description="an OpenEnv environment folder (as `openenv init` makes) to "
                                "serve here on a free loopback port, stopped at teardown")
    app: str | None = Field(None, description="the ASGI app to serve here (module:attribute): with package, "
                            "imported from its folder (default server.app:app); alone, an installed one")
    action_field: str | None = Field(None, description="the action field the agent's action goes into "
                                     "(default: the only required one)")
    actions: list[str] | None = Field(None, description="the action names offered where the observations "
                                      "list none (none either: any text is an action)")
    text_key: str | None = Field(None, description="the observation field that is the text view (default: "
                                 "text, else every field)")
    start_timeout_s: float = Field(60.0, gt=0, description="seconds for a started server to answer /health")
    step_timeout_s: float = Field(60.0, gt=0, description="seconds to wait for a reset or step answer")

    @field_validator("url")
    @classmethod
    def _loopback(cls, value: str | None) -> str | None:
        return check_url(value) if value is not None else None

    @model_validator(mode="after")
    def _one_server(self) -> "OpenEnvParams":
        served = self.package is not None or self.app is not None
        if (self.url is None) == (not served):
            raise ValueError("give either params.url (a running OpenEnv server) or params.package / params.app "
                             "(an OpenEnv environment to serve here), not both and not neither")
        if self.app is not None and ":" not in self.app:
            raise ValueError(f"params.app {self.app!r}: module:attribute expected (e.g. server.app:app)")
        module = self.served_app().split(":")[0]
        source = Path(self.package or ".") / module.replace(".", "/")
        if self.package is not None and not source.with_suffix(".py").is_file():
            raise ValueError(f"params.package {self.package!r}: no {module} module there "
                             f"(params.app {self.served_app()!r}; `openenv init NAME` makes server/app.py)")
        return self

    def served_app(self) -> str:
        return self.app or "server.app:app"


class OpenEnvEnv(EnvNode):
    """Publishes ``obs``/``step`` for an OpenEnv environment server."""

    Params = OpenEnvParams
    params: OpenEnvParams
    env = "openenv"

    async def setup(self) -> None:
        from openenv.core import GenericEnvClient

        p = self.params
        self._server: asyncio.subprocess.Process | None = None
        self._client: Any = None
        url = p.url if p.url is not None else await self._serve(Path(p.package).resolve() if p.package else None)
        self.url = url.rstrip("/")
        try:
            schema = await asyncio.to_thread(self._get, "/schema")
        except (OSError, urllib.error.URLError, ValueError) as exc:
            raise RuntimeError(f"params.url {url!r}: no OpenEnv server answers {self.url}/schema ({exc}); start "
                               "it first (e.g. launch serve FILE --openenv --port PORT)") from None
        self.field, self.kind = action_field(schema.get("action") or {}, p.action_field)
        self._client = GenericEnvClient(base_url=self.url, message_timeout_s=p.step_timeout_s)
        await self._client.connect()
        self._last: dict[str, Any] = {}

    def _get(self, path: str) -> Any:
        http = self.url.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        with urllib.request.urlopen(http + path, timeout=10) as reply:
            return json.loads(reply.read())

    async def _serve(self, package: Path | None) -> str:
        """Start the app with uvicorn on a free loopback port (from the package's folder, where there
        is one); its address once /health answers."""
        port = free_port()
        app = self.params.served_app()
        env = dict(os.environ)
        if package is not None:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(package), env.get("PYTHONPATH")) if p)
        self._server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning", cwd=str(package) if package is not None else None, env=env,
            start_new_session=True, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        where = f"params.package {str(package)!r}" if package is not None else f"params.app {app!r}"
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + self.params.start_timeout_s
        while time.monotonic() < deadline:
            if self._server.returncode is not None:
                err = (await self._server.stderr.read()).decode(errors="replace")[-2000:] if self._server.stderr else ""
                raise RuntimeError(f"{where}: the server ({app}) exited with {self._server.returncode}: {err}")
            try:
                await asyncio.to_thread(self._get, "/health")
                self.log.info("OpenEnv server started", app=app, package=str(package or ""), url=self.url)
                return self.url
            except (OSError, urllib.error.URLError, ValueError):
                await asyncio.sleep(0.2)
        raise RuntimeError(f"{where}: the server did not answer {self.url}/health within "
                           f"{self.params.start_timeout_s:.0f} s (params.start_timeout_s)")

    # -- the EnvNode contract ---------------------------------------------------------------------------
    async def reset(self, episode: Episode) -> None:
        result = await self._client.reset(seed=int(episode.seed))
        self._last = dict(result.observation or {})
        self.ret = 0.0

    def observe(self) -> Observation:
        return framebus_obs(self._last, self.params.actions, self.params.text_key)

    def check_action(self, body: Any, obs: Observation) -> bool:
        if not obs["actions"]:  # no list anywhere: the env takes text
            return isinstance(body, str) and body != ""
        return super().check_action(body, obs)

    async def step(self, action: str | None) -> StepResult:
        if action is None:  # no action: OpenEnv has no idle step, so the world waits and the step counts
            return StepResult(0.0, False, {"skipped": True})
        result = await self._client.step(action_payload(action, self.field, self.kind))
        self._last = dict(result.observation or {})
        reward = float(result.reward or 0.0)
        self.ret += reward
        return StepResult(reward, bool(result.done), {"return": self.ret, "openenv_done": bool(result.done)})

    def metrics(self, last: Any) -> dict[str, Any]:
        info = last["info"]
        out = {"return": self.ret, "truncated": float(last["truncated"])}
        if "success" in self._last:
            out["success"] = float(bool(self._last["success"]))
        elif "success" in info:
            out["success"] = float(bool(info["success"]))
        return out

    async def teardown(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            try:
                await asyncio.wait_for(client.close(), 10)
            except (OSError, asyncio.TimeoutError, RuntimeError):
                pass
        server = getattr(self, "_server", None)
        if server is not None:
            await stop_group(server, 5.0, 2.0)
