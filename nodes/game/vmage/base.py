"""What every V-MAGE game shares: the level table, the fixed logic clock, the decision loop and frames.

V-MAGE pauses a game while the model thinks, so a score must depend only on the decisions made,
never on how fast anything ran: games advance in logic frames of a fixed ``DT`` (30 per second of
game time), and all randomness comes from one ``random.Random(seed)`` made at reset, where the seed
is the episode's round, so round t is the same layout for every model.

A decision is V-MAGE's unit of play (spec §1): the chosen action is applied on the first of the
level's ``sample_frames`` logic frames and, for the games here, repeated on the others; the
episode's limit (``max_rounds``) counts frames, not decisions (spec §8.4).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # headless: the games draw on plain surfaces
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402  (after the environment variables above)

FPS = 30
DT = 1.0 / FPS
"""Seconds of game time per logic frame; the games' speeds are per frame at this rate."""

FRAME_CAP = 3000
"""Frames at most where V-MAGE sets no limit (Pong, FlappyBird end only on a miss or a crash): ours,
not the benchmark's, so that a policy that never fails still ends (100 s of game time)."""

DEFAULT_HEIGHT = 360
"""V-MAGE's default model input height (spec §1: 'the model's input resolution was 360')."""


@dataclass(frozen=True, slots=True)
class Level:
    """One V-MAGE configuration: the spec's action set, decision interval and frame limit, and
    the game's own settings (speeds, sizes) that make the level what it is."""

    game: str
    level: int
    actions: tuple[str, ...]
    idle: str
    sample_frames: int
    max_rounds: int | None  # frames; None: V-MAGE sets no limit
    settings: Mapping[str, Any] = field(default_factory=dict)


class Game:
    """Base of a V-MAGE game: pure logic in ``tick``, drawing in ``draw``, and the facts a judge,
    a text-only agent and a scripted policy need. A subclass sets ``name``, ``size`` and ``levels``."""

    name: ClassVar[str] = "game"
    size: ClassVar[tuple[int, int]] = (640, 480)  # the native window, width x height
    levels: ClassVar[dict[int, Level]] = {}
    repeats: ClassVar[bool] = True
    """Whether a decision's action is held on its other sample frames (False: TempestRun, whose
    actions are key events, sends nothing there)."""

    def __init__(self, level: int, seed: int) -> None:
        self.level = self.levels[level]
        self.seed = seed
        self.rng = random.Random(seed)
        self.frame = 0
        self.over = False
        self.reason: str | None = None  # why the episode ended: the game's own words
        self.score = 0.0

    # what a game writes -------------------------------------------------------------------------
    def tick(self, action: str) -> None:
        """Advance one logic frame with ``action`` held (an action name of the level)."""
        raise NotImplementedError

    def draw(self, surface: pygame.Surface) -> None:
        """Draw the whole window, HUD included, as a player sees it."""
        raise NotImplementedError

    def describe(self) -> str:
        """The state in words, for text-only agents (V-MAGE's perceptual-skipping setting)."""
        raise NotImplementedError

    def policy(self) -> str:
        """A scripted action from the game state: the baseline a model should beat."""
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        """Raw state for judges and tests (plain numbers only)."""
        return {}

    # shared -----------------------------------------------------------------------------------------
    def end(self, reason: str) -> None:
        self.over, self.reason = True, reason

    def info(self) -> str:
        """V-MAGE's step info string, which its history template feeds back to the model."""
        if self.over:
            return f"Game Over, You got {self.score:g} score."
        return "Game is running."


def level_table(game: str, rows: Mapping[int, Mapping[str, Any]], *, sample_frames: int, max_rounds: int | None,
                actions: tuple[str, ...], idle: str) -> dict[int, Level]:
    """Build a game's levels from per-level rows; a row may override ``actions``, ``idle``,
    ``sample_frames`` and ``max_rounds``, the rest of it is the game's settings."""
    table: dict[int, Level] = {}
    for number, row in rows.items():
        row = dict(row)
        table[number] = Level(game=game, level=number, actions=tuple(row.pop("actions", actions)),
                              idle=str(row.pop("idle", idle)),
                              sample_frames=int(row.pop("sample_frames", sample_frames)),
                              max_rounds=row.pop("max_rounds", max_rounds), settings=row)
    return table


def scaled_size(size: tuple[int, int], height: int) -> tuple[int, int]:
    """The window scaled to ``height`` px with its aspect ratio kept (576x1024 -> 202x360)."""
    w, h = size
    return max(1, int(w * height / h)), height


_surfaces: dict[tuple[int, int], pygame.Surface] = {}


def render(game: Game, height: int = DEFAULT_HEIGHT) -> np.ndarray:
    """The full window, HUD included, scaled to ``height`` px high: uint8 H x W x 3."""
    surface = _surfaces.get(game.size)
    if surface is None:
        surface = _surfaces[game.size] = pygame.Surface(game.size)
    game.draw(surface)
    if height != game.size[1]:
        surface = pygame.transform.scale(surface, scaled_size(game.size, height))
    w, h = surface.get_size()  # row-major RGB bytes in one copy (array3d is column-major, and slow)
    return np.frombuffer(pygame.image.tobytes(surface, "RGB"), dtype=np.uint8).reshape(h, w, 3)


_fonts: dict[int, pygame.font.Font] = {}


def font(size: int) -> pygame.font.Font:
    """pygame's bundled font (the same glyphs on every machine), cached per size."""
    if not pygame.font.get_init():
        pygame.font.init()
    if size not in _fonts:
        _fonts[size] = pygame.font.Font(None, size)
    return _fonts[size]


def decide(game: Game, action: str, frames: int, limit: int | None, *, repeat: bool | None = None,
           on_frame: Callable[[Game], None] | None = None) -> int:
    """Play one decision: ``action`` on the first frame and (``repeat``, by default the game's
    ``repeats``) on the rest of the ``frames``, or the level's idle action on the rest; stops early
    when the game ends or the frame ``limit`` is reached (ending it). Returns the frames played."""
    repeat = game.repeats if repeat is None else repeat
    played = 0
    for i in range(frames):
        if game.over:
            break
        game.tick(action if i == 0 or repeat else game.level.idle)
        game.frame += 1
        played += 1
        if on_frame is not None:
            on_frame(game)
        if not game.over and limit is not None and game.frame >= limit:
            game.end("max_rounds")
    return played


def play(game: Game, choose: Callable[[Game], str], *, limit: int | None = None,
         sample_frames: int | None = None) -> Game:
    """One whole episode in this process (tests, benchmarks): ``choose`` picks each decision."""
    frames = sample_frames or game.level.sample_frames
    cap = limit if limit is not None else (game.level.max_rounds or FRAME_CAP)
    while not game.over:
        decide(game, choose(game), frames, cap)
    return game
