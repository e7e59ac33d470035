"""The MiniWoB++ environment node (``miniwob.env``): framebus's browser node playing the Farama
``miniwob`` package's task pages, served by the ``miniwob.site`` node.

Episode i plays task ``i // seeds`` (modulo the number of tasks) with instance seed
``first_seed + i % seeds``: ``seeds: 20`` plays 20 instances of each task in turn, and a seed
replays the same instance (MiniWoB seeds the page's ``Math.random`` with ``Math.seedrandom``; see
page.py for the protocol). The goal is the task's utterance; the observations are the browser
node's (Set-of-Marks screenshot and element list, accessibility tree, url), the actions the
browser node's plus MiniWoB's ``click_xy``, ``drag`` and ``type_text`` (actions.py). The window is
MiniWoB's (500x320; FlightWoB 600x800).

The episode ends when the page ends it: the task's own ``core.endEpisode`` (a submission, a click
on the wrong button) or the page's timer (``core.EPISODE_MAX_TIME``, 10 s unless the task sets
another; -1, "timed out"); also by the agent's ``stop`` (then the page's end if it had one, else 0),
by leaving the task page (-1: its timer is gone with it) and by ``max_steps`` when set. The timer
runs in real time, as in MiniWoB, so a slow agent times out; ``time_limit_s`` overrides it. A step's
reward is 0 until the end, then the task's raw reward (``reward: raw``, the default: what the task
scored, in [-1, 1]) or MiniWoB's time-scaled one (``reward: time``: ``WOB_REWARD_GLOBAL``, which
shrinks a success by the share of the time limit used); ``info`` carries both. ``oracle`` answers
the scripted solver's next action (solver.py), so ``agent.scripted`` plays it.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import Field, model_validator

from kernel.sdk.env import Observation, StepRecord, StepResult
from kernel.sdk.node import Episode, service
from nodes.browser.actions import ACTION_NAMES
from nodes.browser.env import BrowserEnv
from nodes.browser.miniwob import MiniwobMissing, html_dir
from nodes.browser.miniwob.actions import MINIWOB_ACTIONS, MiniwobAction, parse_miniwob_action
from nodes.browser.miniwob.page import LOADED_JS, READY_JS, SNAPSHOT_JS, START_JS, STATE_JS, PageEnd, page_end
from nodes.browser.miniwob.solver import SOLVED_TASKS, SolverError, next_action
from nodes.browser.miniwob.tasks import MiniwobTask, TaskNameError, all_tasks, pick_tasks
from nodes.browser.settle import settle

__all__ = ["MiniwobEnv", "MiniwobParams"]

DATA_MODES = ("train", "test", "default")
# BrowserEnv params that pick pages, sites or tasks: here the task param does, so setting one is an error.
NOT_HERE = ("start_url", "hosts", "intent", "image", "geolocation", "storage_state", "auth_dir", "tasks",
            "site_nodes", "viewport")
START_TIMEOUT_S = 10.0  # longest wait for a task page to load and for its instance to be ready
DRAG_STEPS = 8  # mouse moves between a drag's press and release (jQuery UI's draggable follows moves)


class MiniwobParams(BrowserEnv.Params):
    task: str | list[str] = Field("all", description="the tasks, played in turn: all (every MiniWoB and FlightWoB "
                                  "task), miniwob (no FlightWoB), a name (click-button, flight.AA) or a list of names")
    seeds: int = Field(1, ge=1, description="episodes per task before the next: episode i plays task i // seeds "
                       "with instance seed first_seed + i % seeds")
    first_seed: int = Field(0, description="the instance seed of each task's first episode (Math.seedrandom's)")
    site: str = Field("site", description="the miniwob.site node whose site.url serves the task pages")
    data_mode: Literal["train", "test", "default"] = Field("train", description="core.setDataMode (MiniWoB's "
                                                         "Python package sets train)")
    time_limit_s: float | None = Field(None, gt=0, description="the episode time limit; unset: the task's own "
                                       "(core.EPISODE_MAX_TIME: 10 s unless the task sets another)")
    reward: Literal["raw", "time"] = Field("raw", description="the final step's reward: raw (the task's "
                                           "WOB_RAW_REWARD_GLOBAL) or time (WOB_REWARD_GLOBAL, scaled by the "
                                           "time left)")
    max_steps: int | None = Field(None, gt=0, description="decisions per episode at most (unset: the page's "
                                  "timer ends every episode)")
    observe: list[Literal["som", "axtree", "html", "url", "tabs"]] = Field(
        ["som", "axtree", "url"], description="the views each obs carries (som, axtree, html, url, tabs)")

    @model_validator(mode="after")
    def _no_page_params(self) -> MiniwobParams:
        given = sorted(set(NOT_HERE) & self.model_fields_set)
        if given:
            raise ValueError(f"{', '.join(given)}: not a miniwob.env param (the task param picks the page and its "
                             "window; the miniwob.site node serves it)")
        return self


class MiniwobEnv(BrowserEnv):
    """Publishes ``obs`` (the browser node's views, ``goal`` the utterance, ``task``, ``seed``) and
    ``step`` (``info``: task, seed, raw_reward, env_reward, reason, time_limit_s); serves ``oracle``
    and the browser node's ``page.*`` and ``describe``."""

    Params = MiniwobParams  # type: ignore[assignment]
    params: MiniwobParams  # type: ignore[assignment]
    env = "miniwob"

    @classmethod
    def preflight(cls, params: Any) -> list[str]:
        found = [] if _exists(params.chromium) else [f"chromium: {params.chromium} does not exist"]
        try:
            pick_tasks(params.task, all_tasks())
        except (MiniwobMissing, TaskNameError) as exc:
            found.append(str(exc))
        return found

    async def setup(self) -> None:
        await super().setup()
        self.known = all_tasks(html_dir())
        self.playlist: list[MiniwobTask] = pick_tasks(self.params.task, self.known)
        self.base_url: str | None = None
        self.task = self.playlist[0]
        self.instance_seed = self.params.first_seed
        self.token = ""
        self.limit_ms = 0
        self.end: PageEnd | None = None
        self.started = 0.0

    def instance(self, index: int) -> tuple[MiniwobTask, int]:
        """The task and instance seed episode ``index`` plays."""
        p = self.params
        return self.playlist[(index // p.seeds) % len(self.playlist)], p.first_seed + index % p.seeds

    async def reset(self, episode: Episode) -> None:
        if self.base_url is None:
            self.base_url = str(await self.request(self.params.site, "site.url", None,
                                                   timeout=self.params.reset_timeout_s)).rstrip("/")
        self.task, self.instance_seed = self.instance(episode.index)
        width, height = self.task.window
        await self.start_task(episode.id, {"task_id": self.task.name, "start_url": f"{self.base_url}/{self.task.path}",
                                           "viewport_size": {"width": width, "height": height},
                                           "seed": self.instance_seed})
        assert self.browser is not None
        page = self.browser.page
        await page.wait_for_function(LOADED_JS, timeout=START_TIMEOUT_S * 1000)
        self.token = uuid.uuid4().hex
        limit = None if self.params.time_limit_s is None else round(self.params.time_limit_s * 1000)
        self.limit_ms = int(await page.evaluate(START_JS, {"seed": self.instance_seed, "mode": self.params.data_mode,
                                                           "limitMs": limit, "token": self.token}))
        self.started = time.monotonic()
        await page.wait_for_function(READY_JS, timeout=START_TIMEOUT_S * 1000)
        await self._settle()
        state = await page.evaluate(STATE_JS, self.token)
        self.goal = str(state.get("utterance") or "")
        self.end = None
        await self._capture()

    async def _settle(self) -> None:
        assert self.browser is not None
        s = self.browser.settings
        await settle(self.browser.page, self.browser.tracker, s.settle_timeout_s, s.quiet_ms)

    async def _read_end(self) -> PageEnd | None:
        """The page's end of this episode, once it has one (kept: later readings change nothing)."""
        if self.end is None:
            assert self.browser is not None
            try:
                state = await self.browser.page.evaluate(STATE_JS, self.token)
            except Exception as exc:  # noqa: BLE001 - a page mid-navigation; read again after the next step
                self.log.debug("page state unreadable", error=f"{type(exc).__name__}: {exc}"[:200])
                return None
            self.end = page_end(state)
        return self.end

    # -- the loop's hooks -----------------------------------------------------------------------------
    def observe(self) -> Observation:
        obs = super().observe()
        obs["actions"] = [*ACTION_NAMES, *MINIWOB_ACTIONS]
        obs.update({"task": self.task.name, "seed": self.instance_seed})  # type: ignore[typeddict-item]
        return obs

    def check_action(self, body: Any, obs: Observation) -> bool:
        try:
            action = parse_miniwob_action(body, self.task.window)
        except ValueError as exc:
            self.rejection = str(exc)
            return False
        return True if action is not None else super().check_action(body, obs)

    async def step(self, action: str | None) -> StepResult:
        assert self.browser is not None
        if (end := await self._read_end()) is not None:  # the page ended it (its timer) while the agent thought
            self.taken += 1
            return self._result(end, {"answer": None, "action_error": f"not applied: the episode had ended "
                                      f"({end.reason or 'by the task'})", "url": self.browser.page.url})
        mini = parse_miniwob_action(action, self.task.window)
        stopped = False
        if mini is None:
            result = await super().step(action)
            info, stopped = result.info, result.done  # the browser node's step ends only on the agent's stop
        else:
            self.taken += 1
            error = await self._apply(mini)
            self.last_error = error or ""
            await self._capture()
            info = {"answer": None, "action_error": error, "url": self.browser.page.url}
        end = await self._read_end()
        if end is None and stopped:  # the agent's stop before the page ended it
            end = PageEnd(0.0, 0.0, "stopped by the agent")
        return self._result(end, info)

    async def stop(self, reason: str) -> StepResult:
        """The agent gave up: the page's end if it had one, else 0."""
        assert self.browser is not None
        end = await self._read_end() or PageEnd(0.0, 0.0, f"stopped by the agent: {reason}"[:300])
        return self._result(end, {"answer": None, "action_error": None, "url": self.browser.page.url})

    async def _apply(self, action: MiniwobAction) -> str | None:
        assert self.browser is not None
        mouse, keyboard = self.browser.page.mouse, self.browser.page.keyboard
        try:
            if action.name == "click_xy":
                await mouse.click(*action.points[0])
            elif action.name == "drag":
                (x1, y1), (x2, y2) = action.points
                await mouse.move(x1, y1)
                await mouse.down()
                await mouse.move(x2, y2, steps=DRAG_STEPS)
                await mouse.up()
            else:
                await keyboard.type(action.text)  # keystrokes into the focused element: text is data, never code
        except Exception as exc:  # noqa: BLE001 - the agent reads why; the episode goes on
            return f"{action.name} failed: {str(exc).splitlines()[0][:300]}"
        await self._settle()
        return None

    def _result(self, end: PageEnd | None, info: dict[str, Any]) -> StepResult:
        info.update(task=self.task.name, seed=self.instance_seed, utterance=self.goal,
                    time_limit_s=self.limit_ms / 1000,
                    elapsed_s=round(time.monotonic() - self.started, 3))
        if end is None:
            return StepResult(info=info)
        info.update(raw_reward=end.raw_reward, env_reward=end.env_reward, reason=end.reason)
        reward = end.raw_reward if self.params.reward == "raw" else end.env_reward
        return StepResult(reward=reward, done=True, info=info)

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        """Without a judge, the page's own end scores the episode: its reward (the chosen kind), both
        kinds, success (a positive raw reward) and whether it timed out; a step cap's end scores 0."""
        info = last["info"]
        raw = float(info.get("raw_reward", 0.0))
        return {"reward": float(last["reward"]), "raw_reward": raw, "env_reward": float(info.get("env_reward", 0.0)),
                "success": float(raw > 0), "timed_out": float(info.get("reason") == "timed out"),
                "task": info.get("task"), "seed": info.get("seed"), "utterance": info.get("utterance")}

    # -- services -------------------------------------------------------------------------------------
    @service("oracle")
    async def oracle(self, body: Any) -> str:
        """The scripted solver's next action for the page as it is now (solver.py reads its DOM)."""
        assert self.browser is not None
        if self.task.name not in SOLVED_TASKS:
            raise ValueError(f"the scripted solver does not play {self.task.name}; it plays "
                             f"{', '.join(sorted(SOLVED_TASKS))}")
        snapshot = await self.browser.page.evaluate(SNAPSHOT_JS)
        try:
            return next_action(self.task.name, snapshot)
        except SolverError as exc:
            raise ValueError(f"{self.task.name} seed {self.instance_seed}: {exc}") from None

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        p = self.params
        return {"env": self.env, "actions": [*ACTION_NAMES, *MINIWOB_ACTIONS], "idle": None,
                "observe": list(p.observe), "text": p.text, "ids": self.id_space,
                "tasks": [t.name for t in self.playlist],
                "seeds": p.seeds, "first_seed": p.first_seed, "reward": p.reward, "time_limit_s": p.time_limit_s,
                "max_steps": p.max_steps}


def _exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()
