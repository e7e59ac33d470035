"""Sokoban through the bus vs the same loop in one process: what framebus adds to each step of a
cheap grid game.

The framebus side runs the Sokoban environment node and the random baseline agent as separate
processes (lockstep clock, text observations, no frames, the environment ending its own episodes);
the direct side runs the identical work in a plain loop here: build the observation, pick a random
move, apply it, build the step message. A Sokoban step costs tens of microseconds, so the difference
per step is almost all bus: an observation out, an action back, a step message out. The headline
number compares medians per step (bus: the gaps between the environment's consecutive step
messages within an episode); the mean over the whole run, episode hand-offs with the kernel and the
stalls of a shared machine included, is reported beside it.

``step_vs_raw_rtt_ratio`` sets the bus step's p50 against the p50 of a raw pyzmq round trip between
two processes carrying a Sokoban observation (bench/floor.py), measured after each bus block in the
same run: a bus step is at least one round trip (observation out, action back) plus the step message,
so this is how far above the transport's floor a step sits (target <= 1.3), in units that travel
between machines better than microseconds do. ``step_vs_loop_rtt_ratio`` sets it against the same
round trip between two event loops, the floor for processes that, like nodes, also serve timers
and services while they wait; ``step_vs_loop_reader_rtt_ratio`` against that round trip with the
step record also sent to a third event-loop process, the shape of the step the bus times (the
environment, the agent and the reader of ``step``): what is left above it is framebus's own work.

    python bench/grid.py [--json] [--episodes 120] [--blocks 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import floor  # noqa: E402
from kernel.testing import Harness  # noqa: E402
from nodes.game.sokoban import benchmark  # noqa: E402
from nodes.game.sokoban.game import SokobanGame  # noqa: E402
from nodes.game.sokoban.node import observation  # noqa: E402


async def bus_block(episodes: int, seed: int) -> tuple[list[float], int, float]:
    """``episodes`` random-agent episodes on the bus: the seconds between consecutive steps of an
    episode (from the environment's send timestamps on its ``step`` messages), the steps played and
    the wall-clock seconds of the whole run (episode hand-offs with the kernel included)."""
    async with Harness(quiet=True, episodes=episodes, seed=seed) as h:
        h.add("env", "nodes.game.sokoban.node:SokobanEnv", params={"set": "mini", "frames": False, "judge": False},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:RandomAgent", inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 60 * episodes}})
        await h.start(run=False)
        t = time.perf_counter()
        h.kernel.start()
        status, reason = await h.wait_finished(120)
        seconds = time.perf_counter() - t
        if status != "completed":
            raise RuntimeError(f"the bus run ended {status}: {reason}")
        # From the book's running means (its database is written by a thread, and may lag the last episode here).
        book = h.kernel.book
        steps = round(book.summary_metrics()["steps"] * int(book.counts()["completed"] or 0))
        gaps, last = [], None
        while (msg := probe.recv_nowait("step")) is not None:
            if last is not None and msg.body["t"] > 0:
                gaps.append(msg.ts - last)
            last = msg.ts
    return gaps, steps, seconds


def direct_block(episodes: int, seed: int) -> tuple[list[float], int, float]:
    """The same episodes' work in one process (observation, random choice, step, step message),
    timed per step and in all."""
    levels = benchmark.levels("mini")
    rng = random.Random(seed)
    times = []
    t0 = time.perf_counter()
    for index in range(episodes):
        game = SokobanGame(levels[index % len(levels)])
        eid = f"ep{index:05d}"
        while not game.done:
            t = time.perf_counter()
            obs = {**observation(game), "env": "sokoban", "episode": eid, "t": game.t}
            step = game.play(rng.choice(obs["actions"]))
            {"episode": eid, "t": step.t, "action": step.action, "valid": step.valid, "reward": step.reward,
             "done": step.done, "info": {**game.info(), "set": "mini"}}
            times.append(time.perf_counter() - t)
    return times, len(times), time.perf_counter() - t0


def floor_rtts_us(n: int = 2000) -> tuple[float, float, float]:
    """Median round trips between two processes whose request is a Sokoban observation and whose reply
    is an action (bench/floor.py): over raw blocking pyzmq, between two event loops, and between event
    loops with the step record also sent to a third (the step's reader). A bus step stands on these,
    on this machine, now."""
    game = SokobanGame(benchmark.levels("mini")[0])
    request = [msgpack.packb({**observation(game), "env": "sokoban", "episode": "ep00000", "t": 0})]
    record = msgpack.packb({"episode": "ep00000", "t": 0, "action": "up", "valid": True, "reward": -0.1,
                            "done": False, "info": {**game.info(), "set": "mini"}})
    return (floor.p50_us(request, n, loop=False), floor.p50_us(request, n, loop=True),
            floor.p50_us(request, n, loop=True, record=record))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--episodes", type=int, default=120, help="episodes per bus block (about 50 steps each)")
    parser.add_argument("--blocks", type=int, default=2, help="alternating direct/bus blocks")
    args = parser.parse_args()
    started = time.monotonic()
    benchmark.levels("mini")  # load the level file before timing anything
    bus: list[tuple[list[float], int, float]] = []
    direct: list[tuple[list[float], int, float]] = []
    rtts, loop_rtts, reader_rtts = [], [], []
    for block in range(args.blocks):
        direct.append(direct_block(args.episodes, block))
        bus.append(asyncio.run(bus_block(args.episodes, block)))
        raw_us, loop_us, reader_us = floor_rtts_us()
        rtts.append(raw_us)
        loop_rtts.append(loop_us)
        reader_rtts.append(reader_us)
    # medians per step (what a quiet moment costs; a shared machine's stalls land in the mean)
    bus_us = statistics.median(g for gaps, _, _ in bus for g in gaps) * 1e6
    direct_us = statistics.median(x for times, _, _ in direct for x in times) * 1e6
    bus_rate = sum(n for _, n, _ in bus) / sum(s for _, _, s in bus)
    direct_rate = sum(n for _, n, _ in direct) / sum(s for _, _, s in direct)
    rtt_us, loop_rtt_us, reader_rtt_us = statistics.median(rtts), statistics.median(loop_rtts), statistics.median(reader_rtts)
    out: dict[str, Any] = {
        "sokoban_step_overhead_us": round(bus_us - direct_us, 1),
        "bus_step_p50_us": round(bus_us, 1),
        "direct_step_p50_us": round(direct_us, 1),
        "mean_step_overhead_us": round((1 / bus_rate - 1 / direct_rate) * 1e6, 1),
        "bus_steps_per_s": round(bus_rate, 1),
        "direct_steps_per_s": round(direct_rate, 1),
        "raw_zmq_rtt_p50_us": round(rtt_us, 1),
        "step_vs_raw_rtt_ratio": round(bus_us / rtt_us, 3),
        "loop_zmq_rtt_p50_us": round(loop_rtt_us, 1),
        "step_vs_loop_rtt_ratio": round(bus_us / loop_rtt_us, 3),
        "loop_reader_rtt_p50_us": round(reader_rtt_us, 1),
        "step_vs_loop_reader_rtt_ratio": round(bus_us / reader_rtt_us, 3),
        "target_ratio": 1.3,
        "steps": {"bus": sum(n for _, n, _ in bus), "direct": sum(n for _, n, _ in direct)},
        "target_us": 150,
        "seconds": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"Sokoban, random agent: {out['bus_steps_per_s']:.0f} steps/s through framebus, "
              f"{out['direct_steps_per_s']:.0f} steps/s in one process; per step p50 {out['bus_step_p50_us']:.0f} vs "
              f"{out['direct_step_p50_us']:.0f} us -> {out['sokoban_step_overhead_us']:.0f} us added by the bus "
              f"(target <= {out['target_us']}; mean {out['mean_step_overhead_us']:.0f} us; raw pyzmq round trip "
              f"{out['raw_zmq_rtt_p50_us']:.0f} us, step/round trip {out['step_vs_raw_rtt_ratio']:.2f}, target <= "
              f"{out['target_ratio']}; "
              f"{out['steps']['bus']} bus steps, {out['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
