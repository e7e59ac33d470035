"""framebus: a microkernel runtime for multimodal agents.

The public API is the node SDK (:mod:`kernel.sdk`), re-exported here. The names are loaded on
first use, so ``launch`` and the launch-file loader start without paying for numpy and the bus.
Layers and their rules: docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel.bus.protocol import Message
    from kernel.sdk.errors import EpisodeAbandoned, FramebusError, RemoteError, RequestTimeout
    from kernel.sdk.node import Episode, Node, NodeParams, on_input, service

_PUBLIC = {
    "Node": "kernel.sdk.node", "NodeParams": "kernel.sdk.node", "Episode": "kernel.sdk.node",
    "on_input": "kernel.sdk.node", "service": "kernel.sdk.node", "Message": "kernel.bus.protocol",
    "FramebusError": "kernel.sdk.errors", "RemoteError": "kernel.sdk.errors",
    "RequestTimeout": "kernel.sdk.errors", "EpisodeAbandoned": "kernel.sdk.errors",
}

__all__ = ["Episode", "EpisodeAbandoned", "FramebusError", "Message", "Node", "NodeParams", "RemoteError",
           "RequestTimeout", "on_input", "service"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kernel' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value
