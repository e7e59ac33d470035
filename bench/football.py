"""Football through the bus vs gfootball in one process: what framebus adds to each engine step.

Both sides play the same match, frame for frame: the framebus side runs the football environment
node and a random agent as separate processes on the bus (lockstep clock, one engine frame per
decision, no rendering); the direct side then replays exactly the actions the agent chose, with
the same engine seed, in a plain loop in this process. The ratio of the median time per step is
the bus's overhead (target <= 1.10); an 11-a-side match keeps the engine busy enough (~5-6 ms a
frame on CPU) that this is the ratio a benchmark run sees.

    python bench/football.py [--json] [--level 11_vs_11_easy_stochastic] [--frames 400] [--blocks 5] [--ui]

``--ui`` adds the live console (docs/console.md) to the bus side, reading every output, with a page
open on it in headless Chromium for the whole block. ``--ui-cost`` measures what watching costs
side by side: each block plays the bus side twice, with and without the page (which goes first
alternates), and ``ui_cost_ratio`` is the median step with the page over the median without.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# Python puts this script's folder first on the path, where bench/gym.py would shadow the gym
# package that gfootball imports: the folder goes, the repository root comes instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.testing import Harness  # noqa: E402
from nodes.game.football import scenarios  # noqa: E402
from nodes.game.football.engine import Match  # noqa: E402
from nodes.game.football.seats import fixed_players, parse_seats  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc; Linux only)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """CPU seconds all processes on the machine have used so far (from /proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


async def open_console_page(url: str) -> Any:
    """A headless Chromium with the console page open (closed by the returned coroutine function)."""
    from playwright.async_api import async_playwright

    from kernel.tools.report.shot import CHROMIUM_ARGS, chromium

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
    page = await browser.new_page()
    await page.goto(url)
    await page.wait_for_selector('#nodes tr[data-node="env"]')  # the page is live

    async def close() -> None:
        await browser.close()
        await pw.stop()

    return close


async def bus_block(level: str, frames: int, episodes: int, seed: int, text: bool,
                    ui: bool = False) -> list[dict[str, Any]]:
    """Play ``episodes`` episodes through the bus; per episode, the seconds between consecutive
    step messages (after the first, so the reset is not counted), the CPU seconds the environment
    and agent processes used over those steps, the codes played and the seed."""
    out: list[dict[str, Any]] = []
    async with Harness(quiet=True, episodes=episodes, seed=seed) as h:
        h.add("env", "nodes.game.football.node:FootballEnv",
              params={"scenarios": level, "max_frames": frames, "max_decisions": frames, "auto_render": False,
                      "frames": False, "text": text, "judge": False},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:RandomAgent", inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 4096}})
        close_page = None
        if ui:
            from kernel.tools import console

            port, token = console.free_port(), console.new_token()
            sources = ["env/obs", "env/step", "agent/action"]
            h.add("console", console.CONSOLE_USES, params={"port": port, "token": token, "sources": sources},
                  inputs={console.input_name(i): {"from": s, "policy": "latest", "rate": console.READ_RATE}
                          for i, s in enumerate(sources)})
        await h.start(run=not ui)
        if ui:  # the page is open before the first step is played
            close_page = await open_console_page(console.url(port, token))
            h.kernel.start()
            await asyncio.wait_for(h.probe_runtime.wait_started(), 10)
        pids = [h.pid("env"), h.pid("agent")]
        watchers = [h.pid("console")] if ui else []  # what watching adds: the console node ...
        busy_start, watch_start = machine_busy(), sum(cpu_seconds(p) for p in watchers)
        for index in range(episodes):
            sent: list[float] = []
            codes: list[int] = []
            cpu_start = 0.0
            while True:
                msg = await asyncio.wait_for(probe.recv("step"), 120)
                sent.append(msg.ts)  # the environment's send time: records reach a reader in small batches
                if len(sent) == 1:
                    cpu_start = sum(cpu_seconds(p) for p in pids)
                codes += [f["codes"][0] for f in msg.body["info"]["frames"]]
                if msg.body["done"]:
                    break
            cpu = sum(cpu_seconds(p) for p in pids) - cpu_start
            gaps = [b - a for a, b in zip(sent, sent[1:])]
            last = msg.body["info"]["frames"][-1]["state"]
            out.append({"gaps": gaps, "cpu": cpu, "codes": codes, "seed": seed + index, "ball": last["ball"]})
        # ... and every process on the machine (Chromium included), in CPU seconds per step played
        steps = sum(len(r["gaps"]) + 1 for r in out)
        out[0]["busy_per_step"] = (machine_busy() - busy_start) / steps
        out[0]["console_per_step"] = (sum(cpu_seconds(p) for p in watchers) - watch_start) / steps
        if close_page is not None:
            await close_page()
        await h.wait_finished(60)
    return out


def direct_replay(level: str, runs: list[dict[str, Any]]) -> tuple[list[float], float, bool]:
    """The same episodes in one process: reset with the same seed, step the same codes. Returns
    the step times, the CPU seconds of the counted steps, and whether every replay ended with the
    ball where the bus run left it (the same match)."""
    seats = parse_seats(None, ["agent"])
    name = scenarios.install_level(level, fixed_players(seats))
    match = Match()
    per_step: list[float] = []
    cpu = 0.0
    same = True
    for run in runs:
        match.reset(name, seats, run["seed"])
        for i, code in enumerate(run["codes"]):
            if i == 1:  # like the bus side, the first step after the reset is not counted
                cpu_start = time.process_time()
            started = time.perf_counter()
            state, _done, _reward = match.step([code])
            if i:
                per_step.append(time.perf_counter() - started)
        cpu += time.process_time() - cpu_start
        same = same and max(abs(a - b) for a, b in zip(state["ball"], run["ball"])) < 1e-6
    match.close()
    return per_step, cpu, same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--level", default="11_vs_11_easy_stochastic", help="a gfootball level or MageBench id")
    parser.add_argument("--frames", type=int, default=400, help="frames per episode")
    parser.add_argument("--episodes", type=int, default=1, help="episodes per block")
    parser.add_argument("--blocks", type=int, default=5, help="alternating bus / direct blocks")
    parser.add_argument("--text", action="store_true", help="also build the text rendering in every obs")
    parser.add_argument("--ui", action="store_true", help="with the live console and a page open on it (bus side)")
    parser.add_argument("--ui-cost", action="store_true",
                        help="each block plays the bus side with and without the page: ui_cost_ratio")
    args = parser.parse_args()
    started = time.monotonic()
    bus: list[float] = []
    watched: list[float] = []  # --ui-cost: the bus side with the page open
    direct: list[float] = []
    bus_cpu = watched_cpu = direct_cpu = 0.0
    busy: dict[bool, list[float]] = {False: [], True: []}
    console_cpu: list[float] = []
    same = True
    for block in range(args.blocks):
        seed = 1000 * block
        if args.ui_cost:  # the same episodes with and without the page; which goes first alternates
            order = [False, True] if block % 2 == 0 else [True, False]
            played = {ui: asyncio.run(bus_block(args.level, args.frames, args.episodes, seed, args.text, ui))
                      for ui in order}
            runs, seen = played[False], played[True]
            watched += [g for r in seen for g in r["gaps"]]
            watched_cpu += sum(r["cpu"] for r in seen)
            busy[False].append(runs[0]["busy_per_step"])
            busy[True].append(seen[0]["busy_per_step"])
            console_cpu.append(seen[0]["console_per_step"])
        else:
            runs = asyncio.run(bus_block(args.level, args.frames, args.episodes, seed, args.text, args.ui))
        bus += [g for r in runs for g in r["gaps"]]
        bus_cpu += sum(r["cpu"] for r in runs)
        times, cpu, replayed = direct_replay(args.level, runs)
        direct += times
        direct_cpu += cpu
        same = same and replayed
    bus_ms, direct_ms = statistics.median(bus) * 1e3, statistics.median(direct) * 1e3
    out = {
        "level": args.level,
        "bus_step_ms": round(bus_ms, 3),
        "direct_step_ms": round(direct_ms, 3),
        "bus_overhead_ms": round(bus_ms - direct_ms, 3),
        "bus_overhead_ratio": round(bus_ms / direct_ms, 3),
        "bus_mean_step_ms": round(statistics.fmean(bus) * 1e3, 3),
        "direct_mean_step_ms": round(statistics.fmean(direct) * 1e3, 3),
        # CPU per step: environment + agent processes vs the direct loop; unlike wall time this does
        # not grow when other jobs on the machine delay the hand-offs between processes
        "bus_cpu_ms_per_step": round(bus_cpu / len(bus) * 1e3, 3),
        "direct_cpu_ms_per_step": round(direct_cpu / len(direct) * 1e3, 3),
        "cpu_overhead_ratio": round(bus_cpu / direct_cpu, 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "steps": {"bus": len(bus), "direct": len(direct)},
        "same_match": same,
        "text": args.text,
        "ui": args.ui,
        "seconds": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
    }
    if args.ui_cost:
        watched_ms = statistics.median(watched) * 1e3
        out["ui"] = "both"
        out["ui_bus_step_ms"] = round(watched_ms, 3)
        out["ui_bus_overhead_ratio"] = round(watched_ms / direct_ms, 3)
        out["ui_cost_ratio"] = round(watched_ms / bus_ms, 4)  # target <= 1.02
        out["ui_cpu_ms_per_step"] = round(watched_cpu / len(watched) * 1e3, 3)
        out["console_cpu_ms_per_step"] = round(statistics.fmean(console_cpu) * 1e3, 3)
        out["machine_cpu_ms_per_step"] = {"without_page": round(statistics.fmean(busy[False]) * 1e3, 3),
                                          "with_page": round(statistics.fmean(busy[True]) * 1e3, 3)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"football {args.level}, random agent, no rendering: framebus {bus_ms:.2f} ms/step, gfootball in "
              f"one process {direct_ms:.2f} ms/step -> ratio {out['bus_overhead_ratio']:.3f} "
              f"(+{out['bus_overhead_ms']:.2f} ms; {len(bus)} steps each; {out['seconds']} s); CPU per step "
              f"{out['bus_cpu_ms_per_step']:.2f} vs {out['direct_cpu_ms_per_step']:.2f} ms -> "
              f"{out['cpu_overhead_ratio']:.3f}; load average {out['load_average_1m']}")
        if args.ui_cost:
            print(f"with the console page open: {out['ui_bus_step_ms']:.2f} ms/step -> ratio "
                  f"{out['ui_bus_overhead_ratio']:.3f}; watching costs x{out['ui_cost_ratio']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
