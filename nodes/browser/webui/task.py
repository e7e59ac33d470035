"""A WebUI task folder: the annotated ground-truth page, its description and its interactions as data.

::

    my_task/
      index.html      the ground truth; atomic elements carry data-filter-by and data-evalby
      style.css       optional, and any other file the page loads (script.js, _images/*.png ...)
      task.md         the description the model sees (Markdown, may reference _images/*)
      steps.json      the interactions: a list of interactions, each a list of steps

A folder in MageBench's own layout (``tasks.md``, ``actions.py``, no ``steps.json``) loads too:
``magebench_folder`` translates its Selenium functions to these steps without running them.

A step is one of ``{"click": "#open"}``, ``{"type": "#name", "text": "Ann"}``,
``{"press": "#name", "key": "Enter"}``, ``{"hover": ".menu"}`` or ``{"wait": 200}`` (ms, at most
``MAX_WAIT_MS``). MageBench ships interactions as Python functions driving Selenium; here they are
data, so a task folder never runs code of its own outside the page, and a bad file is refused
with the file, the interaction, the step and what is allowed, before any browser starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from nodes.browser.webui.aes import IGNORED, KIND, SHORTHANDS, is_filterable

__all__ = ["Click", "Hover", "KINDS", "MAX_WAIT_MS", "Press", "Step", "TASKS_DIR", "Task", "TaskError", "TypeText",
           "Wait", "check_annotations", "load_steps", "load_task", "step_kind", "task_kind"]

MAX_WAIT_MS = 5000  # a step may wait at most this long: a task's time is bounded by its data
TASKS_DIR = Path(__file__).parent / "tasks"  # the task set shipped with framebus
# The kinds of page MageBench's WebUI set covers; a task folder's name starts with its kind and "_".
KINDS = ("landing", "form", "gallery", "nav", "widget")


class TaskError(ValueError):
    """A task (or page) folder that cannot be used; the message names the path and what is wrong."""


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Click(_Step):
    click: Annotated[str, Field(min_length=1)]


class Hover(_Step):
    hover: Annotated[str, Field(min_length=1)]


class TypeText(_Step):
    type: Annotated[str, Field(min_length=1)]
    text: str


class Press(_Step):
    press: Annotated[str, Field(min_length=1)]
    key: Annotated[str, Field(min_length=1)]


class Wait(_Step):
    wait: Annotated[int, Field(ge=0, le=MAX_WAIT_MS)]


Step = Click | Hover | TypeText | Press | Wait
_KINDS: dict[str, tuple[type[_Step], str]] = {
    "click": (Click, '{"click": "<css selector>"}'),
    "hover": (Hover, '{"hover": "<css selector>"}'),
    "type": (TypeText, '{"type": "<css selector>", "text": "<text>"}'),
    "press": (Press, '{"press": "<css selector>", "key": "<key, e.g. Enter>"}'),
    "wait": (Wait, f'{{"wait": <ms, 0-{MAX_WAIT_MS}>}}'),
}
_ALLOWED = "; ".join(form for _, form in _KINDS.values())
_INTERACTIONS = TypeAdapter(list[list[dict[str, Any]]])


def step_kind(step: Step) -> str:
    """The verb of a step (``click``, ``type`` ...)."""
    return next(name for name, (cls, _) in _KINDS.items() if isinstance(step, cls))


def _step(raw: dict[str, Any], where: str) -> Step:
    verbs = [key for key in raw if key in _KINDS]
    if len(verbs) != 1:
        keys = ", ".join(map(repr, raw)) or "none"
        raise TaskError(f"{where}: a step needs exactly one of {', '.join(_KINDS)} (keys given: {keys}); "
                        f"allowed steps: {_ALLOWED}")
    cls, form = _KINDS[verbs[0]]
    try:
        return cls.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"key {'.'.join(map(str, e['loc'])) or verbs[0]!r}: {e['msg']}" for e in err.errors())
        raise TaskError(f"{where}: {problems}; a {verbs[0]} step is {form}") from None


def load_steps(path: Path) -> list[list[Step]]:
    """The interactions of ``steps.json``; TaskError naming the file, interaction and step on a bad one."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"{path}: no steps.json (use [] for a task without interactions)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TaskError(f"{path}: not readable JSON ({err})") from None
    try:
        interactions = _INTERACTIONS.validate_python(raw)
    except ValidationError:
        raise TaskError(f"{path}: must be a list of interactions, each a list of steps (objects); "
                        f"allowed steps: {_ALLOWED}") from None
    steps: list[list[Step]] = []
    for i, interaction in enumerate(interactions):
        if not interaction:
            raise TaskError(f"{path}: interaction {i} is empty; it needs at least one step")
        steps.append([_step(raw_step, f"{path}: interaction {i}, step {k}") for k, raw_step in enumerate(interaction)])
    return steps


class _Annotations(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[int, str, str | None, str | None]] = []  # (line, tag, filter-by, evalby)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if "data-filter-by" in named or "data-evalby" in named:
            self.found.append((self.getpos()[0], tag, named.get("data-filter-by"), named.get("data-evalby")))


def check_annotations(index: Path, strict: bool = True) -> int:
    """Check the ground truth's annotations; the number of atomic elements. An element whose
    ``data-filter-by`` has no filter, or whose ``data-evalby`` names a property the metric does not
    know, would silently score nothing (as in MageBench's evaluator), so it is refused here with
    its line and what is allowed, under both AES rule sets (the refusal changes no score).
    ``strict=False`` lets those through, for MageBench's own folders, whose annotations are not
    ours to fix; an element with only one of the two attributes is refused either way (the
    released evaluator fails on it)."""
    parser = _Annotations()
    parser.feed(index.read_text(encoding="utf-8", errors="replace"))
    if not parser.found:
        raise TaskError(f"{index}: no element carries data-filter-by, so nothing would be scored")
    filters = sorted(p for p in KIND if is_filterable(p))
    known = set(KIND) | set(IGNORED) | set(SHORTHANDS)
    for line, tag, filter_by, evalby in parser.found:
        where = f"{index}:{line}: <{tag}>"
        if filter_by is None or evalby is None:
            raise TaskError(f"{where} needs both data-filter-by and data-evalby")
        if strict and not is_filterable(filter_by.strip()):
            raise TaskError(f"{where}: data-filter-by={filter_by!r} has no filter; use one of {', '.join(filters)}")
        unknown = [p for p in (q.strip() for q in evalby.split("|")) if p and p not in known]
        if strict and unknown:
            raise TaskError(f"{where}: data-evalby names {', '.join(map(repr, unknown))}, which the metric does "
                            f"not score; use properties of: {', '.join(sorted(known))}")
    return len(parser.found)


@dataclass(frozen=True, slots=True)
class Task:
    """A checked task folder."""

    root: Path
    description: str
    interactions: tuple[tuple[Step, ...], ...]
    steps_file: str = "steps.json"  # where the interactions came from (actions.py: a MageBench folder)

    @property
    def name(self) -> str:
        return self.root.name


def task_kind(name: str) -> str:
    """The kind of a task, the prefix of its folder name (``widget_tabs`` is a ``widget``);
    TaskError when the name starts with no kind."""
    kind = name.split("_", 1)[0]
    if "_" not in name or kind not in KINDS:
        raise TaskError(f"{name}: a task folder's name starts with its kind and '_' ({', '.join(KINDS)})")
    return kind


def load_task(folder: str | Path) -> Task:
    """Read and check a task folder (index.html, task.md, steps.json), or one in MageBench's own
    layout (index.html, tasks.md, actions.py: ``magebench_folder``); TaskError naming the path."""
    root = Path(folder)
    if not root.is_dir():
        raise TaskError(f"{root}: no such task folder")
    index = root / "index.html"
    if not index.is_file():
        raise TaskError(f"{index}: a task folder needs its ground-truth index.html")
    from nodes.browser.webui import magebench_folder as mb  # it builds on this module's steps

    if mb.is_magebench_folder(root):
        check_annotations(index, strict=False)
        try:
            description = (root / mb.DESCRIPTION_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise TaskError(f"{root / mb.DESCRIPTION_FILE}: the task description is missing or unreadable "
                            f"({err})") from None
        interactions, _ = mb.load_actions(root / mb.ACTIONS_FILE)
        return Task(root.resolve(), description, tuple(tuple(i) for i in interactions), mb.ACTIONS_FILE)
    check_annotations(index)
    try:
        description = (root / "task.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TaskError(f"{root / 'task.md'}: the task description is missing or unreadable ({err})") from None
    interactions = load_steps(root / "steps.json")
    return Task(root.resolve(), description, tuple(tuple(i) for i in interactions))

