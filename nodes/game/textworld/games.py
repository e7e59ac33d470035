"""Generates BALROG's TextWorld games locally, with TextWorld's own generator, into a cache.

The same task and seed always give the same game (TextWorld derives every random choice from the
seed), so a game is generated once and reused: ``<cache>/<task>/<task>-s<seed>.z8``. Generation
takes seconds for Coin Collector and The Cooking Game, minutes for Treasure Hunter (its level-30
quest search); a lock file keeps two processes from generating the same game at once.

Run ``python -m nodes.game.textworld.games TASK SEED [SEED...]`` to fill the cache ahead of a run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path

from nodes.game.textworld.tasks import get_task

DEFAULT_CACHE = Path(os.environ.get("FRAMEBUS_TEXTWORLD_CACHE", Path.home() / ".cache" / "framebus" / "textworld"))


def game_path(cache: Path, task: str, seed: int) -> Path:
    return Path(cache) / task / f"{task}-s{seed}.z8"


def short_objective(walkthrough: list[str]) -> str:
    """The goal without the walkthrough: the object the last command takes."""
    last = walkthrough[-1] if walkthrough else ""
    target = last.removeprefix("take ").split(" from ")[0].strip() or "target object"
    return f"Find the {target} and take it."


def make_game(task: str, seed: int, cache: Path = DEFAULT_CACHE) -> Path:
    """The path of the game file for ``task`` and ``seed``, generated first if it is not cached."""
    out = game_path(cache, task, seed)
    if out.exists():
        return out
    spec = get_task(task)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():
            return out
        import textworld
        import textworld.challenges
        import textworld.generator

        # made in a folder of its own, then moved beside the others with the .z8 last: a .z8 in the cache
        # is a whole game with its .json, even after a generation that was killed half way
        making = out.parent / f".making-{out.stem}"
        shutil.rmtree(making, ignore_errors=True)  # a killed generation's leftovers (we hold the lock)
        making.mkdir()
        options = textworld.GameOptions()
        options.seeds = int(seed)
        options.path = str(making / out.name)
        options.file_ext = ".z8"
        options.force_recompile = True
        _, make, _ = textworld.challenges.CHALLENGES[spec.challenge]
        game = make(settings={**spec.settings, "seed": seed, "format": "z8"}, options=options)
        if spec.hide_walkthrough:
            game.objective = short_objective(list(game.metadata.get("walkthrough") or []))
        made = Path(textworld.generator.compile_game(game, options))
        for side in sorted(making.glob(f"{made.stem}.*"), key=lambda p: p.suffix == ".z8"):
            side.replace(out.with_suffix(side.suffix))
        shutil.rmtree(making, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m nodes.game.textworld.games TASK SEED [SEED...]", file=sys.stderr)
        return 2
    for seed in argv[1:]:
        print(make_game(argv[0], int(seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
