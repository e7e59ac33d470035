"""A graph as a Gymnasium or PettingZoo env (``env.py``), with the spaces its env node declares
(``spaces.py``). A floor above the graph (docs/architecture.md): it starts a run in-process, as the
tools do, so no node process ever imports it."""

from __future__ import annotations

from kernel.gym.env import GraphEnv, GraphError, GraphParallelEnv

__all__ = ["GraphEnv", "GraphError", "GraphParallelEnv"]
