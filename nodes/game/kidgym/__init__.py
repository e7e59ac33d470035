"""KidGym (ICLR 2026) for framebus: 12 grid tasks x 3 levels, drawn by code, as a bus node
(``node.KidGymEnv``) and as Gymnasium environments (``gymnasium.make("framebus/KidGym-CL-L1-v0")``).

Importing the package registers the Gymnasium ids (a no-op without Gymnasium).
"""

from nodes.game.kidgym.registration import env_id, env_ids, register
from nodes.game.kidgym.tasks import CAPABILITIES, TASKS, Manifest, episode_seed, make_task

__all__ = ["CAPABILITIES", "TASKS", "Manifest", "env_id", "env_ids", "episode_seed", "make_task", "register"]

register()
