"""The games of the pack by name, and the (game, level) cells a run plays.

A run of several levels deals its episodes round-robin over the cells: episode i plays cell
``i % cells`` with seed ``i // cells`` (its round), so round r of a level is the same layout for
every model and every run, whatever else the run plays.
"""

from __future__ import annotations

from collections.abc import Sequence

from nodes.game.vmage.base import Game
from nodes.game.vmage.flappy import FlappyBird
from nodes.game.vmage.mario import SuperMario
from nodes.game.vmage.pong import Pong
from nodes.game.vmage.race import Race
from nodes.game.vmage.race_rules import race_template
from nodes.game.vmage.tempest import TempestRun

GAMES: dict[str, type[Game]] = {"pong": Pong, "flappybird": FlappyBird, "race": Race, "tempestrun": TempestRun,
                              "supermario": SuperMario}


def level_numbers(game: str) -> list[int]:
    return sorted(GAMES[game].levels)


def cells(game: str | Sequence[str], level: int | Sequence[int] | str) -> list[tuple[str, int]]:
    """The cells for the ``game`` and ``level`` params; a ValueError naming the allowed levels
    when one is out of range.

    ``game`` may also be a list of games or ``all`` (the five in catalog order, 33 cells with
    ``level: all``), so one env node, or every copy of a replica group, covers the whole benchmark:
    the kernel deals episode indices from one deck to whichever env asks, so the cell must follow
    from the index alone, not from which node got it."""
    if isinstance(game, str) and game != "all":
        return _game_cells(game, level)
    games = list(GAMES) if game == "all" else list(game)
    if not games:
        raise ValueError("game: the list is empty; give game names or 'all'")
    if len(set(games)) != len(games):
        raise ValueError(f"game: {games} names a game twice")
    return [c for g in games for c in _game_cells(g, level)]


def _game_cells(game: str, level: int | Sequence[int] | str) -> list[tuple[str, int]]:
    if game not in GAMES:
        raise ValueError(f"game: unknown game {game!r}; allowed: {', '.join(GAMES)}")
    known = level_numbers(game)
    chosen = known if level == "all" else [level] if isinstance(level, int) else list(level)
    for n in chosen:
        if not isinstance(n, int) or n not in known:
            raise ValueError(f"level: {n!r} is not a level of {game}; allowed: {known[0]}-{known[-1]} or 'all'")
    if not chosen:
        raise ValueError("level: the list is empty; give level numbers or 'all'")
    return [(game, n) for n in chosen]


def episode_cell(all_cells: Sequence[tuple[str, int]], index: int) -> tuple[str, int, int]:
    """(game, level, round) of episode ``index``; the round is the game's seed."""
    game, level = all_cells[index % len(all_cells)]
    return game, level, index // len(all_cells)


def template_for(game: str, level: int) -> str:
    """The bundled prompt template of a level (nodes/agent/templates/vmage_*.yaml): FlappyBird's
    three tiers explain different action sets, so each has its own."""
    if game == "flappybird":
        return "vmage_flappybird_no_gravity" if level <= 3 else "vmage_flappybird_keep" if level <= 6 \
            else "vmage_flappybird"
    if game == "race":
        return race_template(level)
    return f"vmage_{game}"
