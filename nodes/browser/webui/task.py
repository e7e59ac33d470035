"""A WebUI task folder: the annotated ground-truth page, its description and its interactions as data.

::

    my_task/
      index.html      the ground truth; atomic elements carry data-filter-by and data-evalby
      style.css       optional, and any other file the page loads (script.js, _images/*.png ...)
      task.md         the description the model sees (Markdown, may reference _images/*)
      steps.json      the interactions: a list of interactions, each a list of steps

A folder in MageBench's own layout (``tasks.md``, ``actions.py``, no ``steps.json``) loads too:
``magebench_folder`` translates its Selenium functions to these steps without running them.

The steps and their file are ``steps``; a bad task folder is refused with a TaskError naming the
file and what is wrong, before any browser starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from nodes.browser.webui import magebench_folder as mb
from nodes.browser.webui.aes import IGNORED, KIND, SHORTHANDS, is_filterable
from nodes.browser.webui.steps import Step, TaskError, load_steps

__all__ = ["KINDS", "TASKS_DIR", "Task", "check_annotations", "load_task", "task_kind"]

TASKS_DIR = Path(__file__).parent / "tasks"  # the task set shipped with framebus
# The kinds of page MageBench's WebUI set covers; a task folder's name starts with its kind and "_".
KINDS = ("landing", "form", "gallery", "nav", "widget")


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

