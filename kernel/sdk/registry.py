"""Which class a ``uses`` value names: "package.module:Class", or a short name a pack registers
under the ``framebus.nodes`` entry points (``hello.env``).

It lives in the SDK, not with the launch-file loader, because a node process resolves its own
``uses`` at start and must not pay for the loader (YAML, the launch-file models) to do so.
"""

from __future__ import annotations

import difflib
import importlib.metadata
import pkgutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kernel.bus.errors import FramebusError
from kernel.sdk.installed import install_hint

if TYPE_CHECKING:
    from kernel.sdk.node import Node

ENTRY_POINT_GROUP = "framebus.nodes"


class UnknownNodeType(FramebusError, LookupError):
    """A short ``uses`` name no installed pack registers; ``allowed`` lists the ones that exist."""

    def __init__(self, uses: str, allowed: Sequence[str]) -> None:
        self.uses = uses
        self.allowed = list(allowed)
        matches = difflib.get_close_matches(uses, self.allowed, n=1, cutoff=0.6)
        self.suggestion = matches[0] if matches else None
        hint = f" (did you mean '{self.suggestion}'?)" if self.suggestion else ""
        super().__init__(f"unknown node type '{uses}' (not registered under the '{ENTRY_POINT_GROUP}' entry "
                         f"points){hint}; registered: {', '.join(self.allowed) or 'none'}")


def registered_nodes() -> dict[str, str]:
    """Registered node names -> "module:Class", read without importing anything."""
    eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep.value for ep in eps}


def resolve_uses(uses: str) -> str:
    """Turn a ``uses`` value into "module:Class", whichever way it was written."""
    if ":" in uses:
        return uses
    registry = registered_nodes()
    if uses in registry:
        return registry[uses]
    raise UnknownNodeType(uses, sorted(registry))


def load_node_class(uses: str) -> type[Node]:
    """Import the class a ``uses`` value names; a TypeError if it is no framebus Node."""
    # Imported here: the launch-file loader resolves names too, and must not load the bus (numpy) for it.
    from kernel.sdk.node import Node

    try:
        cls = pkgutil.resolve_name(resolve_uses(uses))
    except ModuleNotFoundError as exc:  # a pack's dependency that this install left out
        hint = install_hint(exc.name) if exc.name else None
        if hint is None:
            raise
        raise ModuleNotFoundError(f"{exc} ({hint})", name=exc.name) from None
    if not (isinstance(cls, type) and issubclass(cls, Node)):
        raise TypeError(f"{uses} is not a framebus Node class")
    return cls
