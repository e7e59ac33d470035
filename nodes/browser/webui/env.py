"""The WebUI environment node (``webui.env``): MageBench's WebUI task, one task per episode.

The agent is shown a task's description (``task.md``, or ``tasks.md`` in a folder of MageBench's
own layout, which ``task.load_task`` reads too; its raster images as ``frames``) and answers
with its whole reply as the action: the fenced ``html`` / ``css`` / ``javascript`` blocks become
index.html / style.css / script.js of a page folder (``reply.parse_reply``). A reply that yields
no page (no block, a ``js`` block) is an invalid step: nothing is written, the reason is in the
next observation's ``reply_error`` and the agent may regenerate, ``retries`` times per round (two,
as MageBench gives after a parsing error); after that the round ends without a page, which the
judge scores as a parse error.

``mode: global``: one valid reply ends the episode. ``mode: online``: after that first (global)
reply come ``rounds`` revision rounds (MageBench's ``max_loop``, 4); each sees its current code
and, as ``frame``, the screenshot of its own page just after it loaded (before any interaction, as
MageBench attaches only that one). A revision's blocks override the files they name and keep the
others, as a second ``write_css`` overrides style.css in MageBench; every round is its own folder
and is scored. Each round folder also gets a copy of the task's ``_images/`` (the resources the
description names by those paths).

Pages are written only under the run folder (``RUN/webui/<node>/<episode>/round_<k>/``, fixed
file names), and rendered only through the pack's sandboxed renderer (``render.Renderer``: one fake
origin, no network, no ``file://``). Every step's ``info`` carries ``task`` (the task folder),
``rounds`` and ``pages`` (one folder per finished round, ``None`` for a round that ended without a
page): on the last one, that is what ``judge.webui`` scores, however the episode ended. The ``oracle`` service answers the task's ground truth as a reply,
so ``agent.scripted`` replays it (launch/webui_gold.yaml).
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.browser.webui.render import Renderer, RenderError
from nodes.browser.webui.reply import FILES, ReplyError, parse_reply, to_reply
from nodes.browser.webui.steps import TaskError
from nodes.browser.webui.task import Task, load_task

__all__ = ["WebUIEnv", "default_tasks", "task_folders"]

REPO = Path(__file__).resolve().parents[3]
BUNDLED = Path(__file__).resolve().parent / "tasks"
_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
RASTER = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")


def default_tasks() -> str:
    """The pack's bundled task folders (nodes/browser/webui/tasks)."""
    return str(BUNDLED)


def task_folders(path: str | Path) -> list[Path]:
    """The task folders ``path`` names: itself when it holds an index.html, else its sub-folders
    that do, by name. TaskError when there is none."""
    root = Path(path or default_tasks())
    if not root.is_absolute() and not root.exists() and (REPO / root).exists():
        root = REPO / root  # the launch files' repository paths work from anywhere
    if (root / "index.html").is_file():
        return [root]
    if not root.is_dir():
        raise TaskError(f"{root}: no such task folder")
    found = sorted(p for p in root.iterdir() if (p / "index.html").is_file())
    if not found:
        raise TaskError(f"{root}: no task folder (a folder with index.html) in it")
    return found


def _task_images(task: Task, limit: int) -> tuple[list[np.ndarray], list[str]]:
    """The raster images ``task.md`` shows (``![..](path)`` inside the task folder), decoded to RGB,
    at most ``limit``; and a note per image that is not sent (outside the folder, not raster, past
    the limit, unreadable), so the text can say so as MageBench's "image not available." does."""
    from PIL import Image

    frames: list[np.ndarray] = []
    notes: list[str] = []
    base = task.root.resolve()
    for ref in _IMAGE.findall(task.description):
        file = (base / ref).resolve()
        if not file.is_relative_to(base) or not file.is_file() or file.suffix.lower() not in RASTER:
            notes.append(f"{ref}: image not available.")
            continue
        if len(frames) >= limit:
            notes.append(f"{ref}: image not available.")
            continue
        try:
            with Image.open(file) as image:
                frames.append(np.asarray(image.convert("RGB")))
        except OSError:
            notes.append(f"{ref}: image not available.")
    return frames, notes


def _fenced(files: dict[str, str]) -> str:
    try:
        return to_reply(files)
    except ValueError:  # a file holding ``` cannot be fenced; show it plainly
        return "\n\n".join(f"{name}:\n{text}" for name, text in files.items())


class WebUIParams(EnvParams):
    tasks: str = Field("", description="a folder of WebUI task folders (or one task folder), ours or in MageBench's "
                       "own layout (tasks.md, actions.py); episode i plays task i (modulo their number); empty: the "
                       "pack's bundled tasks (nodes/browser/webui/tasks)")
    mode: Literal["global", "online"] = Field("global", description="global: one reply per episode; online: "
                                              "then `rounds` revisions, each seeing its rendered page")
    rounds: int = Field(4, ge=0, description="online: revision rounds after the first reply (MageBench's max_loop)")
    retries: int = Field(2, ge=0, description="invalid replies (no block, a block labelled other than html, css or "
                         "javascript) allowed per round before it ends without a page (MageBench: two retries)")
    frames: bool = Field(True, description="send images: the task's pictures (frames) and, online, the screenshot "
                         "of the agent's page (frame); off: text only")
    max_images: int = Field(10, ge=0, description="task images sent at most (MageBench's --max_image)")
    chromium: str = Field("/usr/bin/chromium", description="the Chromium binary that renders the agent's page")
    settle_timeout_s: float = Field(5.0, gt=0, description="longest wait for a rendered page to settle")


class WebUIEnv(EnvNode):
    """Publishes ``obs`` (the description, images, current code and screenshot online, the last
    reply's error) and ``step`` (``info.round``; on the last step ``task`` and ``pages``); serves
    ``oracle`` (the ground truth as a reply) and ``describe``."""

    Params = WebUIParams
    params: WebUIParams
    env = "webui"

    @classmethod
    def preflight(cls, params: Any) -> list[str]:
        """A missing browser or a task folder that cannot be scored stops the run before it starts."""
        found = [] if Path(params.chromium).exists() else [f"chromium: {params.chromium} does not exist"]
        try:
            for folder in task_folders(params.tasks):
                load_task(folder)
        except TaskError as exc:
            found.append(f"tasks: {exc}")
        return found

    async def setup(self) -> None:
        if self.run_dir is None:
            raise RuntimeError("webui.env writes the agent's pages under the run folder, and this run has none")
        self.tasks = [load_task(folder) for folder in task_folders(self.params.tasks)]
        self.renderer = Renderer(self.params.chromium, self.params.settle_timeout_s)
        self.images: dict[Path, tuple[list[np.ndarray], list[str]]] = {}
        self.task = self.tasks[0]
        self.folder = Path()
        self.round = self.tries = 0
        self.pages: list[str | None] = []
        self.files: dict[str, str] = {}
        self.screenshot: np.ndarray | None = None
        self.render_note = ""
        self.error = ""
        self.parsed: dict[str, str] | None = None
        self.rejection: str | None = None

    async def teardown(self) -> None:
        if hasattr(self, "renderer"):
            await self.renderer.close()

    @property
    def total_rounds(self) -> int:
        return 1 + (self.params.rounds if self.params.mode == "online" else 0)

    async def reset(self, episode: Episode) -> None:
        self.task = self.tasks[episode.index % len(self.tasks)]
        assert self.run_dir is not None  # setup refused a run without one
        self.folder = self.run_dir / "webui" / self.id / episode.id
        if self.folder.exists():  # a replayed episode starts afresh
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.round = self.tries = 0
        self.pages, self.files = [], {}
        self.screenshot, self.render_note, self.error = None, "", ""
        self.parsed = self.rejection = None
        if self.task.root not in self.images:
            self.images[self.task.root] = _task_images(self.task, self.params.max_images)

    # -- the loop's hooks -------------------------------------------------------------------------
    def observe(self) -> Observation:
        frames, notes = self.images[self.task.root]
        parts = [self.task.description.rstrip()]
        if notes:
            parts.append("\n".join(notes))
        if self.error:
            parts.append(f"Your last reply could not be used: {self.error}. Reply again with the complete page.")
        if self.round > 0:
            parts.append("## Your current code\n\n" + (_fenced(self.files) if self.files else "(no file written yet)"))
            parts.append(self.render_note or "The image shows your page as rendered, before any interaction.")
        obs: Observation = {"actions": [], "idle": None, "goal": self.task.description, "text": "\n\n".join(parts)}
        obs.update({"task": self.task.name, "mode": self.params.mode, "round": self.round,  # type: ignore[typeddict-item]
                    "rounds": self.total_rounds, "reply_error": self.error, "files": dict(self.files)})
        if frames:
            obs["frames"] = list(frames)
        obs["frame_labels"] = [f"Task image {i}:" for i in range(1, len(frames) + 1)]  # type: ignore[typeddict-item]
        obs["frame_labels"].append("Your page as rendered, before any interaction:")  # type: ignore[typeddict-item]
        return obs

    def render(self) -> Any:
        return self.screenshot

    def check_action(self, body: Any, obs: Observation) -> bool:
        """A reply is valid when it yields a page (``parse_reply``); why it does not is kept for the
        next observation."""
        self.parsed, self.rejection = None, None
        if not isinstance(body, str):
            self.rejection = f"the reply must be text, not {type(body).__name__}"
            return False
        try:
            self.parsed = parse_reply(body)
        except ReplyError as exc:
            self.rejection = str(exc)
            return False
        return True

    async def step(self, action: str | None) -> StepResult:
        if action is None or self.parsed is None:
            self.tries += 1
            self.error = self.rejection or "no reply arrived"
            self.rejection = None
            if self.tries <= self.params.retries:
                return StepResult(info={**self._progress(), "reply_error": self.error})
            return await self._end_round(None)
        folder = self.folder / f"round_{self.round}"
        folder.mkdir()
        if (self.task.root / "_images").is_dir():  # the resources the description offers, at the same paths
            shutil.copytree(self.task.root / "_images", folder / "_images")
        files = {**self.files, **self.parsed} if self.params.mode == "online" else dict(self.parsed)
        for name in FILES:
            if name in files:
                (folder / name).write_text(files[name], encoding="utf-8")
        self.files, self.parsed, self.error = files, None, ""
        return await self._end_round(folder)

    async def _end_round(self, folder: Path | None) -> StepResult:
        """Close the current round with its page folder (None: no page), then end the episode or
        render the page for the next round."""
        self.pages.append(str(folder) if folder is not None else None)
        info = {**self._progress(), "reply_error": self.error if folder is None else None}
        self.round += 1
        self.tries = 0
        if self.round >= self.total_rounds:
            return StepResult(done=True, info=info)
        await self._screenshot()
        return StepResult(info=info)

    def _progress(self) -> dict[str, Any]:
        """What every step's info carries, so a judge can score an episode however it ended (its
        own last round, a stop request, the time limit): the task folder, the pages written so far
        (one per finished round) and how many rounds the episode has."""
        return {"round": self.round, "task": str(self.task.root), "pages": list(self.pages),
                "rounds": self.total_rounds, "mode": self.params.mode}

    async def stop(self, reason: str) -> StepResult:
        """The agent gave up: the rounds it did not finish are scored as rounds without a page."""
        return StepResult(done=True, info=self._progress())

    async def _screenshot(self) -> None:
        """The latest page as loaded (before any interaction), for the next round's ``frame``."""
        latest = next((Path(p) for p in reversed(self.pages) if p is not None), None)
        self.screenshot, self.render_note = None, ""
        if latest is None:
            self.render_note = "No page has been written yet, so there is no rendering to show."
            return
        if not (latest / "index.html").is_file():
            self.render_note = "Your page has no index.html, so nothing could be rendered."
            return
        if not self.params.frames:
            return
        from PIL import Image

        try:
            page = await self.renderer.open(latest)
        except RenderError as exc:
            self.render_note = f"Your page did not render: {exc}"
            return
        try:
            assert page.page is not None
            png = await page.page.screenshot(type="png")
        except Exception as exc:  # noqa: BLE001 - a page that breaks the screenshot is reported, never fatal
            self.render_note = f"Your page could not be captured: {str(exc).splitlines()[0] if str(exc) else exc!r}"
            return
        finally:
            await page.close()
        with Image.open(io.BytesIO(png)) as image:
            self.screenshot = np.asarray(image.convert("RGB"))

    # -- services ---------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str:
        """The task's ground truth (its index.html, style.css, script.js) as a reply: what a perfect
        model would answer in every round."""
        files = {name: (self.task.root / name).read_text(encoding="utf-8")
                 for name in FILES if (self.task.root / name).is_file()}
        return to_reply(files)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        p = self.params
        return {"env": self.env, "actions": [], "idle": None, "mode": p.mode, "rounds": self.total_rounds,
                "retries": p.retries, "tasks": [t.name for t in self.tasks]}
