"""Checks that run in the launcher before any node process starts.

A run that is bound to fail (a missing API key, a mosquitto that is not installed) should say so in
the first second, with the launch file's name, not after the environments have spent a minute
starting up. Loading each class and checking its params is the launch file's own stage
(``kernel.launchfile.load(..., node_class=...)``); this asks the nodes what only they can know.
"""

from __future__ import annotations

from kernel.launchfile import LaunchFile
from kernel.sdk.registry import load_node_class


def problems(lf: LaunchFile) -> list[str]:
    """Each node's ``preflight`` answers, given the params its ``Params`` model parsed at load time."""
    found: list[str] = []
    for spec in lf.nodes:
        if not spec.uses:
            continue
        if spec.id not in lf.parsed_params:
            raise ValueError("preflight needs a launch file loaded with node_class (its params parsed)")
        cls = load_node_class(spec.uses)  # imported already by the params stage
        for problem in cls.preflight(lf.parsed_params[spec.id]):
            found.append(f"{lf.source.name}: node {spec.id!r}: {problem}")
    return found
