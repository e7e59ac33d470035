"""Reading the model's ACTION text into one call, the way VAB reads it.

VAB carries out only the first action a reply contains and is lenient about its form: keyword
arguments (``obj=3``), quotes, stray underscores. Kept apart from the rules so the env node can
show the agent exactly what was understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)")


class ParseError(ValueError):
    """No function call could be read from the text."""


@dataclass(frozen=True)
class ActionCall:
    func: str
    args: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.func}({', '.join(self.args)})"


def parse(text: str) -> ActionCall:
    """The first ``func(args)`` after the ``ACTION:`` marker, or ``text`` itself when it is one bare call."""
    body = text or ""
    marker = re.search(r"action\s*:", body, flags=re.IGNORECASE)
    if marker:
        body = body[marker.end():]
    body = body.replace("`", " ")
    match = CALL.search(body)
    if match is not None and not marker and body.strip().rstrip(";.") != match.group(0):
        # VAB reads a reply with no ACTION line as no action; a bare call on its own is one
        raise ParseError("No ACTION line was found; end the reply with one call such as ACTION: turn_left().")
    if match is None:
        if not body.strip():
            raise ParseError("No action was given; write one call such as ACTION: turn_left().")
        raise ParseError("The action could not be read; write one call as function_name(arguments), "
                         "for example grasp(3).")
    args = []
    for raw in match.group(2).split(","):
        arg = raw.strip()
        if "=" in arg:
            arg = arg.split("=")[-1].strip()
        if len(arg) >= 2 and arg[0] in "'\"" and arg[-1] in "'\"":
            arg = arg[1:-1].strip()
        arg = arg.strip("_")
        if arg:
            args.append(arg)
    return ActionCall(match.group(1).strip(), tuple(args))
