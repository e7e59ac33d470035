"""Launch-file errors: every problem says where (file:line:col), which key, what is allowed and the
closest valid spelling, so that a typo is fixed from the message alone."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from kernel.bus.errors import FramebusError


@dataclass(eq=False)
class LaunchError(FramebusError):
    """A problem with a launch file, phrased for the person who wrote it.

    The fields are kept separately (not only in the message) so that a CLI or
    an editor integration can jump to the location or offer the suggestion.
    """

    message: str
    _: KW_ONLY
    file: Path | None = None  # a str is taken too
    line: int | None = None
    column: int | None = None
    key: str = ""
    allowed: list[str] | None = None  # any sequence is taken, and kept as a list
    suggestion: str | None = None

    def __post_init__(self) -> None:
        self.file = Path(self.file) if self.file is not None else None
        self.allowed = list(self.allowed) if self.allowed is not None else None
        super().__init__(str(self))

    def __str__(self) -> str:
        # file:line:column, as far as known (a column comes only with a line: marks have both or neither)
        where = ":".join(str(part) for part in (self.file, self.line, self.column) if part is not None)
        text = f"{where}: " if where else ""
        if self.key:
            text += f"{self.key}: "
        text += self.message
        if self.allowed:
            text += "; allowed: " + ", ".join(self.allowed)
        if self.suggestion is not None:
            text += f" (did you mean '{self.suggestion}'?)"
        return text


def closest(word: Any, candidates: Iterable[str]) -> str | None:
    """Only strings get suggestions: a number is never a typo of a name."""
    if not isinstance(word, str):
        return None
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None

