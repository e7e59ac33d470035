"""What a node author imports: the Node class, its decorators, episodes, the environment and judge bases, the
clock and the errors (``kernel`` re-exports them: ``from kernel import Node, on_input, service``). The names load on first use: the launch-file
loader imports kernel.bus.errors and kernel.sdk.registry, and must not pay for the bus (numpy,
ZeroMQ) to do so. The test harness stays out (kernel.testing): it runs a whole graph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel.bus.errors import EpisodeAbandoned, FramebusError, RemoteError, RequestTimeout
    from kernel.bus.protocol import Message
    from kernel.sdk.clock import Clock
    from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
    from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
    from kernel.sdk.node import Episode, Node, NodeParams, on_input, service
    from kernel.sdk.steps import StepRecord

_PUBLIC = {
    "Node": "kernel.sdk.node", "NodeParams": "kernel.sdk.node", "Episode": "kernel.sdk.node",
    "on_input": "kernel.sdk.node", "service": "kernel.sdk.node", "Message": "kernel.bus.protocol",
    "Clock": "kernel.sdk.clock", "FramebusError": "kernel.bus.errors", "RemoteError": "kernel.bus.errors",
    "RequestTimeout": "kernel.bus.errors", "EpisodeAbandoned": "kernel.bus.errors",
    "EnvNode": "kernel.sdk.env", "EnvParams": "kernel.sdk.env", "Observation": "kernel.sdk.env",
    "StepRecord": "kernel.sdk.steps", "StepResult": "kernel.sdk.env",
    "JudgeNode": "kernel.sdk.judge", "JudgedEpisode": "kernel.sdk.judge", "Unscored": "kernel.sdk.judge",
}

__all__ = [
    "Clock", "EnvNode", "EnvParams", "Episode", "EpisodeAbandoned", "FramebusError", "Message", "Node", "NodeParams",
    "Observation", "RemoteError", "RequestTimeout", "StepRecord", "StepResult", "on_input", "service",
    "JudgeNode", "JudgedEpisode", "Unscored",
]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kernel.sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value
