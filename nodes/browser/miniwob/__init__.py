"""MiniWoB++ offline: the Farama ``miniwob`` package's task pages (MIT license, served from the
installed package, never copied here) played through framebus's own browser node.

``site.py`` serves the package's ``html/`` folder on loopback, ``env.py`` plays one task per
episode in the browser node (seeded with ``Math.seedrandom`` as MiniWoB does, reward and end read
from the page's globals), ``solver.py`` is a scripted solver that reads the page's DOM, and
``tasks.py`` lists the tasks the package ships.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["MiniwobMissing", "html_dir"]


class MiniwobMissing(RuntimeError):
    """The ``miniwob`` package (its task pages) is not installed."""


def html_dir() -> Path:
    """The ``html/`` folder of the installed ``miniwob`` package, found without importing it (its
    ``__init__`` registers Gymnasium environments and pulls in Selenium, neither of which we use)."""
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise MiniwobMissing("the miniwob package is not installed (pip install miniwob==1.1.0 --no-deps; "
                             "bash setup.sh does it): its task pages are what this pack serves")
    folder = Path(next(iter(spec.submodule_search_locations))) / "html"
    if not (folder / "core" / "core.js").is_file():
        raise MiniwobMissing(f"{folder} has no core/core.js: is the installed miniwob package complete?")
    return folder
