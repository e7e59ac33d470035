"""Where VisualAgentBench's WebArena-Lite task file is: in BrowserGym's ``browsergym-webarenalite`` wheel.

The 165 tasks are the authors' texts, so framebus does not carry a copy: the file is read from the
installed wheel (``setup.sh`` installs it without its dependencies; only this JSON file is used),
or from a path the user gives. ``WEBARENA_LITE`` is the name a launch file's ``tasks:`` and the
``python -m nodes.browser.vwa tasks`` command accept in place of a path.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

WEBARENA_LITE = "webarena-lite"
DISTRIBUTION = "browsergym-webarenalite"
RESOURCE = "browsergym/webarenalite/test_webarena_lite.raw.json"
TASKS = 165  # shopping 45, shopping_admin 35, gitlab 30, map 26, reddit 19, and 10 across two sites


class TaskFileMissing(FileNotFoundError):
    """The wheel is not installed (or lacks the file): the message says how to get it."""


def task_file() -> Path:
    """The installed wheel's task file, found through its metadata (importing ``browsergym`` would
    pull in its dependencies, which are not installed)."""
    hint = (f"install it with: pip install --no-deps {DISTRIBUTION} (setup.sh does), "
            "or give the file's path instead of " + repr(WEBARENA_LITE))
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise TaskFileMissing(f"{WEBARENA_LITE}: the {DISTRIBUTION} package is not installed; {hint}") from None
    path = Path(str(dist.locate_file(RESOURCE)))
    if not path.is_file():
        raise TaskFileMissing(f"{WEBARENA_LITE}: {DISTRIBUTION} {dist.version} has no {RESOURCE}; {hint}")
    return path


def resolve(name: str | Path) -> Path:
    """A task file argument: the name ``webarena-lite`` becomes the installed file; anything else is a path."""
    return task_file() if str(name) == WEBARENA_LITE else Path(name)
