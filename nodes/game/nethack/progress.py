"""BALROG's NetHack progression: how far a game got, as the chance human players who got as far
went on to win. Read from the dungeon depth and experience level of every step (blstats), the
highest table value reached; the table is data/progression.json (BALROG's, attributed there)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Iterable

TABLE_PATH = Path(__file__).with_name("data") / "progression.json"


@cache
def table() -> dict[str, float]:
    """``Dlvl:N`` / ``Xp:N`` (and a few special places) -> progression in [0, 1]."""
    return {str(k): float(v) for k, v in json.loads(TABLE_PATH.read_text()).items()}


@dataclass(slots=True)
class Progress:
    """Progression of one game, updated each step with its depth and experience level."""

    progression: float = 0.0
    highest_achievement: str | None = None
    depth: int = 1
    experience_level: int = 1
    max_depth: int = 1
    max_experience_level: int = 1
    seen: list[str] = field(default_factory=list)

    def update(self, depth: int, experience_level: int) -> float:
        self.depth, self.experience_level = int(depth), int(experience_level)
        self.max_depth = max(self.max_depth, self.depth)
        self.max_experience_level = max(self.max_experience_level, self.experience_level)
        values = table()
        for key in (f"Xp:{self.experience_level}", f"Dlvl:{self.depth}"):
            if key in values and key not in self.seen:
                self.seen.append(key)
                if values[key] > self.progression:
                    self.progression, self.highest_achievement = values[key], key
        return self.progression


def progression(levels: Iterable[tuple[int, int]]) -> float:
    """The progression of a game given its ``(depth, experience_level)`` at each step."""
    p = Progress()
    for depth, xl in levels:
        p.update(depth, xl)
    return p.progression
