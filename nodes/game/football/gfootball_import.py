"""Importing gfootball quietly.

``import gfootball`` imports gym 0.25 (to register gym environments), and gym prints a notice that
it is unmaintained to stderr, into every node log and test output. The pack uses gfootball's
engine, config and scenario builder only, never gym, so the import is done here with stderr muted.
Real import errors still raise.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from types import ModuleType


def import_gfootball(module: str = "gfootball") -> ModuleType:
    """``importlib.import_module(module)`` for a gfootball module, without gym's notice."""
    with contextlib.redirect_stderr(io.StringIO()):
        importlib.import_module("gfootball")
    return importlib.import_module(module)
