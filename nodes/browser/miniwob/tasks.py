"""The MiniWoB++ tasks the installed ``miniwob`` package ships, by name, and where each one's page is.

A MiniWoB task is ``html/miniwob/<name>.html`` (``click-button``); a FlightWoB task is
``html/flight/<site>/wrapper.html``, named ``flight.<site>`` as the package names it
(``flight.Alaska``). Each kind has MiniWoB's own window size: the 160x210 task area sits in a
500x320 window, FlightWoB's 375x667 one in 600x800 (miniwob/constants.py).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from nodes.browser.miniwob import html_dir

__all__ = ["FLIGHT_PREFIX", "MiniwobTask", "TaskNameError", "all_tasks", "pick_tasks"]

FLIGHT_PREFIX = "flight."
WINDOW = (500, 320)
FLIGHT_WINDOW = (600, 800)


class TaskNameError(ValueError):
    """A task name the installed package does not ship; the message lists close names."""


@dataclass(frozen=True, slots=True)
class MiniwobTask:
    """One task: its name, its page's path under the served ``html/`` folder, the window it runs in."""

    name: str
    path: str
    window: tuple[int, int]

    @property
    def flight(self) -> bool:
        return self.name.startswith(FLIGHT_PREFIX)


def all_tasks(root: Path | None = None) -> list[MiniwobTask]:
    """Every task under ``root`` (default: the installed package's ``html/``), MiniWoB's first,
    each kind in name order."""
    base = root if root is not None else html_dir()
    found = [MiniwobTask(page.stem, f"miniwob/{page.name}", WINDOW)
             for page in sorted((base / "miniwob").glob("*.html"))]
    found += [MiniwobTask(f"{FLIGHT_PREFIX}{page.parent.name}", f"flight/{page.parent.name}/wrapper.html",
                          FLIGHT_WINDOW)
              for page in sorted((base / "flight").glob("*/wrapper.html"))]
    return found


def pick_tasks(names: str | list[str], known: list[MiniwobTask]) -> list[MiniwobTask]:
    """The tasks a ``task`` param names: ``all`` (every task), ``miniwob`` (every MiniWoB task, no
    FlightWoB), one name, or a list of names (in the given order). Raises TaskNameError for an
    unknown name, with the closest known ones."""
    by_name = {t.name: t for t in known}
    if isinstance(names, str):
        if names == "all":
            return list(known)
        if names == "miniwob":
            return [t for t in known if not t.flight]
        names = [names]
    if not names:
        raise TaskNameError("task: the list is empty; name tasks (e.g. [click-button, enter-text]), or all")
    picked = []
    for name in names:
        if name not in by_name:
            close = difflib.get_close_matches(str(name), list(by_name), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise TaskNameError(f"task: {name!r} is not a MiniWoB task of the installed package "
                                f"({len(by_name)} tasks, e.g. click-button, flight.AA){hint}")
        picked.append(by_name[name])
    return picked
