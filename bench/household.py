"""VAB-OmniGibson offline (the household pack): how fast the world steps, what the bus adds, and what a picture costs.

Measured side by side in one run, so the numbers share one machine and one load:

* **In one process**: the program solver plays VAB's instances through the env's per-step work (the
  action applied, BDDL's goal evaluator run, the view recomputed, the turn's text written), no
  pictures: ``inproc_steps_per_s``.
* **Through the bus**: the same instances with ``household.env``, ``agent.scripted`` (which asks
  the env's oracle service each step, as ``launch/vab_household_gold.yaml`` does) and
  ``household.judge`` as separate processes in lockstep: ``bus_steps_per_s``, and the ratio
  ``bus_slowdown`` (in-process over bus steps per second). Blocks alternate, so a busy moment of
  the machine falls on both sides.
* **Pictures**: the median milliseconds to draw one 1280x720 egocentric frame with its labelled
  boxes (``render_ms``), the fridge view (``fridge_render_ms``), and PNG encoding (``png_ms``).

    python bench/household.py [--json] [--quick] [--episodes 20] [--blocks 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.testing import Harness  # noqa: E402
from nodes.game.household import activities, actions, render, world  # noqa: E402
from nodes.game.household.backend import checker  # noqa: E402
from nodes.game.household.goaltext import goal_text  # noqa: E402
from nodes.game.household.node import candidates  # noqa: E402
from nodes.game.household.solver import Solver  # noqa: E402
from nodes.game.household.visibility import observe  # noqa: E402


def inproc(episodes: int) -> tuple[int, float, int]:
    """VAB's first ``episodes`` instances played by the solver here: (steps, seconds, successes)."""
    steps, spent, wins = 0, 0.0, 0
    for activity, scene in activities.vab_instances()[:episodes]:
        problem = activities.load(activity)
        started = time.perf_counter()
        hh = world.build(problem, scene, 0)
        observe(hh)
        goal_text(problem, hh)
        check = checker(problem)
        solver = Solver(hh, problem)
        for _ in range(100):
            result = actions.apply(hh, solver.next_action())
            state = check.status(hh)
            candidates(hh)
            steps += 1
            if state.success or result.done:
                wins += int(state.success)
                break
        spent += time.perf_counter() - started
    return steps, spent, wins


async def bus(episodes: int) -> tuple[int, float, int]:
    """The same instances as separate processes: (steps, seconds from the first obs to the last step, successes)."""
    async with Harness(quiet=True, episodes=episodes, seed=0) as h:
        h.add("env", "nodes.game.household.node:HouseholdEnv", params={"activity": "vab"},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:ScriptedAgent", params={"env": "env"},
              inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        h.add("judge", "nodes.judge.household:HouseholdJudge",
              inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 1 << 16}})
        await h.start()
        steps, wins, ended = 0, 0, 0
        first: float | None = None
        last = 0.0
        while ended < episodes:
            msg = await asyncio.wait_for(probe.recv("step"), 120)
            first = msg.ts if first is None else first
            last = msg.ts
            steps += 1
            if msg.body["done"]:
                ended += 1
                wins += int(bool(msg.body["info"].get("success")))
        await h.wait_finished(60)
    return steps, last - (first or last), wins


def pictures(instances: int) -> dict[str, float]:
    """Median milliseconds per frame over the start of several instances, each seen from all four headings."""
    frame_ms: list[float] = []
    png_ms: list[float] = []
    fridge_ms: list[float] = []
    for activity, scene in activities.vab_instances()[:: max(1, 181 // instances)][:instances]:
        hh = world.build(activity, scene, 0)
        for _ in range(4):
            shown = observe(hh)
            t = time.perf_counter()
            img = render.frame(hh, shown)
            frame_ms.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            render.encode(img)
            png_ms.append((time.perf_counter() - t) * 1e3)
            hh.agent.heading = (hh.agent.heading + 1) % 4
        fridge = next((t for t in hh.labelled() if "refrigerator" in t.category), None)
        if fridge is not None and fridge.openable:
            fridge.is_open = True
            t = time.perf_counter()
            render.fridge_frame(hh, fridge.name, observe(hh, fridge.name))
            fridge_ms.append((time.perf_counter() - t) * 1e3)
    return {"render_ms": round(statistics.median(frame_ms), 2), "render_p90_ms": round(
        statistics.quantiles(frame_ms, n=10)[-1], 2), "png_ms": round(statistics.median(png_ms), 2),
        "fridge_render_ms": round(statistics.median(fridge_ms), 2) if fridge_ms else None,
        "frames": len(frame_ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="a few seconds (the smoke test's); not numbers to quote")
    ap.add_argument("--episodes", type=int, default=20, help="instances per block (VAB's first N)")
    ap.add_argument("--blocks", type=int, default=2, help="alternating in-process / bus blocks")
    args = ap.parse_args()
    episodes, blocks = (3, 1) if args.quick else (args.episodes, args.blocks)
    direct = [0, 0.0, 0]
    through = [0, 0.0, 0]
    for _ in range(blocks):
        for acc, (steps, spent, wins) in ((direct, inproc(episodes)), (through, asyncio.run(bus(episodes)))):
            acc[0] += steps
            acc[1] += spent
            acc[2] += wins
    inproc_sps, bus_sps = direct[0] / direct[1], through[0] / through[1]
    out: dict[str, Any] = {
        "episodes": episodes * blocks, "inproc_steps": direct[0], "bus_steps": through[0],
        "inproc_steps_per_s": round(inproc_sps, 1), "bus_steps_per_s": round(bus_sps, 1),
        "bus_slowdown": round(inproc_sps / bus_sps, 2), "inproc_successes": direct[2], "bus_successes": through[2],
        **pictures(4 if args.quick else 24), "quick": args.quick}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:22} {v}")


if __name__ == "__main__":
    main()
