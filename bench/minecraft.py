"""VAB-Minecraft (the Minecraft pack): what a reset, a round of each action kind and a picture cost.

One run starts the real parts once and measures them side by side, so the numbers share one
machine and one load:

* **Start**: ``Sidecar.start()`` (the flying-squid server up and the mineflayer bot spawned;
  ``server_start_s`` and ``bot_spawn_s`` are the sidecar's own split), then the view's Chromium
  launched and its page loaded (``view_start_s``) and the first frame (``first_frame_ms``).
* **Reset**: the ``reset`` op over several tasks and seeds (``reset_ms``, median), and the frame
  drawn right after one (``reset_frame_ms``): a fresh region is meshed from nothing.
* **Rounds**: tasks played as the scripted gold agent plays them (``planner.plan`` from the
  inventory as it is now, its first action carried out, then ``observe`` and a frame, as
  ``minecraft.env``'s step does). Per action kind, the op's median milliseconds (``ops``):
  ``craft``, ``smelt``, ``equip``, ``teleport_to_spawn`` and ``execute`` split by its subgoal's verb
  (``execute_chop``, ``execute_mine``, ``execute_kill``), with the game ticks an execute ran per
  second of wall time. ``look_up`` is pure Python (no sidecar) and so is the planner's step
  (``plan_ms``); ``observe_ms`` is the op every round ends with.
* **Pictures**: every frame after an action (``frame_ms``, ``frame_p90_ms``), and
  ``frame_share``: the frames' part of the rounds' wall time (op + observe + frame), the ratio to
  watch when the renderer changes.

The smelt play skips the gathering the planner would do (``give`` puts the logs and cobblestone in
the inventory) so that the crafts, furnace and smelt cost seconds, not the minutes of a mine trip.

    python bench/minecraft.py [--json] [--quick] [--seeds 2] [--rounds 30] [--no-frames]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nodes.game.minecraft import planner  # noqa: E402
from nodes.game.minecraft.lookup import look_up  # noqa: E402
from nodes.game.minecraft.node import EXECUTE_TICKS  # noqa: E402  (the env node's budget for one execute call)
from nodes.game.minecraft.sidecar import Sidecar  # noqa: E402
from nodes.game.minecraft.tasks import task_by_name  # noqa: E402

#: tasks whose resets are timed: plain worlds and worlds with VAB's spawned mobs, plants and blocks
RESET_TASKS = ("stone_pickaxe", "leather", "cake")
#: (task, what is given first) played by the planner: chop, crafts, equip and mine; a furnace and a
#: smelt from given raw materials; a kill
PLAYS: tuple[tuple[str, dict[str, int]], ...] = (
    ("stone_pickaxe", {}),
    ("charcoal", {"oak_log": 6, "cobblestone": 8}),
    ("leather", {}),
)
#: one log short, so the quick play chops one (a few seconds) beside its crafts and smelt
QUICK_PLAYS: tuple[tuple[str, dict[str, int]], ...] = (("charcoal", {"oak_log": 3, "cobblestone": 8}),)


def op_kind(action: planner.Action) -> str:
    """The row an action is timed under: execute by its subgoal's verb (chop, mine, kill...)."""
    if action.kind != "execute":
        return action.kind
    return f"execute_{str(action.args[0]).split()[0]}"


def spread(ms: list[float]) -> dict[str, Any]:
    """Median, 90th percentile and count of a list of milliseconds (p90 needs two or more)."""
    if not ms:
        return {"n": 0}
    out: dict[str, Any] = {"ms": round(statistics.median(ms), 2), "n": len(ms)}
    if len(ms) >= 2:
        out["p90_ms"] = round(statistics.quantiles(ms, n=10)[-1], 2)
    return out


class Bench:
    """The sidecar (started by the caller on the main thread) and, when frames are on, its view."""

    def __init__(self, side: Sidecar, frames: bool, rounds: int) -> None:
        self.side = side
        self.frames = frames
        self.rounds = rounds
        self.view: Any = None
        self.ops: dict[str, list[float]] = defaultdict(list)
        self.failed: dict[str, int] = defaultdict(int)
        self.observe_ms: list[float] = []
        self.reset_ms: list[float] = []
        self.reset_frame_ms: list[float] = []
        self.frame_ms: list[float] = []
        self.plan_ms: list[float] = []
        self.ticks_per_s: list[float] = []
        self.round_s = 0.0
        self.frames_s = 0.0
        self.out: dict[str, Any] = {}

    async def ask(self, op: str, args: dict[str, Any] | None = None, timeout_s: float = 120.0) -> tuple[Any, float]:
        """One sidecar request off the event loop, as the env node makes it: (result, milliseconds)."""
        started = time.perf_counter()
        result = await asyncio.to_thread(self.side.request, op, args or {}, timeout_s=timeout_s)
        return result, (time.perf_counter() - started) * 1e3

    async def frame(self) -> float:
        started = time.perf_counter()
        await self.view.frame()
        return (time.perf_counter() - started) * 1e3

    async def start_view(self) -> None:
        from nodes.game.minecraft.view import View

        url = (await self.ask("view"))[0]["url"]
        started = time.perf_counter()
        self.view = View(url)
        await self.view.start()
        self.out["view_start_s"] = round(time.perf_counter() - started, 3)

    async def reset(self, name: str, seed: int, frame: bool = True) -> dict[str, Any]:
        """A reset, timed, and the frame after it (the first of the run is ``first_frame_ms``)."""
        world, ms = await self.ask("reset", {"task": name, "seed": seed})
        self.reset_ms.append(ms)
        if self.view is not None and (frame or "first_frame_ms" not in self.out):
            ms = await self.frame()
            if "first_frame_ms" not in self.out:
                self.out["first_frame_ms"] = round(ms, 1)
            else:
                self.reset_frame_ms.append(ms)
        return world

    async def resets(self, tasks: tuple[str, ...], seeds: int) -> None:
        """Each task at ``seeds`` seeds; a frame after the first seed's only (a frame after a reset costs seconds)."""
        for seed in range(seeds):
            for name in tasks:
                await self.reset(name, 100 + seed, frame=seed == 0)

    async def play(self, name: str, given: dict[str, int]) -> dict[str, Any]:
        """Play one task with the planner's actions until its target is held or the rounds run out."""
        task = task_by_name(name)
        world = await self.reset(name, 0, frame=False)
        for item, count in given.items():
            world = (await self.ask("give", {"item": item, "count": count}))[0]
        if self.view is not None:  # the new region meshed: a reset's frame, not a round's
            self.reset_frame_ms.append(await self.frame())
        rounds = 0
        done = False
        refused: list[str] = []  # the same action refused twice in a row ends the play: the planner would repeat it
        while rounds < self.rounds and len(refused) < 2:
            started = time.perf_counter()
            equipped = None if world["equipped"] in ("none", "air") else world["equipped"]
            try:
                steps = planner.plan(task.target, task.count, world["inventory"], nearby=task.init_command,
                                     equipped=equipped)
            except planner.PlanError:
                break
            self.plan_ms.append((time.perf_counter() - started) * 1e3)
            if not steps:
                done = True
                break
            action, tick = steps[0], world["tick"]
            ok = await self.act(action)
            rounds += 1
            world, observe_ms = await self.ask("observe")
            self.observe_ms.append(observe_ms)
            if action.kind == "execute" and world["tick"] > tick:
                self.ticks_per_s.append((world["tick"] - tick) / (self.ops[op_kind(action)][-1] / 1e3))
            if ok:
                refused = []
            else:
                self.failed[op_kind(action)] += 1
                refused = [*refused, str(action)] if refused in ([], [str(action)]) else [str(action)]
            if self.view is not None:
                ms = await self.frame()
                self.frame_ms.append(ms)
                self.frames_s += ms / 1e3
            self.round_s += time.perf_counter() - started
        # one teleport per play: back from wherever the executor walked
        started = time.perf_counter()
        _, ms = await self.ask("teleport_to_spawn")
        self.ops["teleport_to_spawn"].append(ms)
        self.observe_ms.append((await self.ask("observe"))[1])
        if self.view is not None:
            ms = await self.frame()
            self.frame_ms.append(ms)
            self.frames_s += ms / 1e3
        self.round_s += time.perf_counter() - started
        return {"task": name, "rounds": rounds + 1, "done": done, "refused": refused[-1] if refused else None}

    async def act(self, action: planner.Action) -> bool:
        """Carry out one action as the env node asks the sidecar for it; time it under its kind."""
        if action.kind == "execute":
            prompt, goal, num = action.args
            result, ms = await self.ask("execute", {"prompt": prompt, "goal_item": goal, "num": num,
                                                    "max_ticks": EXECUTE_TICKS}, max(120.0, EXECUTE_TICKS / 20 + 30))
        elif action.kind == "equip":
            result, ms = await self.ask("equip", {"item": action.item})
        else:
            result, ms = await self.ask(action.kind, {"item": action.item, "num": action.count})
        self.ops[op_kind(action)].append(ms)
        return bool(result.get("success"))


def look_up_us(n: int) -> float:
    """Median microseconds of ``look_up`` (the recipe book's text; no world involved)."""
    items = ("stone_pickaxe", "charcoal", "cake", "leather", "planks", "white_wool")
    times = []
    for i in range(n):
        started = time.perf_counter()
        look_up(items[i % len(items)])
        times.append((time.perf_counter() - started) * 1e6)
    return round(statistics.median(times), 1)


async def measure(side: Sidecar, args: argparse.Namespace) -> dict[str, Any]:
    quick = args.quick
    bench = Bench(side, frames=not args.no_frames, rounds=args.rounds)
    try:
        if bench.frames:
            await bench.start_view()
        await bench.resets(RESET_TASKS[:1] if quick else RESET_TASKS, 1 if quick else args.seeds)
        plays = [await bench.play(name, given) for name, given in (QUICK_PLAYS if quick else PLAYS)]
    finally:
        if bench.view is not None:
            await bench.view.close()
    out = bench.out
    out["resets"] = len(bench.reset_ms)
    out["reset_ms"] = round(statistics.median(bench.reset_ms), 1)
    out["reset_max_ms"] = round(max(bench.reset_ms), 1)
    if bench.reset_frame_ms:
        out["reset_frame_ms"] = round(statistics.median(bench.reset_frame_ms), 1)
    out["ops"] = {kind: spread(ms) for kind, ms in sorted(bench.ops.items())}
    out["ops"]["look_up"] = {"us": look_up_us(200), "n": 200}
    out["failed"] = dict(bench.failed)
    out["plays"] = plays
    out["plan_ms"] = round(statistics.median(bench.plan_ms), 2) if bench.plan_ms else None
    out["observe_ms"] = round(statistics.median(bench.observe_ms), 2)
    out["execute_ticks_per_s"] = round(statistics.median(bench.ticks_per_s), 1) if bench.ticks_per_s else None
    if bench.frame_ms:
        frames = spread(bench.frame_ms)
        out.update(frame_ms=frames["ms"], frame_p90_ms=frames.get("p90_ms"), frames=frames["n"],
                   frame_share=round(bench.frames_s / bench.round_s, 3))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="about half a minute (the smoke test's); not numbers to quote")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per reset task")
    ap.add_argument("--rounds", type=int, default=30, help="most rounds per played task")
    ap.add_argument("--no-frames", action="store_true", help="no view, no Chromium: the world's ops only")
    args = ap.parse_args()
    if args.seeds < 1 or args.rounds < 1:
        ap.error("--seeds and --rounds must be at least 1")
    if (problem := Sidecar.missing()) is not None:
        sys.exit(f"bench/minecraft.py: {problem}")
    wall = time.perf_counter()
    # the sidecar dies with the thread that started it (PR_SET_PDEATHSIG): start it here, on the main thread
    side = Sidecar()
    started = time.perf_counter()
    ready = side.start()
    try:
        start_s = time.perf_counter() - started
        out: dict[str, Any] = {"sidecar_start_s": round(start_s, 3), "server_start_s": ready.get("server_start_s"),
                               "bot_spawn_s": ready.get("bot_spawn_s")}
        out.update(asyncio.run(measure(side, args)))
    finally:
        side.close()
    out["seconds"] = round(time.perf_counter() - wall, 1)
    out["quick"] = args.quick
    if args.json:
        print(json.dumps(out))
        return
    ops = out.pop("ops")
    for k, v in out.items():
        print(f"{k:22} {v}")
    print(f"{'op':22} {'median ms':>10} {'p90 ms':>10} {'n':>4}")
    for kind, row in ops.items():
        median = f"{row['us'] / 1e3:.4f}" if "us" in row else row.get("ms", "-")
        print(f"{kind:22} {median:>10} {row.get('p90_ms', '-'):>10} {row['n']:>4}")


if __name__ == "__main__":
    main()
