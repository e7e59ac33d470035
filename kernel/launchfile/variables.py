"""``${VAR}`` and ``${VAR:-default}`` in launch files, from the environment."""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml

from kernel.launchfile.errors import closest
from kernel.launchfile.tree import Y, err, walk

_VAR_RE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{")


def required(text: str) -> list[str]:
    """The variables ``text`` names without a default (``${NAME}``, not ``${NAME:-x}`` or ``$${NAME}``):
    what a launch file needs set to load."""
    return [m.group(1) for m in _VAR_RE.finditer(text) if m.group(1) is not None and m.group(2) is None]


def substitute(tree: Y, environ: Mapping[str, str]) -> None:
    for y in walk(tree):
        if isinstance(y.value, str) and "${" in y.value:
            _substitute_scalar(y, environ)


def _substitute_scalar(y: Y, environ: Mapping[str, str]) -> None:
    text: str = y.value
    whole = False

    def replace(match: re.Match[str]) -> str:
        nonlocal whole
        token = match.group(0)
        if token == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name is None:
            raise err(y, f"malformed variable reference in {text!r}; write ${{NAME}} or "
                          f"${{NAME:-default}}, or $${{ for a literal '${{'")
        whole = match.span() == (0, len(text))
        if default is not None and not environ.get(name):  # as in the shell: unset or empty
            return default
        if name in environ:
            return environ[name]
        raise err(y, f"environment variable '{name}' is not set "
                      f"(use ${{{name}:-default}} to give a default)",
                   suggestion=closest(name, environ.keys()))

    y.value = _VAR_RE.sub(replace, text)
    if whole and y.plain and y.value.strip():
        # 'episodes: ${N:-5}' should be the number 5, as if 5 had been written.
        try:
            parsed = yaml.safe_load(y.value)
        except yaml.YAMLError:
            return  # kept as text
        if isinstance(parsed, (str, int, float, bool)) or parsed is None:  # a scalar; a list or mapping stays text
            y.value = parsed

