"""The pack's full ``func:`` helper registry: the site-independent helpers and every site's own.

``helpers.py`` holds the registry and the helpers any page has; each site family registers its
helpers in a module of its own (``helpers_<site>.py``), imported here, so that loading a task file
(``tasks.py``) and scoring it (the judge) see the same set, and a new site adds one import line.
"""

from __future__ import annotations

from nodes.browser.vwa import helpers_gitlab  # noqa: F401 - registers the code forge's helpers
from nodes.browser.vwa import helpers_reddit  # noqa: F401 - registers the forum's helpers
from nodes.browser.vwa import helpers_shopping  # noqa: F401 - registers the shopping helpers
from nodes.browser.vwa.helpers import REGISTRY, HelperContext, HelperRegistry

__all__ = ["REGISTRY", "HelperContext", "HelperRegistry"]
