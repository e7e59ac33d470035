"""The browser environment on the local sites: how long a step takes, what the bus adds to it, how
fast a site resets, and how throughput grows with browser replicas, all measured in one run.

One action script walks the classifieds, shopping, forum and wiki sites (links, image links,
search boxes, back, scroll, goto between sites), the shop's admin panel (signed in through the
state site.login makes) and the code forge (by URL); each step ends with the next Set-of-Marks
observation (element list, URL, tab titles and the SoM screenshot as a frame, the SoM agent's
view at VWA's 1280x2048 viewport). Both sides play it against the same site processes:

- direct: Playwright in this process (``BrowserSession``, the env's own browser code, no bus),
  timing each action through the next observation: ``step_p50_ms`` (target <= 300 ms on 2 cores;
  VWA sleeps 2.5 s after every action by construction);
- bus: a real graph (site nodes + ``BrowserEnv`` + a replay agent, separate processes), timing
  the gaps between consecutive ``env/step`` messages; ``bus_overhead_ratio`` is its median over
  the direct median (target <= 1.10). Half the direct tours run before the bus episodes and half
  after (never at the same time), so a change in the machine's load shows on both sides.

``step_p50_ms_by_site`` files the direct steps under the site whose pages they timed.
``reset_s`` is the slowest site's ``POST /reset`` (target <= 1 s); the replica curve runs 1, 2, 4
browser envs (each with its agent) sharing the same four sites and counts steps per second between
the first and the last step.

    python bench/browser.py [--json] [--steps 24] [--blocks 2] [--replicas 1 2 4] [--replica-steps 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.testing import Harness  # noqa: E402
from nodes.browser.actions import parse_action  # noqa: E402
from nodes.browser.sandbox import Sandbox  # noqa: E402
from nodes.browser.session import BrowserSession, EpisodeSpec, Settings  # noqa: E402
from nodes.browser.sites.supervise import free_port  # noqa: E402

SITES = ("classifieds", "shopping", "forum", "wiki", "forge")
OBSERVE = {"som", "url", "tabs"}
VIEWPORT = (1280, 2048)

# Ids are those of each site's home page with seed 0 (every "go_back" returns there); the admin panel
# and the forge are toured by URL. Each segment is named by the site whose pages it times.
SEGMENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("classifieds", ("click [7]", "go_back", "click [15]", "go_back", "scroll [down]", "scroll [up]",
                     "type [5] [bike]", "go_back")),
    ("shopping", ("goto [{shopping}/]", "click [6]", "go_back", "click [12]", "go_back", "type [2] [hoodie]",
                  "go_back")),
    ("forum", ("goto [{forum}/]", "click [8]", "go_back", "click [10]", "go_back", "scroll [down]", "scroll [up]")),
    ("wiki", ("goto [{wiki}/]", "click [5]", "go_back", "click [22]", "go_back", "type [3] [Boston]", "go_back")),
    ("shopping_admin", ("goto [{shopping}/admin/dashboard/]", "goto [{shopping}/admin/sales/order/]",
                        "scroll [down]", "scroll [up]", "goto [{shopping}/admin/catalog/product/]", "go_back",
                        "goto [{shopping}/admin/review/product/]")),
    ("forge", ("goto [{forge}/explore]", "scroll [down]", "scroll [up]", "goto [{forge}/a11yproject/a11yproject.com]",
               "goto [{forge}/a11yproject/a11yproject.com/-/issues]", "go_back",
               "goto [{forge}/a11yproject/a11yproject.com/-/tree/main]", "go_back")),
    ("classifieds", ("goto [{classifieds}/]",)),
)
TOUR: tuple[str, ...] = tuple(action for _, actions in SEGMENTS for action in actions)
TOUR_SITES: tuple[str, ...] = tuple(site for site, actions in SEGMENTS for _ in actions)


def by_site(times: list[float], into: dict[str, list[float]]) -> list[float]:
    """Steps 2..N of a direct tour (the first warms the page), each also filed under the site it timed."""
    for i, seconds in enumerate(times[1:], start=1):
        into.setdefault(TOUR_SITES[i % len(TOUR)], []).append(seconds)
    return times[1:]


def admin_state(bases: dict[str, str]) -> str:
    """A storage-state file with the shop's admin signed in (what site.login gives for shopping_admin)."""
    import tempfile

    from nodes.browser.sites.framework import login_state
    from nodes.browser.sites.shopping import Shopping

    state = login_state(Shopping, 0, f"{bases['shopping']}/admin", for_site="shopping_admin")
    handle, path = tempfile.mkstemp(prefix="fb-bench-admin-", suffix=".json")
    with os.fdopen(handle, "w") as out:
        json.dump(state, out)
    return path


def script(bases: dict[str, str], steps: int) -> list[str]:
    """The first ``steps`` actions of the tour (repeated as needed), then ``stop``."""
    tour = [a.format(**bases) for a in TOUR]
    return [tour[i % len(tour)] for i in range(steps)] + ["stop [done]"]


def add_sites(h: Harness, ports: dict[str, int]) -> None:
    for name in SITES:
        h.add(name, "nodes.browser.sites.node:SiteNode", params={"site": name, "port": ports[name], "seed": 0})


def env_params(bases: dict[str, str], steps: int, state: str) -> dict[str, Any]:
    return {"start_url": f"{bases['classifieds']}/", "hosts": {f"__{n.upper()}__": b for n, b in bases.items()},
            "storage_state": state,
            "observe": sorted(OBSERVE), "text": "som", "frame": "som", "frames": True,
            "viewport": list(VIEWPORT), "max_steps": steps + 1}


async def direct_block(bases: dict[str, str], steps: int, state: str) -> list[float]:
    """The script in this process; seconds from each action to its next observation."""
    session = BrowserSession(Settings())
    await session.start()
    try:
        episode = await session.open_episode(EpisodeSpec(start_urls=(f"{bases['classifieds']}/",), viewport=VIEWPORT,
                                                             storage_state=state),
                                             Sandbox(list(bases.values())))
        capture = await episode.capture(OBSERVE, "som", "som")
        times: list[float] = []
        for raw in script(bases, steps)[:-1]:
            started = time.perf_counter()
            error = await episode.execute(parse_action(raw), capture.targets)
            capture = await episode.capture(OBSERVE, "som", "som")
            times.append(time.perf_counter() - started)
            if error is not None:
                raise RuntimeError(f"direct: {raw!r} failed: {error}")
        await episode.close()
        return times
    finally:
        await session.close()


def post_reset(base: str) -> float:
    started = time.perf_counter()
    request = urllib.request.Request(f"{base}/reset", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()
    return time.perf_counter() - started


async def main_run(args: argparse.Namespace) -> dict[str, Any]:
    ports = {name: free_port() for name in SITES}
    bases = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    bus: list[float] = []
    direct: list[float] = []
    errors: list[str] = []
    resets: dict[str, list[float]] = {name: [] for name in SITES}
    direct_sites: dict[str, list[float]] = {}
    state = admin_state(bases)
    async with Harness(quiet=True, episodes=args.blocks, seed=0) as h:
        add_sites(h, ports)
        h.add("env", "nodes.browser.env:BrowserEnv", params=env_params(bases, args.steps, state),
              inputs={"action": "agent/action"}, clock={"mode": "lockstep", "deadline": 60.0, "default_action": None})
        h.add("agent", "nodes.agent.baseline:ReplayAgent", params={"actions": script(bases, args.steps)},
              inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 4096}})
        await h.start(run=False, ready_timeout=120)
        for name in SITES:  # the sites are up: their resets, then a warm-up tour of the direct side
            for _ in range(3):
                resets[name].append(await asyncio.to_thread(post_reset, bases[name]))
        await direct_block(bases, min(args.steps, 8), state)  # warm-up
        before = (args.blocks + 1) // 2
        for _ in range(before):
            direct += by_site(await direct_block(bases, args.steps, state), direct_sites)
        h.kernel.start()
        await asyncio.wait_for(h.probe_runtime.wait_started(), 10)
        for _ in range(args.blocks):  # the bus episodes play back to back: nothing else runs meanwhile
            sent: list[float] = []
            while True:
                msg = await asyncio.wait_for(probe.recv("step"), 300)
                sent.append(msg.ts)  # the environment's send time: records reach a reader in small batches
                if msg.body["info"].get("action_error"):
                    errors.append(str(msg.body["info"]["action_error"]))
                if msg.body["done"]:
                    break
            bus += [b - a for a, b in zip(sent[:-2], sent[1:-1])]  # steps 2..N, as the direct side; not the stop
        await h.wait_finished(120)
        for _ in range(args.blocks - before):  # the sites are still up: the rest of the direct tours
            direct += by_site(await direct_block(bases, args.steps, state), direct_sites)
    os.unlink(state)
    if errors:
        raise RuntimeError(f"bus: actions failed: {errors[:3]}")
    return {"bus": bus, "direct": direct, "resets": resets, "direct_by_site": direct_sites}


async def replica_run(replicas: int, steps: int, episodes_each: int) -> dict[str, Any]:
    """``replicas`` envs + agents sharing one set of sites; steps per second between the first and
    the last step any of them published."""
    ports = {name: free_port() for name in SITES}
    bases = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    state = admin_state(bases)
    async with Harness(quiet=True, episodes=replicas * episodes_each, seed=0) as h:
        add_sites(h, ports)
        for i in range(replicas):
            h.add(f"env{i}", "nodes.browser.env:BrowserEnv", params=env_params(bases, steps, state),
                  inputs={"action": f"agent{i}/action"},
                  clock={"mode": "lockstep", "deadline": 120.0, "default_action": None})
            h.add(f"agent{i}", "nodes.agent.baseline:ReplayAgent", params={"actions": script(bases, steps)},
                  inputs={"obs": {"from": f"env{i}/obs", "policy": "fifo"}})
        probe = h.probe(inputs={f"s{i}": {"from": f"env{i}/step", "policy": "fifo", "size": 4096}
                                for i in range(replicas)})
        await h.start(ready_timeout=180)
        stamps: list[float] = []

        async def drain(i: int) -> None:
            done = 0
            while done < episodes_each:
                msg = await asyncio.wait_for(probe.recv(f"s{i}"), 300)
                if msg.body["t"] > 0 and not msg.body["done"]:
                    stamps.append(time.perf_counter())
                done += bool(msg.body["done"])

        await asyncio.gather(*(drain(i) for i in range(replicas)))
        await h.wait_finished(120)
    os.unlink(state)
    stamps.sort()
    window = stamps[-1] - stamps[0]
    return {"replicas": replicas, "steps": len(stamps), "steps_per_s": round((len(stamps) - 1) / window, 2)}


async def miniwob_step(uses: str, params: dict[str, Any], action: str, steps: int, episodes: int) -> list[float]:
    """The gaps between consecutive ``env/step`` records of one MiniWoB graph (its site node, the
    environment ``uses``, an agent replaying ``action``): a step is that action and the next
    observation, through the bus, as the environment's own default observation draws it."""
    async with Harness(quiet=True, episodes=episodes, seed=0) as h:
        h.add("site", "nodes.browser.miniwob.site:MiniwobSite")
        h.add("env", uses, params={**params, "max_steps": steps}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": 60.0, "default_action": None})
        h.add("agent", "nodes.agent.baseline:ReplayAgent", params={"actions": [action] * steps},
              inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 4096}})
        await h.start(ready_timeout=120)
        gaps: list[float] = []
        for _ in range(episodes):
            sent: list[float] = []
            while True:
                msg = await asyncio.wait_for(probe.recv("step"), 300)
                sent.append(msg.ts)
                if msg.body["done"]:
                    break
            gaps += [b - a for a, b in zip(sent[:-1], sent[1:])]
        await h.wait_finished(120)
    return gaps


async def browsergym_run(steps: int, episodes: int) -> dict[str, Any]:
    """A MiniWoB step (a scroll and the next observation) through ``browsergym.env`` (BrowserGym's
    environment, its AXTree, DOM snapshot and screenshot, after its 0.5 s pre-observation wait and
    the task's 100 ms slow-motion) and through ``miniwob.env`` (framebus's browser node, its
    Set-of-Marks list), one graph after the other on the same task."""
    ours = await miniwob_step("nodes.browser.miniwob.env:MiniwobEnv",
                              {"task": "click-test", "seeds": 1, "time_limit_s": 300, "observe": ["som", "url"]},
                              "scroll [down]", steps, episodes)
    theirs = await miniwob_step("nodes.browser.browsergym.node:BrowserGymEnv",
                                {"task": "miniwob.click-test", "site_nodes": {"MINIWOB_URL": "site/miniwob/"}},
                                "scroll(0, 100)", steps, episodes)
    return {"framebus_step_p50_ms": round(statistics.median(ours) * 1e3, 1),
            "browsergym_step_p50_ms": round(statistics.median(theirs) * 1e3, 1),
            "browsergym_over_framebus": round(statistics.median(theirs) / statistics.median(ours), 3),
            "steps": {"framebus": len(ours), "browsergym": len(theirs)}, "task": "click-test"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--steps", type=int, default=len(TOUR), help="actions per episode (the tour, cut or repeated)")
    parser.add_argument("--blocks", type=int, default=2, help="bus episodes, and as many direct tours")
    parser.add_argument("--replicas", type=int, nargs="*", default=[1, 2, 4], help="replica counts (none: skip)")
    parser.add_argument("--replica-steps", type=int, default=12, help="actions per episode in the replica runs")
    parser.add_argument("--replica-episodes", type=int, default=2, help="episodes per replica")
    parser.add_argument("--miniwob-steps", type=int, default=12, help="steps per episode of the MiniWoB step through "
                        "browsergym.env and through miniwob.env (0: skip)")
    args = parser.parse_args()
    started = time.monotonic()
    run = asyncio.run(main_run(args))
    bus, direct = run["bus"], run["direct"]
    bus_ms, direct_ms = statistics.median(bus) * 1e3, statistics.median(direct) * 1e3
    curve = []
    for n in args.replicas:
        curve.append(asyncio.run(replica_run(n, args.replica_steps, args.replica_episodes)))
        if not args.json:
            print(f"{n} browser replica(s): {curve[-1]['steps_per_s']} steps/s", flush=True)
    miniwob = asyncio.run(browsergym_run(args.miniwob_steps, 2)) if args.miniwob_steps > 0 else None
    resets = {name: round(max(times), 3) for name, times in run["resets"].items()}
    out = {
        "step_p50_ms": round(direct_ms, 1),
        "step_p90_ms": round(statistics.quantiles(direct, n=10)[-1] * 1e3, 1),
        "bus_step_p50_ms": round(bus_ms, 1),
        "bus_overhead_ratio": round(bus_ms / direct_ms, 3),
        "step_p50_ms_by_site": {site: round(statistics.median(times) * 1e3, 1)
                                for site, times in sorted(run["direct_by_site"].items())},
        "reset_s": max(resets.values()),
        "reset_s_by_site": resets,
        "replicas": curve,
        "miniwob": miniwob,
        "steps": {"bus": len(bus), "direct": len(direct)},
        "viewport": list(VIEWPORT),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"browser step (action -> next SoM observation + frame, {VIEWPORT[0]}x{VIEWPORT[1]}): p50 "
              f"{out['step_p50_ms']} ms in one process, {out['bus_step_p50_ms']} ms through the bus -> ratio "
              f"{out['bus_overhead_ratio']}; slowest reset {out['reset_s']} s; load average "
              f"{out['load_average_1m']}; {out['seconds']} s")
        if miniwob is not None:
            print(f"MiniWoB step (a scroll -> next observation, through the bus): {miniwob['framebus_step_p50_ms']} "
                  f"ms through miniwob.env, {miniwob['browsergym_step_p50_ms']} ms through browsergym.env "
                  f"(ratio {miniwob['browsergym_over_framebus']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
