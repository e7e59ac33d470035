"""Checks that run in the launcher before any node process starts.

A run that is bound to fail (a missing API key, a class that does not import) should say so in
the first second, with the launch file's name, not after the environments have spent a minute
starting up.
"""

from __future__ import annotations

import traceback

from kernel.launchfile import LaunchFile
from kernel.sdk.registry import load_node_class


def problems(lf: LaunchFile) -> list[str]:
    found: list[str] = []
    for spec in lf.nodes:
        if not spec.uses:
            continue
        try:
            cls = load_node_class(spec.uses)
        except Exception as exc:  # any import-time failure of user code
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            found.append(f"{lf.source.name}: node {spec.id!r}: cannot load {spec.uses}: {last}")
            continue
        try:
            params = cls.parse_params(spec.params)
        except ValueError as exc:  # pydantic's ValidationError
            found.append(f"{lf.source.name}: node {spec.id!r}: params: {exc}")
            continue
        for problem in cls.preflight(params):
            found.append(f"{lf.source.name}: node {spec.id!r}: {problem}")
    return found
