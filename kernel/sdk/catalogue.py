"""What a pack tells ``launch ls`` about itself: its name, the benchmark it comes from, the launch
files it bundles and what its nodes need beyond the core install.

A newcomer looks for a world, not for a file name, and wants to know before a run whether it will
start here (an extra not installed, no Chromium, no API key). The kernel knows no benchmark, so each
pack says it: a :class:`Pack` registered under the ``framebus.packs`` entry points
(``sokoban = "nodes.game.sokoban.pack:PACK"``) in a module that holds only this record, so listing
the catalogue imports no pack's code. Plain data and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PACKS_GROUP = "framebus.packs"


@dataclass(frozen=True)
class Pack:
    """One pack: what ``launch ls`` groups the bundled launch files under.

    ``launch_prefixes`` claim the bundled launch files named ``PREFIX.yaml`` or ``PREFIX_*.yaml``
    (the longest claim wins, so ``vab_household`` is not ``vab``). ``needs`` are what any graph with
    one of ``nodes`` needs: framebus extras as ``[extra]``, other things in words (``Chromium``).
    ``param_needs`` turn a node's param into a need when it is set and not ``none``: ``{value}`` in
    the text is the param's value (the model node's ``api_key_env`` names the key a file needs)."""

    name: str
    title: str
    source: str = ""  # the benchmark or library it brings, with its paper or home
    nodes: tuple[str, ...] = ()  # the ``uses`` names this pack registers
    launch_prefixes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    param_needs: dict[str, str] = field(default_factory=dict)

    def claims(self, stem: str) -> int:
        """How long this pack's claim on the launch file ``stem`` is (0: none)."""
        return max((len(p) for p in self.launch_prefixes if stem == p or stem.startswith(p + "_")), default=0)
