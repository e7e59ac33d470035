"""The VAB-CSS environment node (``css.env``): fix one corrupted CSS property, one instance per episode.

Episode i plays instance i (modulo their number) of the instances file. Its project is copied into
the run folder (``RUN/css/<node>/<episode>/project/``) and the instance's corruption is made in that
copy; the shipped projects are only ever read. The agent's whole reply is the action: ``tools.py``
reads its first ``Action:`` line and runs one of VAB's four tools on the copy, never executing
anything the agent wrote. A reply the tools cannot use (no Action line, an unknown function, bad
arguments such as ``__import__('os')``) still spends its round, and VAB's failure text is the next
observation's feedback, as VAB does.

Observations: ``frames`` holds the target screenshot, ``frame`` the current page (on the first
observation and after every change: an edit or a revert); the first text is VAB's opening (the
two screenshots, the page's HTML, the difference description unless ``description`` is off, as in
VAB's Table 5 "w/o NL"), later texts are the tool's feedback. The target is sent with every
observation because an agent keeping only its last observation would otherwise lose it.

The episode ends when the reply says "I have fixed the css style" or after ``rounds`` replies
(VAB's 10). The score is VAB's: the distance (1 - grayscale SSIM, ``similarity.py``) of the last
rendering to the target; ``success`` when it is below 0.1, ``improve`` when it beats the initial
distance by more than 0.05. Every step's ``info`` carries the instance, the round and the initial
distance, the last one the final distance, so ``judge.css`` can score an episode however it ended.
Only the first and the last rendering are scored: a step is the edit and the new screenshot. The
renderer keeps the folder's page open between renders, and the PNG decoding and SSIM run in a worker
thread against the target prepared once per project (``similarity.Target``), so the event loop never
waits on them. The ``oracle`` service answers
the scripted solver's next reply, so ``agent.scripted`` replays it (launch/css_scripted.yaml).

When an episode ends the env keeps its target, first and last renderings side by side for the
report (``images``, ``Node.attach_images``): it holds all three already, where a judge would have
to render them again.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepRecord, StepResult
from kernel.sdk.node import Episode, service
from nodes.browser.css import INSTANCES_PATH, PROJECTS_DIR
from nodes.browser.css.generate import Instance, apply, load
from nodes.browser.css.render import CHROMIUM, Renderer
from nodes.browser.css.rules import Workspace
from nodes.browser.css.scripted import solve
from nodes.browser.css.similarity import Target, improved, succeeded
from nodes.browser.css.tools import END_PHRASE, CssTools, ToolResult

__all__ = ["CssEnv", "CssParams", "load_instances", "opening_text"]

REPO = Path(__file__).resolve().parents[3]


def load_instances(path: str | Path = "") -> list[Instance]:
    """The instances of ``path`` (empty: the shipped data/instances.json); a relative path that does
    not exist from here is read from the repository, so launch files work from any folder."""
    file = Path(path) if path else INSTANCES_PATH
    if not file.is_absolute() and not file.exists() and (REPO / file).exists():
        file = REPO / file
    instances = load(file)
    if not instances:
        raise ValueError(f"{file}: no instance in it")
    return instances


HINT_OPEN = "(Hint, for you alone: "
"""How the lenient setting's hint starts; it ends at the paragraph's end. A training export that
splices a hinted success onto a failure cuts it out (nodes.browser.css.splice)."""


def hint_text(instance: Any) -> str:
    """The lenient setting's secret: which rule and property the corruption touched."""
    return (f"{HINT_OPEN}the difference comes from the {instance.property} property of the rule "
            f"{instance.selector} in {instance.file}; restoring it is all the task needs. Do not mention this "
            f"hint in your replies.)")


def opening_text(html: str, description: str | None, images: bool = True) -> str:
    """VAB's first observation in words: the two screenshots (sent as images; without images the
    text says they are not shown rather than pointing at nothing), the page's HTML and, when given,
    the difference description."""
    if images:
        parts = ["Here is a screenshot of the target design: the first image.",
                 "Here is the screenshot of the current web page: the second image."]
    else:
        parts = ["The screenshots of the target design and of the current web page are not shown in this setting."]
    parts.append(f"Here is the HTML code of the current web page:\n{html.rstrip()}")
    if description:
        parts.append(description)
    return "\n\n".join(parts)


class CssParams(EnvParams):
    instances: str = Field("", description="the instances file (generate.py's JSON); episode i plays instance i "
                           "modulo their number; empty: the shipped nodes/browser/css/data/instances.json")
    rounds: int = Field(10, ge=1, description="replies per episode at most (VAB's round: 10)")
    description: bool = Field(True, description="give the difference description (off: VAB's Table 5 'w/o NL')")
    hint: int | None = Field(None, ge=0, description="VAB's lenient setting for collecting trajectories: from this "
                             "round on the text names the rule and property to restore (0: from the first "
                             "observation; VAB's A.4 hints after 5); none: never")
    frames: bool = Field(True, description="send the target and current screenshots; off: text only")
    chromium: str = Field(CHROMIUM, description="the Chromium binary that renders the pages")
    images: bool = Field(True, description="keep each episode's target, first and last renderings in the run "
                         "folder (media/) for the report; nothing is rendered for them")


class CssEnv(EnvNode):
    """Publishes ``obs`` (screenshots, HTML, description, feedback) and ``step`` (``info``: instance,
    round, distances; on the last step ``success`` and ``improve``); serves ``oracle`` (the scripted
    solver's next reply) and ``describe``."""

    Params = CssParams
    params: CssParams
    env = "css"

    @classmethod
    def preflight(cls, params: Any) -> list[str]:
        """A missing browser or an unreadable instances file stops the run before it starts."""
        found = [] if Path(params.chromium).exists() else [f"chromium: {params.chromium} does not exist"]
        try:
            for inst in load_instances(params.instances):
                if not (PROJECTS_DIR / inst.project / "index.html").is_file():
                    found.append(f"instances: {inst.id} names project {inst.project!r}, which is not shipped")
                    break
        except (OSError, ValueError, TypeError, KeyError) as exc:
            found.append(f"instances: {exc}")
        return found

    async def setup(self) -> None:
        if self.run_dir is None:
            raise RuntimeError("css.env edits a copy of the project under the run folder, and this run has none")
        self.instances = load_instances(self.params.instances)
        self.renderer = Renderer(self.params.chromium)
        self.targets: dict[str, tuple[np.ndarray, Target]] = {}  # project -> (RGB, prepared) of the intact page
        self.instance = self.instances[0]
        self.folder = Path()
        self.tools: CssTools | None = None
        self.html = ""
        self.round = 0
        self.feedback = ""
        self.current: np.ndarray | None = None
        self.start: np.ndarray | None = None  # the corrupted page as the episode began
        self.episode = ""
        self.show_current = False
        self.initial = self.now = 1.0
        self.failures = 0
        self.finished = False

    async def teardown(self) -> None:
        if hasattr(self, "renderer"):
            await self.renderer.close()

    async def _render(self, folder: Path) -> np.ndarray:
        return await self.renderer.pixels(folder)

    async def _distance(self, current: np.ndarray) -> float:
        """The current page's distance to the instance's target, computed in a worker thread."""
        return await asyncio.to_thread(self.targets[self.instance.project][1].distance, current)

    async def reset(self, episode: Episode) -> None:
        self.instance = inst = self.instances[episode.index % len(self.instances)]
        assert self.run_dir is not None  # setup refused a run without one
        root = self.run_dir / "css" / self.id / episode.id
        if root.exists():  # a replayed episode starts afresh
            shutil.rmtree(root)
        root.mkdir(parents=True)
        source = PROJECTS_DIR / inst.project
        if inst.project not in self.targets:
            target = await self._render(source)
            self.targets[inst.project] = (target, await asyncio.to_thread(Target, target))
        self.folder = root / "project"
        corrupting = Workspace.create(source, self.folder)
        apply(corrupting, inst)
        # Loaded afresh, so the corruption is the starting point and not an edit the agent can revert.
        self.tools = CssTools(Workspace(self.folder, source))
        self.html = (self.folder / "index.html").read_text(encoding="utf-8")
        self.current = self.start = await self._render(self.folder)
        self.episode = episode.id
        self.initial = self.now = await self._distance(self.current)
        self.scored = True  # self.now is the distance of self.current
        self.round, self.failures, self.feedback = 0, 0, ""
        self.show_current, self.finished = True, False

    # -- the loop's hooks ---------------------------------------------------------------------------------
    def observe(self) -> Observation:
        inst = self.instance
        if self.round == 0:
            text = opening_text(self.html, inst.description if self.params.description else None, self.params.frames)
        else:
            text = self.feedback
            if self.show_current and self.params.frames:
                text += "\n\nThe second image is the web page's screenshot after your change."
        if self.params.hint is not None and self.round >= self.params.hint:
            text += "\n\n" + hint_text(inst)
        left = self.params.rounds - self.round
        text += f"\n\n({left} round{'s' if left != 1 else ''} left.)"
        obs: Observation = {"actions": [], "idle": None, "goal": "Make the current web page look like the target design.",
                            "text": text}
        obs.update({"instance": inst.id, "project": inst.project, "round": self.round,  # type: ignore[typeddict-item]
                    "rounds": self.params.rounds, "html": self.html, "feedback": self.feedback,
                    "description": inst.description if self.params.description else None})
        obs["frames"] = [self.targets[inst.project][0]]
        obs["frame_labels"] = ["The target design:", "The current web page:"]  # type: ignore[typeddict-item]
        return obs

    def render(self) -> Any:
        return self.current if self.show_current else None

    def check_action(self, body: Any, obs: Observation) -> bool:
        """Any text is a reply the tools answer (their failure texts included); anything else is not."""
        return isinstance(body, str)

    async def step(self, action: str | None) -> StepResult:
        assert self.tools is not None
        if action is None:
            result = ToolResult("No reply arrived. Please reply with Thought: ... Action: ...")
        else:
            result = self.tools.step(action)
        self.round += 1
        self.feedback = result.feedback
        self.failures += 0 if result.ok else 1
        self.show_current = result.changed
        if result.changed:  # the page differs from the last rendering: the agent sees it next
            self.current = await self._render(self.folder)
            self.scored = False
        self.finished = result.finished
        done = result.finished or self.round >= self.params.rounds
        if done:
            await self._score()
            await self._keep_images()
        return StepResult(done=done, info=self._progress(done, result))

    async def _score(self) -> None:
        """The distance of the last rendering, once per episode: only the final page is scored
        (VAB's success and improve), and the agent never sees a distance, so a step's time is the edit
        and the new screenshot, with no SSIM on the way."""
        if not self.scored:
            self.now = await self._distance(self.current)
            self.scored = True

    def _progress(self, done: bool, result: ToolResult | None = None) -> dict[str, Any]:
        """What every step's info carries: the instance, the round, the initial distance and, on the
        last step, the final one with VAB's success and improve (the scores of the page as it is then)."""
        info: dict[str, Any] = {
            "instance": self.instance.id, "project": self.instance.project, "round": self.round,
            "rounds": self.params.rounds, "description": self.params.description,
            "initial_distance": round(self.initial, 4), "tool_failures": self.failures, "finished": self.finished}
        if self.params.hint is not None:  # the lenient setting: its episodes say so (launch export --splice-recovery)
            info["hint"] = self.params.hint
        if result is not None:
            info.update(tool=result.call.name if result.call is not None else None, tool_ok=result.ok)
        if done:
            info.update(final_distance=round(self.now, 4), success=succeeded(self.now),
                        improve=improved(self.now, self.initial), rounds_used=self.round)
        return info

    async def stop(self, reason: str) -> StepResult:
        """The agent gave up: the page is scored as it is now."""
        await self._score()
        await self._keep_images()
        return StepResult(done=True, info=self._progress(True))

    async def _keep_images(self) -> None:
        """The episode's three renderings for the report, written before its last step is published
        (the run may stop once that step's episode has ended). A failure costs the pictures only."""
        if not self.params.images or self.start is None or self.current is None:
            return
        inst = self.instance
        pictures = [("target", self.targets[inst.project][0]),
                    (f"initial (distance {self.initial:.3f})", self.start),
                    (f"final after {self.round} rounds (distance {self.now:.3f})", self.current)]
        try:
            await self.attach_images(self.episode, pictures, caption=f"{inst.id} ({inst.project})", row="pages",
                                     metrics=("success", "improve", "initial_distance", "final_distance"))
        except Exception as exc:  # noqa: BLE001 - the score stands without its pictures
            self.log.warning("could not keep the pictures", episode=self.episode, error=f"{type(exc).__name__}: {exc}")

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        """Without a judge, the env's own scores end the episode (the same ones judge.css reports)."""
        info = last["info"]
        keys = ("instance", "initial_distance", "final_distance", "rounds_used", "finished", "tool_failures")
        return {"success": float(bool(info.get("success"))), "improve": float(bool(info.get("improve"))),
                **{k: info[k] for k in keys if k in info}}

    # -- services -------------------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str:
        """The scripted solver's reply for the current round (it knows the corruption): the lookup,
        the read, the edit, then the end phrase. Past its plan it repeats the end phrase."""
        plan = solve(self.instance, self.html)
        return plan[self.round] if self.round < len(plan) else f"Thought: Done.\n{END_PHRASE}"

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        p = self.params
        return {"env": self.env, "actions": [], "idle": None, "rounds": p.rounds, "description": p.description,
                "instances": len(self.instances)}
