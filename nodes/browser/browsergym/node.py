"""``browsergym.env``: any BrowserGym task as a framebus environment node.

    - id: env
      uses: browsergym.env
      params: {task: miniwob.click-test, environ: {MINIWOB_URL: "http://127.0.0.1:8765/miniwob/"}}

BrowserGym's own Gymnasium environment runs inside the node, on Debian's Chromium, so a task scores
exactly as BrowserGym scores it; framebus adds what BrowserGym has not: the agent, model and judge in
their own processes, the clock, the records, the console. Its observation becomes framebus's
(``observation``): the goal, the accessibility tree with BrowserGym's element ids as ``text``, the
screenshot as the frame. Its action strings pass through unchanged (``click("12")``,
``fill("5", "shoes")``), checked against its action set before they reach the page (an unknown
function or a malformed call is an invalid step), and its reward, ``terminated`` and ``truncated``
go into the step stream.

BrowserGym drives Playwright's synchronous API, which must stay on the thread that started it and
may not share that thread with an event loop: every call into the environment runs on one worker
thread of the node's own, so the loop keeps serving while a page loads.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import importlib.util
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
from pydantic import Field, field_validator

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepRecord, StepResult
from kernel.sdk.node import Episode, service
from kernel.sdk.plain import plain
from nodes.browser.browsergym.observation import clicks, goal_text, page_text

MAX_ACTION_CHARS = 10_000  # an action is a call or a few; a longer body is not one
SUBSETS = ("chat", "infeas", "bid", "coord", "nav", "tab", "miniwob_all", "webarena", "visualwebarena",
           "workarena", "workarena++", "assistantbench")


class BrowserGymParams(EnvParams):
    task: str = Field(description="BrowserGym's task id as its packages register it, without the 'browsergym/' "
                      "prefix: miniwob.click-test, webarena.310, visualwebarena.0, ...")
    environ: dict[str, str] = Field(default_factory=dict, description="environment variables the task's BrowserGym "
                                    "package reads, set before it loads (MINIWOB_URL; WA_SHOPPING and the other "
                                    "WebArena addresses)")
    site_nodes: dict[str, str] = Field(default_factory=dict, description="environment variables whose value is "
                                       "a site node's base URL and a path: {MINIWOB_URL: site/miniwob/} asks node "
                                       "'site' its site.url (a site on port 0 learns its port when it starts)")
    chromium: str = Field("/usr/bin/chromium", description="the Chromium binary Playwright starts")
    action_subsets: list[str] = Field(["chat", "infeas", "bid", "coord", "nav", "tab"], description="BrowserGym's "
                                      f"action subsets the agent may use ({', '.join(SUBSETS)})")
    list_clicks: int = Field(100, ge=0, le=1000, description="obs['actions'] lists noop() and a click on each "
                             "visible clickable element, this many at most (an agent may send any action of "
                             "the subsets)")
    max_steps: int | None = Field(30, ge=1, description="decisions per episode at most (BrowserGym sets none)")

    @field_validator("task")
    @classmethod
    def _registered(cls, value: str) -> str:
        task = value.removeprefix("browsergym/")
        benchmark, dot, name = task.partition(".")
        if not dot or not benchmark or not name:
            raise ValueError(f"task {value!r}: BrowserGym names a task BENCHMARK.NAME (miniwob.click-test, "
                             "webarena.310)")
        if importlib.util.find_spec("browsergym") is None or importlib.util.find_spec("browsergym.core") is None:
            raise ValueError(f"browsergym.env needs BrowserGym and a browser: pip install 'framebus[browser]', then "
                             f"pip install --no-deps browsergym-core==0.14.3 browsergym-{benchmark}==0.14.3 (its "
                             "metadata pins an older Playwright; bash setup.sh does both)")
        if importlib.util.find_spec(f"browsergym.{benchmark}") is None:
            raise ValueError(f"task {value!r}: the package browsergym.{benchmark} is not installed "
                             f"(pip install browsergym-{benchmark})")
        import gymnasium

        importlib.import_module(f"browsergym.{benchmark}")  # registers its tasks (it loads no browser)
        known = sorted(k.removeprefix("browsergym/") for k in gymnasium.registry
                       if k.startswith(f"browsergym/{benchmark}."))
        if task not in known:
            near = difflib.get_close_matches(task, known, n=3)
            raise ValueError(f"task {value!r}: browsergym.{benchmark} registers no such task"
                             + (f" (did you mean {', '.join(near)}?)" if near else "")
                             + f"; it has {len(known)}, e.g. {', '.join(known[:5])}")
        return task

    @field_validator("action_subsets")
    @classmethod
    def _subsets(cls, value: list[str]) -> list[str]:
        wrong = [s for s in value if s not in SUBSETS]
        if wrong or not value:
            raise ValueError(f"unknown action subsets {wrong}; allowed: {', '.join(SUBSETS)}")
        return value


class BrowserGymEnv(EnvNode):
    """Publishes ``obs``/``step`` for one BrowserGym task; serves ``describe`` (the task, its action
    set described in BrowserGym's words for a prompt)."""

    Params = BrowserGymParams
    params: BrowserGymParams
    env = "browsergym"

    async def setup(self) -> None:
        from browsergym.core.action.highlevel import HighLevelActionSet

        p = self.params
        self.env = f"browsergym/{p.task}"
        self._actions = HighLevelActionSet(subsets=list(p.action_subsets))  # type: ignore[arg-type]
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="browsergym")
        self._gym: Any = None  # made at the first reset, once the site nodes can say their addresses
        self._obs: dict[str, Any] = {}
        self.total = 0.0

    async def _start(self) -> None:
        environ = dict(self.params.environ)
        for variable, where in self.params.site_nodes.items():
            node, _, path = where.partition("/")
            url = str(await self.request(node, "site.url", None, timeout=60.0))
            environ[variable] = url.rstrip("/") + "/" + path
        self._gym = await self._call(self._make, environ)

    def _make(self, environ: dict[str, str]) -> Any:
        import gymnasium

        p = self.params
        _default_chromium(p.chromium)
        os.environ.update(environ)
        importlib.import_module(f"browsergym.{p.task.partition('.')[0]}")  # registers its tasks
        return gymnasium.make(f"browsergym/{p.task}", headless=True, action_mapping=self._actions.to_python_code,
                              pw_chromium_kwargs={"executable_path": p.chromium})

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    # -- the EnvNode contract ---------------------------------------------------------------------------
    async def reset(self, episode: Episode) -> None:
        if self._gym is None:
            await self._start()
        self._obs, _info = await self._call(lambda: self._gym.reset(seed=int(episode.seed) % 2**31))
        self.total = 0.0

    def observe(self) -> Observation:
        obs = self._obs
        listed = clicks(obs.get("extra_element_properties") or {}, self.params.list_clicks)
        out: Observation = {"actions": ["noop()", *listed], "idle": None, "goal": goal_text(obs),
                            "text": page_text(obs)}
        out["url"] = obs.get("url", "")  # type: ignore[typeddict-unknown-key]
        out["last_action_error"] = obs.get("last_action_error") or ""  # type: ignore[typeddict-unknown-key]
        return out

    def render(self) -> Any:
        shot = self._obs.get("screenshot")
        return shot[..., :3] if isinstance(shot, np.ndarray) and shot.ndim == 3 else None

    def check_action(self, body: Any, obs: Observation) -> bool:
        return is_action(self._actions, body)

    async def step(self, action: str | None) -> StepResult:
        if action is None:  # no action: nothing reaches the page, the step counts
            return StepResult(0.0, False, {"skipped": True})
        self._obs, reward, terminated, truncated, info = await self._call(self._gym.step, action)
        self.total += float(reward)
        return StepResult(float(reward), bool(terminated or truncated),
                          {**plain(info, big="note", small=64), "terminated": bool(terminated),
                           "return": self.total,
                           "action_error": self._obs.get("last_action_error") or ""},
                          truncated=bool(truncated))

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        return {"reward": self.total, "success": float(self.total > 0), "truncated": float(last["truncated"])}

    async def teardown(self) -> None:
        gym = getattr(self, "_gym", None)
        if gym is not None:
            await self._call(gym.close)
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "task": self.params.task, "actions": ["noop()"], "idle": None,
                "action_set": self._actions.describe(with_long_description=False, with_examples=True)}


def is_action(action_set: Any, body: Any) -> bool:
    """Whether ``body`` is an action of ``action_set`` (BrowserGym's ``HighLevelActionSet``), read by
    BrowserGym's own parser: calls of its functions with literal arguments, nothing else reaches the
    page (the parser turns them into the code BrowserGym runs)."""
    if not isinstance(body, str) or len(body) > MAX_ACTION_CHARS:
        return False
    try:
        action_set.to_python_code(body)
    except Exception:  # its parser raises ValueError, NameError or pyparsing's errors
        return False
    return True


def _default_chromium(path: str) -> None:
    """Make ``path`` the Chromium of every Playwright launch in this process that names none.

    BrowserGym passes its ``pw_chromium_kwargs`` to the page's browser but starts a second one (its
    chat window, ``browsergym.core.chat``) with Playwright's own download, which cannot exist here;
    this node process runs nothing else that launches a browser."""
    from playwright.sync_api import BrowserType

    launch = BrowserType.launch
    if getattr(launch, "framebus_chromium", None) == path:
        return

    def launch_with_chromium(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", path)
        return launch(self, *args, **kwargs)

    launch_with_chromium.framebus_chromium = path  # type: ignore[attr-defined]
    BrowserType.launch = launch_with_chromium  # type: ignore[method-assign]
