"""The browser environment node: Chromium through Playwright, speaking docs/environments.md with
VisualWebArena's observations and action grammar.

One Chromium per node process; each episode gets a fresh browser context built from a task in
VWA's own fields (``start_url`` with `` |AND| `` tabs and ``__SITE__`` placeholders, ``viewport_size``,
``geolocation``, ``storage_state``, ``intent``, ``image``). Here the task comes from the params
(``episode_task``), or, with the ``tasks`` param, from WebArena-format task files: ``episode.index``
picks the task, placeholders resolve from ``hosts`` (and the ``site_nodes``' ``site.url``), a task's
``storage_state`` is the logged-in state of its sites' ``site.login`` where site nodes serve them all,
else the file of that name under ``auth_dir`` (nodes/browser/login.py), a task with
``require_reset`` has its sites reset first (a remote site cannot be: that is warned and counted,
never pretended), its ``gold_actions`` are the ``oracle`` service's
answers, and judges read the resolved task from ``vwa.task``. Actions are VWA's strings
(``click [12]``, ``type [3] [shoes] [0]``, ``stop [42]``): ``obs["actions"]`` lists their names,
and a malformed action or an id not on the page is an invalid step whose message the agent reads
in the next observation's ``last_action_error``. ``stop [answer]`` ends the episode with
``info["answer"]``; the final page stays open for the judges' ``page.*`` services until a judge
releases it (``page.release``); with ``keep_finished`` pages open, the next episode waits for a
lagging judge (``judge_wait_s``) rather than close a page before it is scored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import urllib.request
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.env_wrappers import Wrapper
from kernel.sdk.node import Episode, service
from nodes.browser.actions import ACTION_NAMES, ELEMENT_ACTIONS, ActionError, parse_action
from nodes.browser.gold import GoldLocatorError, parse_gold, resolve_gold
from nodes.browser.login import MissingLoginState, find_state_file, merge_states, state_sites
from nodes.browser.sandbox import Sandbox, netloc_of
from nodes.browser.session import AND, BrowserEpisode, BrowserSession, Capture, EpisodeSpec, Settings
from nodes.browser.vwa.tasks import TaskFileError, VwaTask, load_task_files, resolve_placeholders

__all__ = ["BrowserEnv", "spec_from_task"]

View = Literal["som", "axtree", "html", "url", "tabs"]
PLACEHOLDER = re.compile(r"__[A-Z][A-Z0-9_]*__")
SITE_NODE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(/[A-Za-z0-9._~-]+)*")  # a node id (launch files'), then a path
MAX_EXPRESSION = 100_000
KEEP_TASKS = 64  # resolved tasks kept for vwa.task beyond those of the open pages
REPO = Path(__file__).resolve().parents[2]


def spec_from_task(task: dict[str, Any], hosts: dict[str, str], viewport: tuple[int, int]) -> EpisodeSpec:
    """An episode's browser set-up from a task's VWA fields; ``hosts`` maps placeholders such as
    ``__CLASSIFIEDS__`` to base URLs. Raises ValueError naming the field that is wrong."""
    label = f"task {task['task_id']}" if "task_id" in task else "task"
    start = task.get("start_url") or "about:blank"
    if not isinstance(start, str):
        raise ValueError(f"{label}: start_url must be a string, got {type(start).__name__}")
    for key, base in hosts.items():
        start = start.replace(key, base.rstrip("/"))
    if (left := PLACEHOLDER.search(start)) is not None:
        raise ValueError(f"{label}: start_url names {left.group()} but no base URL is configured for it "
                         f"(param hosts has {', '.join(sorted(hosts)) or 'none'})")
    urls = tuple(u.strip() for u in start.split(AND.strip()) if u.strip()) or ("about:blank",)
    size = task.get("viewport_size") or {}
    if not isinstance(size, dict):
        raise ValueError(f"{label}: viewport_size must be a mapping like {{'width': 1280}}, got {size!r}")
    view = (int(size.get("width", viewport[0])), int(size.get("height", viewport[1])))
    if min(view) <= 0:
        raise ValueError(f"{label}: viewport_size must be positive, got {size!r}")
    images = task.get("image") or ()
    images = (images,) if isinstance(images, str) else tuple(str(i) for i in images)
    return EpisodeSpec(start_urls=urls, viewport=view, geolocation=task.get("geolocation") or None,
                       storage_state=task.get("storage_state") or None, intent=str(task.get("intent") or ""),
                       images=images)


def site_node(value: str) -> tuple[str, str]:
    """A ``site_nodes`` value as (node id, path under its base URL): ``shopping`` -> ("shopping", ""),
    ``shopping/admin`` -> ("shopping", "/admin"). Several placeholders may name one node: they share
    its leases and one reset."""
    node, _, path = value.partition("/")
    return node, f"/{path}" if path else ""


class BrowserEnv(EnvNode):
    """Publishes ``obs`` (the views chosen in ``observe``, the goal, the last action's error) and
    ``step`` (``info``: url, answer, action_error); serves ``page.url``, ``page.evaluate``,
    ``page.content``, ``page.images``, ``page.screenshot``, ``page.goto`` and ``page.release`` on an
    episode's final page for judges, and ``describe``."""

    class Params(EnvParams):
        start_url: str = Field("about:blank", description="the first page; ' |AND| ' between URLs opens several tabs; "
                               "placeholders like __CLASSIFIEDS__ are replaced from hosts")
        hosts: dict[str, str] = Field(default_factory=dict, description="placeholder -> base URL, e.g. "
                                      "{__CLASSIFIEDS__: 'http://127.0.0.1:9980'}; every base URL is an allowed site")
        allowed_hosts: list[str] = Field(default_factory=list, description="more host:port (or URLs) the browser "
                                         "may load; anything else is blocked")
        intent: str = Field("", description="the task in words (obs goal)")
        image: list[str] = Field(default_factory=list, description="the task's input images (obs goal_images)")
        viewport: tuple[int, int] = Field((1280, 2048), description="[width, height] of the page (VWA: 1280x2048)")
        geolocation: dict[str, float] | None = Field(None, description="{latitude, longitude} the page sees")
        storage_state: str | None = Field(None, description="a Playwright storage-state file (login cookies)")
        auth_dir: str | None = Field(None, description="the folder of the tasks' storage_state files "
                                     "(./.auth/<sites>_state.json, made by WebArena's auto_login script) for sites "
                                     "not served by site_nodes; unset: the working folder")
        observe: list[View] = Field(["som", "url", "tabs"], description="the views each obs carries: som (the "
                                    "Set-of-Marks element list), axtree, html, url, tabs (titles)")
        text: Literal["som", "axtree", "html", "none"] = Field("som", description="which view is also obs text "
                                                               "(axtree: prefixed by the tab titles, as in VWA)")
        frame: Literal["screenshot", "som"] = Field("som", description="what the frame shows when frames are on: "
                                                    "the plain screenshot or the Set-of-Marks one")
        ids: Literal["auto", "som", "axtree"] = Field("auto", description="the ids element actions name (auto: "
                                                      "the text view's, else som when observed, else axtree)")
        max_steps: int | None = Field(30, gt=0, description="decisions per episode (VWA: 30)")
        settle_timeout_s: float = Field(5.0, gt=0, description="longest wait for a page to settle after an action")
        quiet_ms: int = Field(30, ge=0, description="a settled page's DOM has been unchanged this long (and its "
                              "fetches and short timers are done)")
        frame_quality: int | None = Field(None, ge=1, le=100, description="frames from a JPEG screenshot at this "
                                          "quality (cheaper); unset: lossless PNG")
        chromium: str = Field("/usr/bin/chromium", description="the Chromium binary")
        keep_finished: int = Field(2, ge=1, description="finished episodes whose final page stays open for judges")
        judge_wait_s: float = Field(120.0, ge=0, description="with keep_finished final pages open and unjudged, the "
                                    "next episode waits this long for a judge's page.release before closing the "
                                    "oldest unread (0: never wait)")
        tasks: list[str] = Field(default_factory=list, description="VWA task files (a task or a list per file); "
                                 "episode i plays task i (modulo their number); empty: the task is the params")
        site_nodes: dict[str, str] = Field(default_factory=dict, description="placeholder -> site node id, e.g. "
                                           "{__CLASSIFIEDS__: classifieds}: its site.url is the base URL, its "
                                           "site.reset resets it; node/path is a part of a node's site, e.g. "
                                           "{__SHOPPING_ADMIN__: shopping/admin} (WebArena's admin is the shop's /admin)")
        reset_timeout_s: float = Field(30.0, gt=0, description="longest wait for a site reset (require_reset)")
        leases: bool = Field(True, description="lease the site_nodes for each episode (shared, or exclusive to "
                             "reset them), so replicas of this env can share the sites; false: sites this env alone uses")
        lease_timeout_s: float = Field(600.0, gt=0, description="longest wait for the site_nodes' leases at an "
                                       "episode's start (an exclusive one waits for other replicas' episodes "
                                       "on the site to be judged)")

        @field_validator("hosts", "site_nodes")
        @classmethod
        def _placeholders(cls, hosts: dict[str, str]) -> dict[str, str]:
            for key in hosts:
                if not PLACEHOLDER.fullmatch(key):
                    raise ValueError(f"key {key!r} is not a placeholder like __CLASSIFIEDS__")
            return hosts

        @field_validator("site_nodes")
        @classmethod
        def _node_paths(cls, nodes: dict[str, str]) -> dict[str, str]:
            for key, value in nodes.items():
                if not isinstance(value, str) or not SITE_NODE.fullmatch(value):
                    raise ValueError(f"{key}: {value!r} is not a site node id or node/path (e.g. shopping, or "
                                     "shopping/admin for a part of its site)")
            return nodes

    env = "browser"
    params: Params

    @classmethod
    def preflight(cls, params: Any) -> list[str]:
        """A missing browser, an unreadable task file or a task's missing login file stops the run
        before any process starts."""
        found = [] if Path(params.chromium).exists() else [
            f"chromium: {params.chromium} does not exist (bash setup.sh installs Debian's chromium)"]
        try:
            tasks = load_task_files(_task_path(t) for t in params.tasks)
        except TaskFileError as exc:
            return [*found, f"tasks: {exc}"]
        missing: list[str] = []
        for task in tasks:
            if task.storage_state and not _served_locally(task.storage_state, task.sites, params.site_nodes):
                try:
                    find_state_file(task.storage_state, params.auth_dir, f"{task.source}: task {task.task_id}")
                except MissingLoginState as exc:
                    missing.append(str(exc))
        if missing:
            more = f" (and {len(missing) - 3} more tasks)" if len(missing) > 3 else ""
            found.append("tasks: " + "; ".join(missing[:3]) + more)
        return found

    async def setup(self) -> None:
        p = self.params
        self.sandbox = Sandbox([*p.hosts.values(), *p.allowed_hosts])
        self.session = BrowserSession(Settings(p.chromium, p.settle_timeout_s, p.quiet_ms, p.frame_quality))
        await self.session.start()
        self.browser: BrowserEpisode | None = None
        self.episode_id: str | None = None
        self.finished: OrderedDict[str, BrowserEpisode] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        self.capture = Capture()
        self.rejection: str | None = None
        self.last_error = ""
        self.goal_images: tuple[str, ...] = ()
        wanted = set(p.observe)
        if p.text != "none":
            wanted.add(p.text)
        self.wanted = wanted
        self.id_space = self._id_space()
        self.hosts: dict[str, str] = dict(p.hosts)  # site_nodes' base URLs join at the first episode
        self.tasks: list[VwaTask] = load_task_files(_task_path(t) for t in p.tasks)
        self.played: OrderedDict[str, dict[str, Any]] = OrderedDict()  # episode id -> its resolved task
        self.taken = 0  # decisions applied in this episode: the index of the next gold action
        self.leased: dict[str, list[str]] = {}  # episode id -> site nodes it holds a lease on
        self.ended = False
        self._released = asyncio.Event()  # set by each page.release
        self._releases_seen = False  # a judge here releases pages: waiting for it is worth it
        self._patient = True  # until a wait for a release that never came
        self.resettable: dict[str, bool] = {}  # base URL -> whether it is a local site that answers POST /reset
        self.resets_skipped: dict[str, int] = {}  # site -> require_reset tasks started on it unreset

    def _id_space(self) -> str | None:
        p = self.params
        if p.ids != "auto":
            return p.ids
        if p.text in ("som", "axtree"):
            return p.text
        return "som" if "som" in self.wanted else "axtree" if "axtree" in self.wanted else None

    async def teardown(self) -> None:
        if getattr(self, "leased", None):  # a last courtesy, bounded: the sites may be stopping too
            await asyncio.gather(*(self.request(node, "site.release", {"prefix": f"{self.id}/"}, timeout=0.5)
                                   for node in self._site_node_ids()), return_exceptions=True)
        current = getattr(self, "browser", None)
        for browser in [*getattr(self, "finished", {}).values(), *([current] if current else [])]:
            await browser.close()
        if hasattr(self, "session"):
            await self.session.close()

    # -- episodes ---------------------------------------------------------------------------------
    def episode_task(self, episode: Episode) -> dict[str, Any]:
        """The task (VWA's fields) that ``episode`` plays: the ``tasks`` files' task at its index,
        placeholders resolved (those without a base URL are left for the judge to refuse), or the params'."""
        p = self.params
        if self.tasks:
            task = self.tasks[episode.index % len(self.tasks)]
            bases = {key.strip("_").lower(): url for key, url in self.hosts.items()}
            return dict(resolve_placeholders(task.model_dump(mode="json", exclude_none=True), bases, strict=False))
        return {"start_url": p.start_url, "intent": p.intent, "image": list(p.image), "geolocation": p.geolocation,
                "storage_state": p.storage_state, "viewport_size": {"width": p.viewport[0], "height": p.viewport[1]}}

    async def reset(self, episode: Episode) -> None:
        await self._site_urls()
        task = self.episode_task(episode)
        holder = await self._lease_sites(episode.id, task)
        try:
            if task.get("require_reset"):
                await self._reset_sites(task, holder)
            await self.start_task(episode.id, task)
        except BaseException:
            await self._release_sites(episode.id)
            raise

    # -- sharing the sites between replicas ----------------------------------------------------------
    # Every episode leases each of the site_nodes from its reset until its judge releases the final
    # page (page.release) or the page is closed: shared where it only browses, exclusive on the
    # sites its task resets, so a reset never lands under another replica's running or unjudged
    # episode. Leases are taken in site-node order (no two replicas wait on each other in a cycle).
    def _site_node_ids(self) -> list[str]:
        return sorted({site_node(value)[0] for value in self.params.site_nodes.values()})

    def _reset_nodes(self, task: dict[str, Any]) -> set[str]:
        if not task.get("require_reset"):
            return set()
        nodes = self.params.site_nodes
        return {site_node(nodes[key])[0] for site in task.get("sites") or ()
                if (key := f"__{str(site).upper()}__") in nodes}

    async def _lease_sites(self, episode_id: str, task: dict[str, Any]) -> str:
        holder = f"{self.id}/{episode_id}"
        await self._release_sites(episode_id)  # a replayed episode asks afresh
        if not self.params.leases:
            return holder
        exclusive = self._reset_nodes(task)
        wait = self.params.lease_timeout_s
        for node in self._site_node_ids():
            mode = "exclusive" if node in exclusive else "shared"
            await self.request(node, "site.lease", {"holder": holder, "mode": mode, "timeout_s": wait},
                               timeout=wait + 30.0)
            self.leased.setdefault(episode_id, []).append(node)
        return holder

    async def _release_sites(self, episode_id: str) -> None:
        for node in self.leased.pop(episode_id, []):
            await self.request(node, "site.release", {"holder": f"{self.id}/{episode_id}"},
                               timeout=self.params.reset_timeout_s)

    def _release_later(self, episode_id: str) -> None:
        if episode_id in self.leased:
            task = asyncio.get_running_loop().create_task(self._release_sites(episode_id))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def _site_urls(self) -> None:
        """Ask each site node its base URL once (a site on port 0 learns its port when it starts);
        at the same time drop leases an earlier run of this node (before a restart) left behind."""
        if self.params.site_nodes and not self.hosts.keys() >= self.params.site_nodes.keys():
            for node in self._site_node_ids():
                await self.request(node, "site.release", {"prefix": f"{self.id}/"}, timeout=self.params.reset_timeout_s)
        for key, value in self.params.site_nodes.items():
            if key not in self.hosts:
                node, path = site_node(value)
                url = str(await self.request(node, "site.url", None, timeout=self.params.reset_timeout_s))
                self.hosts[key] = url.rstrip("/") + path
                self.sandbox.allow(url)

    async def _reset_sites(self, task: dict[str, Any], holder: str) -> None:
        """VWA's ``require_reset``: every site of the task back to its seeded state before it starts:
        the site node's ``site.reset`` (under ``holder``'s exclusive lease) where one is named, else
        ``POST <base>/reset`` for a local site given by URL (no other replica is known to share it
        then). A remote site (the benchmark's Docker sites) cannot be reset from here: the task starts
        on it as it is, which is warned once per site and counted (summary.json, ``browser``)."""
        label = f"task {task.get('task_id', '?')}"
        done: set[str] = set()  # the shop and its admin are one site: one reset
        for site in task.get("sites") or ():
            key = f"__{str(site).upper()}__"
            if key in self.params.site_nodes:
                node = site_node(self.params.site_nodes[key])[0]
                if node in done:
                    continue
                done.add(node)
                await self.request(node, "site.reset", {"holder": holder} if self.params.leases else None,
                                   timeout=self.params.reset_timeout_s)
            elif key in self.hosts:
                base = self.hosts[key]
                if base not in self.resettable:
                    self.resettable[base] = await asyncio.to_thread(_is_local_site, base, self.params.reset_timeout_s)
                if self.resettable[base]:
                    await asyncio.to_thread(_post_reset, base, self.params.reset_timeout_s)
                    continue
                if str(site) not in self.resets_skipped:
                    self.log.warning("cannot reset a remote site: the task starts on it as it is (restart its "
                                     "containers to reset it, as WebArena's refresh script does)",
                                     site=str(site), url=base, task=task.get("task_id"))
                self.resets_skipped[str(site)] = self.resets_skipped.get(str(site), 0) + 1
                self.summarize("browser", {"resets_skipped": sum(self.resets_skipped.values()),
                                           "resets_skipped_per_site": dict(self.resets_skipped)})
            else:
                raise ValueError(f"{label} requires a reset of site {site!r} but neither site_nodes nor hosts "
                                 f"name {key}")

    async def start_task(self, episode_id: str, task: dict[str, Any]) -> None:
        """Open a fresh context for ``task``; the previous episode's page is kept for its judge."""
        spec = spec_from_task(task, self.hosts, self.params.viewport)
        if spec.storage_state is not None:
            spec = dataclasses.replace(spec, storage_state=await self._login_state(task, spec.storage_state))
        sandbox = Sandbox(self.sandbox.allowed)
        for url in spec.start_urls:  # a task's own start pages are sites it may visit
            if netloc_of(url) is not None:
                sandbox.allow(url)
        if self.browser is not None and self.episode_id is not None:
            await self._wait_for_judges()
            self._finish(self.episode_id, self.browser)
        self.browser, self.episode_id = None, episode_id
        self.browser = await self.session.open_episode(spec, sandbox)
        self.played[episode_id] = task
        for old in [e for e in self.played if e not in self.finished and e != episode_id][:-KEEP_TASKS]:
            del self.played[old]  # tasks are small: a judge reads vwa.task even after a page is closed
        self.taken = 0
        self.ended = False  # set by the last wrapper when this episode's last step is done
        self.goal, self.goal_images = spec.intent, spec.images
        self.last_error, self.rejection = "", None
        await self._capture()

    async def _login_state(self, task: dict[str, Any], storage_state: str | dict[str, Any]) -> str | dict[str, Any]:
        """The state a task's ``storage_state`` names: made by the site nodes' ``site.login`` when they
        serve every site the file logs in to, else the file itself (under ``auth_dir``)."""
        if not isinstance(storage_state, str):
            return storage_state
        sites = state_sites(storage_state, task.get("sites") or ())
        nodes = self.params.site_nodes
        if _served_locally(storage_state, task.get("sites") or (), nodes):
            states = [await self.request(nodes[f"__{site.upper()}__"], "site.login", {"site": site},
                                         timeout=self.params.reset_timeout_s) for site in sites]
            return merge_states(states)
        label = f"task {task.get('task_id', '?')}"
        return str(find_state_file(storage_state, self.params.auth_dir, label))

    async def _wait_for_judges(self) -> None:
        """Backpressure from the judges: when one lags (a program_html check or a model grader while
        the agent races through short episodes), the next episode waits for a page.release instead
        of closing a final page nobody has read yet. Where no judge releases pages (none reads
        ``step``, or one with ``release: false``), one wait in vain ends the waiting."""
        if not self.readers("step", observers=False) or self.params.judge_wait_s <= 0:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.params.judge_wait_s
        while len(self.finished) >= self.params.keep_finished and (self._releases_seen or self._patient):
            self._released.clear()
            try:
                await asyncio.wait_for(self._released.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                self._patient = self._releases_seen
                self.log.warning("final page closed unjudged", episode=next(iter(self.finished)),
                                 waited_s=self.params.judge_wait_s)
                return

    def _finish(self, episode_id: str, browser: BrowserEpisode) -> None:
        self.finished[episode_id] = browser
        while len(self.finished) > self.params.keep_finished:
            old_id, old = self.finished.popitem(last=False)
            self._close_later(old)
            self._release_later(old_id)

    def _close_later(self, browser: BrowserEpisode) -> None:
        task = asyncio.get_running_loop().create_task(browser.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _capture(self) -> None:
        assert self.browser is not None
        frame = self.params.frame if self.params.frames else None
        self.capture = await self.browser.capture(self.wanted, frame, self.id_space)

    # -- the loop's hooks -------------------------------------------------------------------------
    def observe(self) -> Observation:
        obs: Observation = {"actions": list(ACTION_NAMES), "idle": None, "goal": self.goal}
        data = self.capture.data
        for view in self.params.observe:
            obs[view] = data[view]  # type: ignore[literal-required]
            if view == "tabs":
                obs["tab"] = data["tab"]  # type: ignore[typeddict-unknown-key]
        text = self.params.text
        if text == "axtree":
            titles = " | ".join(f"Tab {i}{' (current)' if i == data['tab'] else ''}: {t}"
                                for i, t in enumerate(data["tabs"]))
            obs["text"] = f"{titles}\n\n{data['axtree']}"
        elif text != "none":
            obs["text"] = data[text]
        if self.goal_images:
            obs["goal_images"] = list(self.goal_images)  # type: ignore[typeddict-unknown-key]
        obs["last_action_error"] = self.last_error  # type: ignore[typeddict-unknown-key]
        return obs

    def render(self) -> Any:
        return self.capture.frame

    def check_action(self, body: Any, obs: Observation) -> bool:
        """An action is valid when it parses and any element it names is on the current page; the
        reason it is not is kept for the next observation."""
        self.rejection = None
        if body is None:
            return False
        try:
            action = parse_action(body)
        except ActionError as exc:
            self.rejection = str(exc)
            return False
        if action.name in ELEMENT_ACTIONS and action.element not in self.capture.targets:
            if self.id_space is None:
                self.rejection = "element actions need ids, and this environment observes neither som nor axtree"
            else:
                self.rejection = (f"element [{action.element}] is not on the current page; use an id from the "
                                  f"latest observation ({self.id_space} ids change when the page does)")
            return False
        return True

    async def step(self, action: str | None) -> StepResult:
        assert self.browser is not None
        self.taken += 1
        info: dict[str, Any] = {"answer": None}
        if action is None:
            self.last_error = self.rejection or ""
            info["action_error"] = self.rejection
            self.rejection = None
        else:
            parsed = parse_action(action)
            if parsed.name == "stop":
                info.update(answer=parsed.text, action_error=None, url=self.browser.page.url)
                return StepResult(done=True, info=info)
            error = await self.browser.execute(parsed, self.capture.targets)
            self.last_error = error or ""
            info["action_error"] = error
        await self._capture()
        info["url"] = self.browser.page.url
        return StepResult(info=info)

    def wrappers(self) -> list[Wrapper]:
        return [*super().wrappers(), _SeesTheEnd(self)]

    def metrics(self, last: Any) -> dict[str, Any]:
        return {**super().metrics(last), "answered": float(last["info"].get("answer") is not None)}

    # -- services ---------------------------------------------------------------------------------
    def _browser_for(self, body: Any) -> BrowserEpisode:
        if body is not None and not isinstance(body, dict):
            raise ValueError(f"a page.* request body is a mapping, not {type(body).__name__}")
        episode = (body or {}).get("episode")
        if episode is None or episode == self.episode_id:
            if self.browser is None:
                raise ValueError("no episode has started yet" if self.episode_id is None else
                                 f"episode {self.episode_id}'s page was released by a judge")
            return self.browser
        if not isinstance(episode, str):
            raise ValueError(f"episode must be an episode id string, not {type(episode).__name__}")
        if episode not in self.finished:
            raise ValueError(f"episode {episode} is not open here (kept: the current one and the last "
                             f"{self.params.keep_finished} finished ones)")
        return self.finished[episode]

    @staticmethod
    def _text_arg(body: dict[str, Any], key: str, *, optional: bool = False) -> str:
        value = body.get(key, "" if optional else None)
        if not isinstance(value, str):
            raise ValueError(f"{key} must be a string, got {type(value).__name__}")
        if len(value) > MAX_EXPRESSION:
            raise ValueError(f"{key} is longer than {MAX_EXPRESSION} characters")
        return value

    @service("page.url")
    async def page_url(self, body: Any) -> str:
        return self._browser_for(body).page.url

    @service("page.evaluate")
    async def page_evaluate(self, body: Any) -> Any:
        """The value of a JavaScript expression (or function) on the page, e.g. VWA's locators."""
        browser = self._browser_for(body)
        return await browser.page.evaluate(self._text_arg(body or {}, "expression"))

    @service("page.content")
    async def page_content(self, body: Any) -> str:
        return await self._browser_for(body).page.content()

    @service("page.images")
    async def page_images(self, body: Any) -> list[str]:
        browser = self._browser_for(body)
        return await browser.image_sources(self._text_arg(body or {}, "selector", optional=True))

    @service("page.screenshot")
    async def page_screenshot(self, body: Any) -> bytes:
        return await self._browser_for(body).screenshot_png()

    @service("page.goto")
    async def page_goto(self, body: Any) -> str:
        """Open a URL (of the allowed sites) in the episode's focused tab, as program_html does."""
        browser = self._browser_for(body)
        return await browser.goto_for_judge(self._text_arg(body or {}, "url"))

    @service("page.release")
    async def page_release(self, body: Any) -> bool:
        """A judge is done with a finished episode's page: close it now."""
        episode = (body or {}).get("episode") if isinstance(body, dict) else None
        browser = self.finished.pop(episode, None) if isinstance(episode, str) else None
        if browser is None and episode == self.episode_id and self.ended:
            browser, self.browser = self.browser, None  # judged before the next episode began
        self._releases_seen = True
        self._released.set()
        if browser is not None:
            await browser.close()
        if isinstance(episode, str) and (episode != self.episode_id or self.ended):
            await self._release_sites(episode)  # judged: its sites are free for a reset
        return browser is not None

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        p = self.params
        return {"env": self.env, "actions": list(ACTION_NAMES), "idle": None, "observe": list(p.observe),
                "text": p.text, "ids": self.id_space, "viewport": list(p.viewport),
                "sites": sorted(self.sandbox.allowed), "max_steps": p.max_steps, "hosts": dict(self.hosts),
                "tasks": len(self.tasks)}

    @service("vwa.task")
    def vwa_task(self, body: Any) -> dict[str, Any]:
        """The task an episode plays (placeholders resolved) and the sites' base URLs, for its judge."""
        episode = (body or {}).get("episode") if isinstance(body, dict) else None
        if episode not in self.played:
            raise ValueError(f"episode {episode!r} is not known here (kept: the tasks of open pages and the last "
                             f"{KEEP_TASKS} others)")
        return {"task": self.played[episode],
                "base_urls": {key.strip("_").lower(): url for key, url in self.hosts.items()}}

    @service("oracle")
    async def oracle(self, body: Any) -> str | None:
        """The current task's next gold action (its ``gold_actions``), or None where it has none; a
        gold action that names its element by a locator (nodes/browser/gold.py) is answered with the
        id that element has in the observation just published, the ids the next step acts on."""
        task = self.played.get(self.episode_id or "", {})
        gold = task.get("gold_actions") or []
        if self.taken >= len(gold):
            return None
        action = str(gold[self.taken])
        if self.browser is None:
            return action
        try:
            if parse_gold(action).locator is None:
                return action
            return await resolve_gold(action, self.browser.page, self.capture.targets)
        except GoldLocatorError as exc:
            raise ValueError(f"task {task.get('task_id', '?')} gold action {self.taken}: {exc}") from None


class _SeesTheEnd(Wrapper):
    """Last of the wrappers: tells the environment its episode is over (by its own stop, a stop
    request or the time limit), so a judge's page.release may free the episode's sites."""

    def __init__(self, env: BrowserEnv) -> None:
        self.env = env

    def result(self, t: int, result: StepResult) -> StepResult:
        if result.done:
            self.env.ended = True
        return result


def _task_path(path: str) -> Path:
    """A relative task file is looked for where the run started, then in this repository (so the
    launch files' ``nodes/browser/vwa/data/...`` work from anywhere)."""
    given = Path(path)
    if given.is_absolute() or given.exists():
        return given
    in_repo = REPO / given
    return in_repo if in_repo.exists() else given


def _served_locally(storage_state: str, task_sites: Any, site_nodes: dict[str, str]) -> bool:
    """Whether site nodes serve every site a state file logs in to (then they make the state)."""
    sites = state_sites(storage_state, task_sites)
    return bool(sites) and all(f"__{site.upper()}__" in site_nodes for site in sites)


def _is_local_site(base_url: str, timeout: float) -> bool:
    """Blocking: whether ``base_url`` is one of our local sites (its ``/healthz`` names the site), the
    only kind ``POST /reset`` restores; anything else is a remote site that cannot be reset from here."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/healthz", timeout=timeout) as reply:
            data = json.loads(reply.read(65536) or b"null")
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("site"), str) and "seed" in data


def _post_reset(base_url: str, timeout: float) -> None:
    """Blocking (run in a thread): a local site's ``POST /reset``."""
    request = urllib.request.Request(base_url.rstrip("/") + "/reset", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        reply.read()
