"""BALROG's worlds (NetHack, TextWorld): random-agent progression and speed, through the bus and in
one process, beside BALROG's published numbers.

For each world:

* in process: the node's own work in a plain loop (the game's step, BALROG's text view, a uniform
  choice among the listed actions), steps/s over ``--steps`` steps, and the random agent's mean
  progression over the episodes that fit;
* as nodes: ``launch run <world>_random.yaml`` (env, random agent, judge as processes), its
  summary's progression and its decisions per second of run time.

    python bench/balrog.py [--json] [--steps 2000] [--worlds nethack,textworld]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def nethack_in_process(steps: int, seed: int) -> dict[str, Any]:
    import gymnasium
    from nle import nethack

    from nodes.game.nethack import language
    from nodes.game.nethack.actions import vocabulary
    from nodes.game.nethack.node import OBS_KEYS
    from nodes.game.nethack.progress import Progress

    env = gymnasium.make("NetHackChallenge-v0", observation_keys=OBS_KEYS, no_progress_timeout=150,
                         disable_env_checker=True)
    index = {int(a): i for i, a in enumerate(env.unwrapped.actions)}
    vocab = vocabulary([int(a) for a in nethack.USEFUL_ACTIONS])
    names, rng = list(vocab), random.Random(seed)
    obs, _ = env.reset(seed=seed)
    progress, done_progress, episodes = Progress(), [], 0
    start = time.perf_counter()
    for _ in range(steps):
        language.render(obs)
        obs, _, term, trunc, _ = env.step(index[vocab[rng.choice(names)]])
        b = obs["blstats"]
        if int(b[language.DEPTH]) > 0:
            progress.update(int(b[language.DEPTH]), int(b[language.XL]))
        if term or trunc:
            done_progress.append(progress.progression)
            episodes += 1
            obs, _ = env.reset(seed=seed + episodes)
            progress = Progress()
    elapsed = time.perf_counter() - start
    env.close()
    return {"steps_per_s": steps / elapsed, "episodes": episodes,
            "progression_percent": 100 * sum(done_progress) / len(done_progress) if done_progress else None}


def textworld_in_process(steps: int, seed: int) -> dict[str, Any]:
    import textworld

    from nodes.game.textworld.games import make_game
    from nodes.game.textworld.node import filter_objective
    from nodes.game.textworld.tasks import MAX_STEPS, progression

    path = make_game("coin_collector", 0)
    infos = textworld.EnvInfos(objective=True, score=True, max_score=True, won=True, admissible_commands=True)
    env = textworld.start(str(path), request_infos=infos)
    rng = random.Random(seed)
    state, t, values = env.reset(), 0, []
    start = time.perf_counter()
    for _ in range(steps):
        filter_objective(state.feedback, state.objective)
        state, _, done = env.step(rng.choice(sorted(state.admissible_commands)))
        t += 1
        if done or t >= MAX_STEPS:
            values.append(progression(state.score, state.max_score, state.won))
            state, t = env.reset(), 0
    elapsed = time.perf_counter() - start
    env.close()
    return {"steps_per_s": steps / elapsed, "episodes": len(values),
            "progression_percent": 100 * sum(values) / len(values) if values else None}


def as_nodes(world: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-balrog-") as tmp:
        out = Path(tmp) / "run"
        proc = subprocess.run([sys.executable, "-m", "kernel.tools.cli", "run", f"{world}_random.yaml",
                               "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return {"error": (proc.stdout + proc.stderr)[-1500:]}
        summary = json.loads((out / "summary.json").read_text())
    section = summary.get(world, {})
    decisions = summary["nodes"]["env"]["clock"]["decisions"]
    return {"episodes": section.get("episodes"), "progression_percent": section.get("progression_percent"),
            "decisions_per_s": decisions / summary["duration_s"], "balrog_published": section.get("balrog_published")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--worlds", default="nethack,textworld")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    runners = {"nethack": nethack_in_process, "textworld": textworld_in_process}
    result: dict[str, Any] = {}
    for world in args.worlds.split(","):
        if world not in runners:
            ap.error(f"--worlds: unknown world {world!r}; allowed: {', '.join(runners)}")
        result[world] = {"in_process": runners[world](args.steps, args.seed), "as_nodes": as_nodes(world)}
    if args.json:
        print(json.dumps(result))
    else:
        for world, r in result.items():
            print(f"{world}: in process {r['in_process']}; as nodes "
                  f"{ {k: v for k, v in r['as_nodes'].items() if k != 'balrog_published'} }")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
