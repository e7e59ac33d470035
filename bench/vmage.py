"""V-MAGE: how fast the five games run, what the bus adds to a decision, and how long the ELO takes.

Three measurements in one run, so their numbers share one machine and one load:

* **Headless logic frames per second** of each game in this process, random actions held for the
  level's sample frames over every level in turn: without drawing (the logic alone, what a text-only
  or scripted run pays) and drawing every frame at 360 px (the window scaled as V-MAGE's model sees it).
* **Through the bus vs in one process**, side by side in alternating blocks: the vmage env node and a
  random agent as separate processes in lockstep (one episode per configuration, each level's own
  sample frames, a 360 px frame rendered per decision as V-MAGE sends), then the same episodes in a
  plain loop here doing the env's work per decision (the observation with its text, the frame, the
  agent's choice replayed, the decision's frames, the step record). The replay uses the actions the
  bus agent chose, so both sides play the same games (``same_games`` checks the final score and
  frame of each). ``bus_overhead_ratio`` is the ratio of the median time per decision (target
  <= 1.10); without drawn frames a decision is a few microseconds of logic, so that ratio measures
  the bus's round trip rather than its share of a benchmark's decision, and is reported apart.
  Beside it, the floor measured in the same run: a raw pyzmq round trip between two processes and
  one copy of a frame, added to the direct decision (``floor_ratio``, the best ratio any split into
  processes could show here) and the bus against it (``bus_vs_floor``).
* **elo_full_pool_s**: ``nodes.judge.vmage_elo.rank`` on the full V-MAGE pool, 33 levels x 100
  matches x 10^4 permutations, for 8 synthetic models whose scores come from a fixed seed (target <= 10 s).

    python bench/vmage.py [--json] [--quick] [--seconds 0.6] [--blocks 2] [--permutations 10000]

``--quick`` (the smoke test's) shrinks every part to a few seconds; its numbers are not the ones to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from bench.bus import RawPeers  # noqa: E402
from kernel.testing import Harness  # noqa: E402
from nodes.game.vmage.base import DEFAULT_HEIGHT, FRAME_CAP, decide, render  # noqa: E402
from nodes.game.vmage.catalog import GAMES, cells, template_for  # noqa: E402
from nodes.judge.vmage_elo import PERMUTATIONS, rank  # noqa: E402
from nodes.judge.vmage_runs import Entrant, Result  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc; Linux only)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# headless frames per second -------------------------------------------------------------------------
def logic_fps(game_name: str, seconds: float, draw: bool, height: int = DEFAULT_HEIGHT) -> tuple[float, int]:
    """Logic frames per second of ``game_name`` over its levels in turn (episode r of each level is
    round r), random actions; ``draw`` renders every frame at ``height``. Plays whole decisions
    until ``seconds`` have passed. Returns (frames per second, frames played)."""
    rng = random.Random(0)
    levels = sorted(GAMES[game_name].levels)
    on_frame = (lambda g: render(g, height)) if draw else None
    frames, spent, episode = 0, 0.0, 0
    while spent < seconds:
        level = levels[episode % len(levels)]
        game = GAMES[game_name](level, episode // len(levels))
        lv = game.level
        cap = lv.max_rounds or FRAME_CAP
        t = time.perf_counter()
        while not game.over and spent + (time.perf_counter() - t) < seconds:
            frames += decide(game, rng.choice(lv.actions), lv.sample_frames, cap, on_frame=on_frame)
        spent += time.perf_counter() - t
        episode += 1
    return frames / spent, frames


# through the bus vs in one process ------------------------------------------------------------------
async def bus_block(game: str | list[str], episodes: int,
                    draw: bool) -> tuple[list[float], list[dict[str, Any]], float]:
    """``episodes`` episodes of the env node, a random agent and the judge on the bus in lockstep: the seconds
    between consecutive ``step`` messages of an episode (send timestamps, the reset's step left out),
    per episode its (game, level, round), the actions played and the final score and frame, and the
    CPU seconds the env, agent and judge processes used over the whole block."""
    async with Harness(quiet=True, episodes=episodes, seed=0) as h:
        h.add("env", "nodes.game.vmage.node:VmageEnv",
              params={"game": game, "level": "all", "frames": draw, "height": DEFAULT_HEIGHT},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:RandomAgent", inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        h.add("judge", "nodes.judge.vmage:VmageJudge",  # ends the episodes, as in a run
              inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 1 << 16}})
        await h.start(run=False)
        pids = [h.pid(n) for n in ("env", "agent", "judge")]
        cpu_start = sum(cpu_seconds(p) for p in pids)
        h.kernel.start()
        gaps: list[float] = []
        runs: dict[str, dict[str, Any]] = {}
        last: dict[str, float] = {}
        ended = 0
        while ended < episodes:
            msg = await asyncio.wait_for(probe.recv("step"), 120)
            body = msg.body
            eid = body["episode"]
            run = runs.setdefault(eid, {"actions": []})
            run["actions"].append(body["action"])
            if eid in last and body["t"] > 0:
                gaps.append(msg.ts - last[eid])
            last[eid] = msg.ts
            if body["done"]:
                info = body["info"]
                run.update(game=info["game"], level=int(info["level"]), round=int(info["round"]),
                           score=float(info["score"]), frames=int(info["frames"]), eid=eid)
                ended += 1
        cpu = sum(cpu_seconds(p) for p in pids) - cpu_start
        await h.wait_finished(60)
    return gaps, sorted(runs.values(), key=lambda r: r["eid"]), cpu


def direct_block(runs: list[dict[str, Any]], draw: bool) -> tuple[list[float], bool, float]:
    """The bus block's episodes replayed in this process with the env's per-decision work (see the
    module docstring): the seconds per decision, and whether every replay ended with the bus run's
    score and frame (the same game), and the CPU seconds of the whole replay."""
    times: list[float] = []
    same = True
    cpu_start = time.process_time()
    for run in runs:
        game = GAMES[run["game"]](run["level"], run["round"])
        lv = game.level
        cap = lv.max_rounds or FRAME_CAP
        for t, action in enumerate(run["actions"]):
            started = time.perf_counter()
            obs = {"actions": list(lv.actions), "idle": lv.idle, "text": game.describe(), "game": game.name,
                   "level": lv.level, "score": game.score, "game_frame": game.frame,
                   "template": template_for(game.name, lv.level), "t": t}
            if draw:
                obs["frame"] = render(game, DEFAULT_HEIGHT)
            before = game.score
            played = decide(game, action or lv.idle, lv.sample_frames, cap) if action is not None else 0
            {"episode": run["eid"], "t": t, "action": action, "reward": game.score - before, "done": game.over,
             "info": {"game": game.name, "level": lv.level, "score": game.score, "frames": game.frame,
                      "played": played, "over": game.over, "reason": game.reason}}
            if t > 0:  # like the bus side, the step right after the reset is not counted
                times.append(time.perf_counter() - started)
        same = same and game.score == run["score"] and game.frame == run["frames"]
    return times, same, time.process_time() - cpu_start


def bus_vs_direct(game: str | list[str], episodes: int, blocks: int, draw: bool) -> dict[str, Any]:
    """Alternating bus and direct blocks of the same episodes; medians and means per decision."""
    bus: list[float] = []
    direct: list[float] = []
    same = True
    bus_cpu = direct_cpu = 0.0
    decisions = 0
    for _ in range(blocks):
        gaps, runs, cpu = asyncio.run(bus_block(game, episodes, draw))
        bus += gaps
        bus_cpu += cpu
        decisions += sum(len(r["actions"]) for r in runs)
        times, replayed, cpu = direct_block(runs, draw)
        direct += times
        direct_cpu += cpu
        same = same and replayed
    bus_ms, direct_ms = statistics.median(bus) * 1e3, statistics.median(direct) * 1e3
    floor = floor_ms(draw)
    floor_total = direct_ms + floor["raw_rtt_ms"] + floor["frame_copy_ms"]
    return {"bus_decision_ms": round(bus_ms, 3), "direct_decision_ms": round(direct_ms, 3),
            "bus_overhead_ms": round(bus_ms - direct_ms, 3), "bus_overhead_ratio": round(bus_ms / direct_ms, 3),
            "bus_mean_decision_ms": round(statistics.fmean(bus) * 1e3, 3),
            "direct_mean_decision_ms": round(statistics.fmean(direct) * 1e3, 3),
            # CPU per decision, every decision of a block (resets included): the env, agent and judge
            # processes vs the loop here; unlike wall time it does not grow when other jobs delay the
            # hand-offs between processes
            "bus_cpu_ms_per_decision": round(bus_cpu / decisions * 1e3, 3),
            "direct_cpu_ms_per_decision": round(direct_cpu / decisions * 1e3, 3),
            "cpu_overhead_ratio": round(bus_cpu / direct_cpu, 3) if direct_cpu > 0 else None,
            "decisions": {"bus": len(bus), "direct": len(direct)}, "same_games": same,
            # the floor: the direct decision plus one raw round trip (and one frame copy) measured now;
            # floor_ratio is the best bus_overhead_ratio any process split could reach here
            **floor, "floor_ratio": round(floor_total / direct_ms, 3), "bus_vs_floor": round(bus_ms / floor_total, 3)}


def floor_ms(draw: bool, n: int = 2000) -> dict[str, float]:
    """What any two-process split of a decision costs at least, on this machine now: the median raw
    pyzmq round trip of a small message (the observation out, the action back) and, with frames, one
    copy of a 360 px frame (what handing it to another process costs at the least, into shared memory)."""
    tmp = tempfile.mkdtemp(prefix="fbvmage-", dir="/tmp")
    raw = RawPeers(tmp)
    try:
        raw.small_rtt(200)
        rtt = statistics.median(raw.small_rtt(n)) * 1e3
    finally:
        raw.close()
        shutil.rmtree(tmp, ignore_errors=True)
    copy = 0.0
    if draw:
        frame = np.zeros((DEFAULT_HEIGHT, DEFAULT_HEIGHT * 4 // 3, 3), np.uint8)
        slot = np.empty_like(frame)
        times = []
        for _ in range(500):
            t = time.perf_counter()
            np.copyto(slot, frame)
            times.append(time.perf_counter() - t)
        copy = statistics.median(times) * 1e3
    return {"raw_rtt_ms": round(rtt, 4), "frame_copy_ms": round(copy, 4)}


# ELO over the full pool -------------------------------------------------------------------------------
def synthetic_entrants(models: int, rounds: int, seed: int = 0) -> list[Entrant]:
    """``models`` entrants with a result on every (game, level, round) of the 33 configurations:
    scores drawn around a per-model strength from a fixed seed, valid rates in [0.8, 1]."""
    rng = random.Random(seed)
    every = cells("all", "all")
    out = []
    for m in range(models):
        strength = m / max(models - 1, 1)
        results = {(g, lv, r): Result(score=float(round(rng.gauss(10 * strength, 4))),
                                      valid_rate=round(rng.uniform(0.8, 1.0), 3))
                   for g, lv in every for r in range(rounds)}
        out.append(Entrant(name=f"model{m}", results=results, clocks={"lockstep"}))
    return out


def elo_time(models: int, permutations: int) -> tuple[float, dict[str, Any]]:
    """Seconds of ``rank`` over the synthetic pool (match drawing, every permutation, the table)."""
    entrants = synthetic_entrants(models, rounds=10)
    t = time.perf_counter()
    result = rank(entrants, permutations=permutations)
    return time.perf_counter() - t, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="a few seconds in all (smoke test); not for quoting")
    parser.add_argument("--seconds", type=float, default=0.6, help="seconds per game and mode for frames per second")
    parser.add_argument("--blocks", type=int, default=2, help="alternating bus / direct blocks")
    parser.add_argument("--permutations", type=int, default=PERMUTATIONS, help="ELO permutations")
    parser.add_argument("--models", type=int, default=8, help="synthetic models in the ELO pool")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.blocks, args.permutations = 0.05, 1, 100
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    fps = {g: {"no_draw": round(logic_fps(g, args.seconds, False)[0], 1),
               f"draw_{DEFAULT_HEIGHT}px": round(logic_fps(g, args.seconds, True)[0], 1)} for g in GAMES}
    # the bus side: every configuration once per block (pong alone in quick mode), V-MAGE's frames on
    game: str | list[str] = "pong" if args.quick else "all"
    episodes = len(cells(game, "all"))
    framed = bus_vs_direct(game, episodes, args.blocks, draw=True)
    bare = bus_vs_direct(game, episodes, args.blocks, draw=False)
    elo_s, elo = elo_time(args.models, args.permutations)
    out: dict[str, Any] = {
        "logic_fps": fps,
        "bus_games": game,
        "sample_frames": "each level's default",
        **framed,
        "frames_px": DEFAULT_HEIGHT,
        "target_ratio": 1.10,
        "no_frames": bare,
        "elo_full_pool_s": round(elo_s, 2),
        "elo_pool": {"models": args.models, "levels": len(elo["matches"]), "matches": sum(elo["matches"].values()),
                     "permutations": args.permutations},
        "elo_target_s": 10.0,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "load_average_1m_at_start": round(load_before, 2),
        "quick": args.quick,
        "seconds": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for g, v in fps.items():
            print(f"{g:11s} {v['no_draw']:10.0f} logic frames/s headless, {v[f'draw_{DEFAULT_HEIGHT}px']:8.0f} "
                  f"drawing every frame at {DEFAULT_HEIGHT} px")
        print(f"through the bus vs one process, random agent, {DEFAULT_HEIGHT} px frames, each level's sample "
              f"frames: {out['bus_decision_ms']:.3f} vs {out['direct_decision_ms']:.3f} ms per decision -> ratio "
              f"{out['bus_overhead_ratio']:.3f} (target <= 1.10; {out['decisions']['bus']} decisions; same games: "
              f"{out['same_games']}; CPU per decision {out['bus_cpu_ms_per_decision']:.3f} vs "
              f"{out['direct_cpu_ms_per_decision']:.3f} ms; floor {out['floor_ratio']:.3f}: a raw round trip "
              f"{out['raw_rtt_ms']:.3f} ms + a frame copy {out['frame_copy_ms']:.3f} ms); without frames {bare['bus_decision_ms']:.3f} vs "
              f"{bare['direct_decision_ms']:.3f} ms -> {bare['bus_overhead_ratio']:.3f}")
        print(f"ELO, full pool ({out['elo_pool']['levels']} levels, {out['elo_pool']['matches']} matches, "
              f"{args.permutations} permutations, {args.models} models): {elo_s:.2f} s (target <= 10 s)")
        print(f"load average {out['load_average_1m']} (at start {out['load_average_1m_at_start']}); "
              f"{out['seconds']} s on {out['cpus']} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
