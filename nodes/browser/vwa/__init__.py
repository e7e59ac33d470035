"""VisualWebArena's tasks: its raw task JSON, the page services its evaluators read, and the ``func:`` helpers."""
