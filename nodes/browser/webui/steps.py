"""The interactions of a WebUI task as data: the steps, their file (``steps.json``), and the error
a task folder that cannot be used raises (every reader of a task folder raises it, the steps'
reader first among them, so it lives here, below them all).

A step is one of ``{"click": "#open"}``, ``{"type": "#name", "text": "Ann"}``,
``{"press": "#name", "key": "Enter"}``, ``{"hover": ".menu"}`` or ``{"wait": 200}`` (ms, at most
``MAX_WAIT_MS``). MageBench ships interactions as Python functions driving Selenium; here they are
data, so a task folder never runs code of its own outside the page, and a bad file is refused
with the file, the interaction, the step and what is allowed, before any browser starts
(``magebench_folder`` translates MageBench's functions to these steps without running them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = ["Click", "Hover", "MAX_WAIT_MS", "Press", "Step", "TaskError", "TypeText", "Wait", "load_steps",
           "step_kind"]

MAX_WAIT_MS = 5000  # a step may wait at most this long: a task's time is bounded by its data


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
_KINDS: dict[str, tuple[type[Step], str]] = {
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
