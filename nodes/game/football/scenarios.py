"""Scenarios: MageBench's 108 starting positions and gfootball's own levels, as gfootball levels.

gfootball loads a level by importing ``gfootball.scenarios.<name>`` and calling its
``build_scenario(builder)``. Rather than writing 108 Python files, this module builds each
MageBench scenario from the shared data (``data/magebench_scenarios.json``, transcribed from the
benchmark's scenario files) and registers a generated module under that package, so the engine
finds it like any built-in level. The same wrapper decides which players agents control: a player
an agent is bound to stays ``controllable``, the others of that team are not, which is how the
engine binds controllers to fixed players (see ``seats.py``).
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from nodes.game.football.gfootball_import import import_gfootball

DATA_FILE = Path(__file__).with_name("data") / "magebench_scenarios.json"

# Settings every MageBench scenario file sets on the builder's config (all 108 agree).
SETTING_KEYS = ("game_duration", "deterministic", "offsides", "end_episode_on_score", "end_episode_on_out_of_play",
                "end_episode_on_possession_change", "right_team_difficulty", "left_team_difficulty")
ROLES = ("GK", "CB", "LB", "RB", "DM", "CM", "LM", "RM", "AM", "CF")


@dataclass(frozen=True)
class Spot:
    """A player's starting place: x, y in its team's own frame (right team mirrored), and role."""

    x: float
    y: float
    role: str


@dataclass(frozen=True)
class MageScenario:
    """One MageBench scenario, e.g. ``R3_T_2``: zone 3, category T (teamwork), the second of four."""

    id: str
    zone: int
    category: str
    index: int
    in_mini: bool
    settings: dict[str, Any]
    ball: tuple[float, float]
    left: tuple[Spot, ...]
    right: tuple[Spot, ...]


@lru_cache(maxsize=4)
def load_magebench(path: str | None = None) -> dict[str, MageScenario]:
    """Every MageBench scenario by id, in file order."""
    raw = json.loads(Path(path or DATA_FILE).read_text())
    out: dict[str, MageScenario] = {}
    for s in raw["scenarios"]:
        out[s["id"]] = MageScenario(
            id=s["id"], zone=int(s["zone"]), category=s["category"], index=int(s["index"]),
            in_mini=bool(s["in_mini_subset"]), settings=dict(s["settings"]),
            ball=(float(s["ball"][0]), float(s["ball"][1])),
            left=tuple(Spot(float(p["x"]), float(p["y"]), p["role"]) for p in s["left_team"]),
            right=tuple(Spot(float(p["x"]), float(p["y"]), p["role"]) for p in s["right_team"]),
        )
    return out


@lru_cache(maxsize=4)
def mini_subset(path: str | None = None) -> tuple[str, ...]:
    """The 20 scenario ids of MageBench's test-mini set, in the benchmark's order."""
    raw = json.loads(Path(path or DATA_FILE).read_text())
    return tuple(raw["mini_subset"]["ids"])


def gfootball_levels() -> list[str]:
    """gfootball's own scenario names (``academy_3_vs_1_with_keeper``, ``11_vs_11_easy_stochastic``...)."""
    scenario_builder = import_gfootball("gfootball.env.scenario_builder")
    return sorted(n for n in scenario_builder.all_scenarios() if not n.startswith(("test_", "framebus_")))


def resolve(spec: str | Sequence[str] | None, path: str | None = None) -> list[str]:
    """The scenario names a ``scenarios`` param means: ``mini`` (default), ``all`` (the 108),
    ``zone:N`` / ``category:P|T|R``, one name, or a list of any of these."""
    if spec is None:
        spec = "mini"
    items = [spec] if isinstance(spec, str) else list(spec)
    mage = load_magebench(path)
    out: list[str] = []
    for item in items:
        item = str(item).strip()
        if item == "mini":
            out += mini_subset(path)
        elif item == "all":
            out += list(mage)
        elif item.startswith("zone:"):
            out += [s.id for s in mage.values() if s.zone == int(item[5:])]
        elif item.startswith("category:"):
            out += [s.id for s in mage.values() if s.category == item[9:].upper()]
        elif item in mage:
            out.append(item)
        else:
            known = gfootball_levels()
            if item not in known:
                raise ValueError(f"unknown football scenario {item!r}: use mini, all, zone:N, category:P|T|R, "
                                 f"a MageBench id such as R1_P_1, or a gfootball level ({', '.join(known)})")
            out.append(item)
    if not out:
        raise ValueError(f"the scenarios param {spec!r} selects no scenario")
    return out


# -- building levels ------------------------------------------------------------------------------
Builder = Any  # gfootball.env.scenario_builder.Scenario (only its small builder API is used)


class _ControlFilter:
    """Stands in for gfootball's scenario builder while a level adds its players, and rewrites
    each player's ``controllable`` flag: on a team whose agents are bound to fixed players, only
    those players stay controllable. Everything else passes through unchanged."""

    def __init__(self, builder: Builder, fixed: dict[str, frozenset[int]]) -> None:
        import gfootball_engine as libgame

        self._builder = builder
        self._fixed = fixed
        self._left = libgame.e_Team.e_Left
        self._team = "left"
        self._count = {"left": 0, "right": 0}

    def SetTeam(self, team: Any) -> None:  # noqa: N802 - gfootball's builder API
        self._team = "left" if team == self._left else "right"
        self._builder.SetTeam(team)

    def AddPlayer(self, x: float, y: float, role: Any, lazy: bool = False,  # noqa: N802
                  controllable: bool = True) -> None:
        index = self._count[self._team]
        self._count[self._team] += 1
        fixed = self._fixed.get(self._team)
        if fixed is not None:
            controllable = index in fixed
        self._builder.AddPlayer(x, y, role, lazy, controllable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._builder, name)


def _magebench_builder(scenario: MageScenario) -> Callable[[Builder], None]:
    def build(builder: Builder) -> None:
        import gfootball_engine as libgame

        cfg = builder.config()
        for key in SETTING_KEYS:
            if key in scenario.settings:
                setattr(cfg, key, scenario.settings[key])
        builder.SetBallPosition(*scenario.ball)
        for team, spots in ((libgame.e_Team.e_Left, scenario.left), (libgame.e_Team.e_Right, scenario.right)):
            builder.SetTeam(team)
            for spot in spots:
                builder.AddPlayer(spot.x, spot.y, getattr(libgame.e_PlayerRole, f"e_PlayerRole_{spot.role}"))

    return build


def _gfootball_builder(name: str) -> Callable[[Builder], None]:
    return import_gfootball(f"gfootball.scenarios.{name}").build_scenario


def install_level(name: str, fixed: dict[str, frozenset[int]] | None = None, settings: dict[str, Any] | None = None,
                  data_path: str | None = None) -> str:
    """Register a gfootball level for scenario ``name`` and return the level name to load.

    ``fixed`` maps a team to the player indices agents are bound to (teams not in it keep the
    level's own flags: the engine then moves the team's controller to the active player);
    ``settings`` overrides scenario-config fields after the level set its own (e.g.
    ``right_team_difficulty``)."""
    import_gfootball("gfootball.scenarios")  # the parent package of the generated modules

    mage = load_magebench(data_path)
    base = _magebench_builder(mage[name]) if name in mage else _gfootball_builder(name)
    fixed = dict(fixed or {})
    settings = dict(settings or {})
    parts = [name] + [f"{team}{'-'.join(map(str, sorted(idx)))}" for team, idx in sorted(fixed.items())]
    parts += [f"{k}{v}" for k, v in sorted(settings.items())]
    level = "framebus_" + "".join(c if c.isalnum() else "_" for c in "_".join(parts))

    def build_scenario(builder: Builder) -> None:
        base(_ControlFilter(builder, fixed) if fixed else builder)
        cfg = builder.config()
        for k, v in settings.items():
            if not hasattr(cfg, k):
                raise ValueError(f"gfootball's scenario config has no field {k!r}")
            setattr(cfg, k, v)

    module = types.ModuleType(f"gfootball.scenarios.{level}",
                              f"framebus-generated gfootball level for scenario {name}")
    module.build_scenario = build_scenario  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return level


def describe(names: Iterable[str], data_path: str | None = None) -> list[dict[str, Any]]:
    """A short listing for the ``describe`` service."""
    mage = load_magebench(data_path)
    out = []
    for n in names:
        s = mage.get(n)
        out.append({"id": n, "source": "gfootball"} if s is None else
                   {"id": n, "source": "magebench", "zone": s.zone, "category": s.category,
                    "players": [len(s.left), len(s.right)], "mini": s.in_mini})
    return out
