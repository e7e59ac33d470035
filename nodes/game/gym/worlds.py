"""Which package registers which Gymnasium ids, checking an id before anything starts, and the
worlds that need a small adapter to be Gymnasium envs (Crafter speaks the old gym API).

Gymnasium registers an id only when the package that owns it is imported (``import ale_py``), so
an id is looked up after importing the package its prefix belongs to; an id whose package is not
installed, an unknown namespace and an unknown name are each a ValueError that says what to do.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

# id prefix -> (module that registers it, the package to install)
PROVIDERS: list[tuple[str, str, str]] = [
    ("ALE/", "ale_py", "ale-py"),
    ("MiniGrid-", "minigrid", "minigrid"),
    ("BabyAI-", "minigrid", "minigrid"),
    ("highway", "highway_env", "highway-env"),
    ("merge-", "highway_env", "highway-env"),
    ("roundabout-", "highway_env", "highway-env"),
    ("parking-", "highway_env", "highway-env"),
    ("intersection-", "highway_env", "highway-env"),
    ("racetrack-", "highway_env", "highway-env"),
    ("exit-", "highway_env", "highway-env"),
    ("u-turn-", "highway_env", "highway-env"),
    ("two-way-", "highway_env", "highway-env"),
    ("lane-keeping-", "highway_env", "highway-env"),
    ("framebus/Crafter", "crafter", "crafter"),
    ("procgen", "procgen", "procgen"),
    ("craftax", "craftax", "craftax"),
]
WORLDS_EXTRA = {"ale-py", "minigrid", "crafter"}
"""The packages of pyproject's ``worlds`` extra (what setup.sh installs)."""


def provider(env_id: str) -> tuple[str, str] | None:
    """(module, package) of the package that registers ``env_id``, where it is a known one."""
    for prefix, module, package in PROVIDERS:
        if env_id.startswith(prefix):
            return module, package
    return None


def load_provider(env_id: str, module: str | None = None) -> None:
    """Import what registers ``env_id`` (and ``module``, a user's own registering module)."""
    if module:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(f"module {module!r} (imported to register the env ids) does not import: {exc}") from None
    known = provider(env_id)
    if known is None:
        return
    name, package = known
    try:
        importlib.import_module(name)
    except ImportError:
        extra = " (bash setup.sh installs it with framebus[worlds])" if package in WORLDS_EXTRA else ""
        raise ValueError(f"{env_id!r} needs the package {package!r}, which is not installed: "
                         f"pip install {package}{extra}") from None
    if name == "crafter":
        register_crafter()
    elif name == "ale_py":
        import ale_py

        gymnasium.register_envs(ale_py)


def check_id(env_id: str, module: str | None = None) -> str:
    """``env_id`` if Gymnasium knows it (after importing its package); a ValueError that names what
    is wrong (package, namespace, or the nearest registered ids) otherwise."""
    load_provider(env_id, module)
    registry = gymnasium.registry
    if env_id in registry:
        entry = registry[env_id].entry_point
        if isinstance(entry, str):  # a registered id whose simulator is missing (MuJoCo, Box2D): say so now
            try:
                pkgutil.resolve_name(entry)
            except gymnasium.error.DependencyNotInstalled as exc:
                raise ValueError(f"{env_id!r} cannot be made here: {exc}") from None
            except ImportError as exc:
                raise ValueError(f"{env_id!r} cannot be made here: its entry point {entry} needs the missing "
                                 f"package {exc.name or exc} (pip install it)") from None
        return env_id
    namespace = env_id.split("/", 1)[0] if "/" in env_id else None
    namespaces = sorted({k.split("/", 1)[0] for k in registry if "/" in k})
    if namespace is not None and namespace not in namespaces:
        raise ValueError(f"the namespace {namespace!r} of {env_id!r} is not registered (registered: "
                         f"{', '.join(namespaces) or 'none'}); set 'module' to the module that registers it")
    close = difflib.get_close_matches(env_id, list(registry), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else \
        "known families: " + ", ".join(sorted({p for _, _, p in PROVIDERS})) + " (by their id prefixes), and Gymnasium's own"
    raise ValueError(f"no Gymnasium env {env_id!r} is registered; {hint}")


# --- Crafter ---------------------------------------------------------------------------------------------
CRAFTER_ID = "framebus/Crafter-v1"


class CrafterEnv(gymnasium.Env):
    """Crafter (Hafner 2021) as a Gymnasium env: the 64x64 picture as the observation, its 17 named
    actions, the inventory and achievements in ``info``, ``truncated`` at its length limit."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, render_mode: str | None = None, size: int = 64, length: int = 10000, reward: bool = True) -> None:
        import crafter

        self._crafter = crafter
        self.render_mode = render_mode
        self._size, self._length, self._reward = int(size), int(length), bool(reward)
        self._env = crafter.Env(size=(self._size, self._size), length=self._length, reward=self._reward)
        self.action_names = list(crafter.constants.actions)
        self.action_space = spaces.Discrete(len(self.action_names))
        self.observation_space = spaces.Box(0, 255, (self._size, self._size, 3), np.uint8)
        self._last: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self._env = self._crafter.Env(size=(self._size, self._size), length=self._length, reward=self._reward,
                                          seed=int(seed))
        self._last = self._env.reset()
        return self._last, {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        obs, reward, done, info = self._env.step(int(action))
        self._last = obs
        dead = info.get("discount", 1.0) == 0.0
        info = {"inventory": dict(info.get("inventory", {})), "achievements": dict(info.get("achievements", {}))}
        return obs, float(reward), bool(done and dead), bool(done and not dead), info

    def render(self) -> np.ndarray | None:
        return None if self.render_mode != "rgb_array" else self._last

    def language_state(self) -> dict[str, Any]:
        """What a text view of the world needs (BALROG's Crafter text): the semantic map and its id
        names, the player's square, facing, vitals and inventory. Read on request, as the map is
        64x64 numbers that no step's ``info`` should carry."""
        env = self._env
        names = {i: str(m) for m, i in env._world._mat_ids.items()}
        names.update({i: cls.__name__.lower() for cls, i in env._sem_view._obj_ids.items()})
        player = env._player
        return {"semantic": env._sem_view(), "names": [names.get(i, "unknown") for i in range(max(names) + 1)],
                "pos": tuple(int(v) for v in player.pos), "facing": tuple(int(v) for v in player.facing),
                "inventory": dict(player.inventory), "sleeping": bool(player.sleeping),
                "dead": player.health <= 0, "view": tuple(int(v) for v in env._view)}


def register_crafter() -> None:
    if CRAFTER_ID not in gymnasium.registry:
        gymnasium.register(CRAFTER_ID, entry_point=f"{__name__}:CrafterEnv", max_episode_steps=None)
