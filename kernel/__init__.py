"""framebus: a microkernel runtime for multimodal agents.

The public API is the node SDK (:mod:`kernel.sdk`), re-exported here: ``from kernel import Node,
EnvNode, on_input, service``. The names load on first use, so ``launch`` and the launch-file loader
start without paying for numpy and the bus. Layers and their rules: docs/architecture.md.
"""

from __future__ import annotations

from typing import Any

from kernel.sdk import __all__ as __all__


def __getattr__(name: str) -> Any:
    import kernel.sdk

    return getattr(kernel.sdk, name)
