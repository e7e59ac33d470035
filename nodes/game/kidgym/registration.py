"""Gymnasium ids for the 36 KidGym configurations: ``framebus/KidGym-<TASK>-L<level>-v0``.

``register()`` is safe to call many times and does nothing when Gymnasium is not installed, so
the package can call it on import (tests, scripts) and a ``gymnasium.envs`` entry point can call
it too. The entry point string is lazy: nothing but the ids is loaded until ``gymnasium.make``.
"""

from __future__ import annotations

from nodes.game.kidgym.tasks import LEVELS, TASKS

ENTRY_POINT = "nodes.game.kidgym.gym_env:KidGymEnv"


def env_id(task: str, level: int) -> str:
    return f"framebus/KidGym-{task.upper()}-L{int(level)}-v0"


def env_ids() -> list[str]:
    return [env_id(task, level) for task in TASKS for level in LEVELS]


def register() -> list[str]:
    """Register every KidGym id that is not registered yet; returns the ids."""
    try:
        from gymnasium.envs.registration import register as gym_register
        from gymnasium.envs.registration import registry
    except ImportError:  # Gymnasium is optional for the bus node
        return []
    for task in TASKS:
        for level in LEVELS:
            name = env_id(task, level)
            if name not in registry:
                gym_register(id=name, entry_point=ENTRY_POINT, kwargs={"task": task, "level": level})
    return env_ids()
