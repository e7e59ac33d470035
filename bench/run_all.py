"""Every bench under bench/, briefly, in one go: one JSON object to keep beside a commit and compare.

Each bench runs as its own subprocess (``python bench/NAME.py --json`` plus the small settings
below, chosen so it finishes in seconds to a few minutes and still yields its ratios), one after
the other so they never share the machine with each other, each under a timeout. The object is

    {"commit": ..., "dirty": ..., "load_average": {"start": [...], "end": [...]},
     "benches": {NAME: <the bench's own JSON object> or {"error": ..., "rc": ...}},
     "options": {NAME: [its arguments]}, "seconds": ...}

These short runs are for spotting a change between two commits on one machine (see
bench/compare.py); the numbers to quote come from each bench's default, longer settings.

    python bench/run_all.py [--json] [--only bus,grid] [--skip model,football]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")  # what the browser env and the CSS/WebUI nodes launch by default

EPILOG = """exit status: 0 when every bench either printed its JSON object or was not run because
something it needs is missing on this machine (gfootball not built, no .venv-model for the embedded
model, no /usr/bin/chromium or no playwright); those are reported as {"error": ..., "rc": null,
"missing": true}. 1 when a bench that had what it needs crashed: it exited non-zero, printed no
JSON object, or ran past its timeout. 2 for bad arguments."""


def _python_check(code: str) -> str | None:
    """Run ``code`` in a fresh interpreter with the project on the path: an import that needs a
    compiled engine is checked without loading it into this process. The error's last line, or None."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_bench_env(), capture_output=True,
                          text=True, timeout=120)
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def need_gfootball() -> str | None:
    """The football bench drives the gfootball engine, which scripts/install_football.sh builds."""
    error = _python_check("from nodes.game.football.gfootball_import import import_gfootball; "
                          "import_gfootball('gfootball.env.football_env_core')")
    return None if error is None else f"gfootball does not import ({error}); run scripts/install_football.sh"


def need_model_venv() -> str | None:
    """The model bench starts the embedded vLLM server from .venv-model (setup.sh builds it), or
    from the interpreter named by FRAMEBUS_MODEL_PYTHON."""
    wanted = os.environ.get("FRAMEBUS_MODEL_PYTHON")
    if wanted:
        return None if Path(wanted).exists() else f"FRAMEBUS_MODEL_PYTHON={wanted} does not exist"
    if (ROOT / ".venv-model" / "bin" / "python").exists():
        return None
    return "no .venv-model for the embedded model server (run setup.sh, or set FRAMEBUS_MODEL_PYTHON)"


def need_minecraft() -> str | None:
    """The Minecraft bench runs the pack's sidecar (Node.js and its node_modules, setup.sh installs
    both) and draws its view in Chromium."""
    error = _python_check("import sys; from nodes.game.minecraft.sidecar import Sidecar; "
                          "m = Sidecar.missing(); sys.exit(m) if m else None")
    return error or need_chromium()


def need_chromium() -> str | None:
    """The browser and WebUI/CSS benches drive the system's Chromium through Playwright."""
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM}"
    return None


@dataclass(frozen=True)
class Bench:
    """One bench script, the small settings it runs with here, its timeout and what it needs."""

    name: str
    args: list[str]
    timeout_s: int
    needs: Callable[[], str | None] = field(default=lambda: None)


BENCHES: dict[str, Bench] = {b.name: b for b in [
    Bench("balrog", ["--steps", "500"], 300),
    Bench("browser", ["--steps", "8", "--blocks", "1", "--replicas", "1", "2", "--replica-steps", "4",
                      "--replica-episodes", "1", "--miniwob-steps", "4"], 480, need_chromium),
    Bench("bus", ["--blocks", "4", "--rtt-n", "200", "--frames", "10"], 120),
    Bench("export", ["--quick"], 300),
    Bench("football", ["--frames", "100", "--blocks", "2"], 300, need_gfootball),
    Bench("grid", ["--episodes", "20", "--blocks", "2"], 120),
    Bench("household", ["--episodes", "10", "--blocks", "1"], 240),
    Bench("gym", ["--steps", "500"], 240),
    Bench("minecraft", ["--seeds", "1"], 300, need_minecraft),
    Bench("miniwob", ["--seeds", "2"], 420, need_chromium),
    Bench("model", ["--concurrency", "4", "--tokens", "16"], 900, need_model_venv),
    Bench("scale", ["--curves", "sokoban", "--replicas", "1", "2", "--episodes-per-replica", "6"], 300),
    Bench("soak", ["--episodes", "5000", "--flood", "50000"], 300),
    Bench("transport", ["--episodes", "60", "--blocks", "1"], 300),
    Bench("vmage", ["--quick"], 300),
    Bench("webui", ["--pages", "2", "--css-steps", "4", "--no-compare"], 420, need_chromium),
]}


def _bench_env() -> dict[str, str]:
    """The benches import the project from the repository root and must never open a window."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{path}" if path else str(ROOT),
            "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}


def _tail(text: str, limit: int = 1500) -> str:
    return text[-limit:].strip()


def last_json_object(stdout: str) -> dict[str, Any] | None:
    """A bench prints its object as one line with --json; take the last line that parses as an object,
    so a stray print before it does not lose the result."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def run_bench(bench: Bench) -> tuple[dict[str, Any], bool]:
    """Run one bench: its JSON object (or an error object) and whether it crashed. A missing
    prerequisite is reported without running it and is not a crash."""
    missing = bench.needs()
    if missing is not None:
        return {"error": f"not run: {missing}", "rc": None, "missing": True}, False
    argv = [sys.executable, str(ROOT / "bench" / f"{bench.name}.py"), "--json", *bench.args]
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=_bench_env(), capture_output=True, text=True,
                              timeout=bench.timeout_s)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return {"error": f"timed out after {bench.timeout_s} s", "rc": None, "stderr_tail": _tail(stderr)}, True
    result = last_json_object(proc.stdout)
    if proc.returncode != 0:
        return {"error": f"exited with status {proc.returncode}", "rc": proc.returncode,
                "stderr_tail": _tail(proc.stderr)}, True
    if result is None:
        return {"error": "printed no JSON object", "rc": proc.returncode, "stdout_tail": _tail(proc.stdout),
                "stderr_tail": _tail(proc.stderr)}, True
    return result, False


def git_commit() -> tuple[str, bool | None]:
    """The commit measured and whether the working tree differed from it (tracked files only): a
    before/after pair is often one commit with and without uncommitted changes."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown", None
    return rev, bool(status.strip())


def _names(text: str) -> list[str]:
    """Parse a comma-separated list of bench names, refusing unknown ones (a typo would otherwise
    silently run everything or nothing)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown bench(es) {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    return names


def selected(only: list[str] | None, skip: list[str] | None) -> list[Bench]:
    """The benches to run, in the fixed (alphabetical) order, after --only and --skip."""
    return [b for name, b in BENCHES.items() if (only is None or name in only) and name not in (skip or [])]


def headline(result: dict[str, Any]) -> str:
    """The top-level ratios and speedups of a bench's object, for the human-readable summary."""
    if "error" in result:
        return result["error"]
    keys = [k for k, v in result.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
            and (k.endswith("_ratio") or "speedup" in k) and not k.startswith("target")]
    return ", ".join(f"{k} {result[k]}" for k in keys) or "ok"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG)
    parser.add_argument("--json", action="store_true", help="print one JSON object (progress goes to stderr)")
    parser.add_argument("--only", type=_names, metavar="NAME,...", help=f"run only these ({', '.join(BENCHES)})")
    parser.add_argument("--skip", type=_names, metavar="NAME,...", help="leave these out")
    args = parser.parse_args()
    started = time.monotonic()
    commit, dirty = git_commit()
    load_start = [round(x, 2) for x in os.getloadavg()]
    results: dict[str, dict[str, Any]] = {}
    crashed: list[str] = []
    for bench in selected(args.only, args.skip):
        print(f"[run_all] {bench.name} ...", file=sys.stderr, flush=True)
        t = time.monotonic()
        results[bench.name], failed = run_bench(bench)
        if failed:
            crashed.append(bench.name)
        print(f"[run_all] {bench.name}: {headline(results[bench.name])} ({time.monotonic() - t:.0f} s)",
              file=sys.stderr, flush=True)
    out = {
        "commit": commit,
        "dirty": dirty,
        "load_average": {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()], "of": "1, 5, 15 min"},
        "cpus": os.cpu_count(),
        "benches": results,
        "options": {b.name: b.args for b in selected(args.only, args.skip)},
        "crashed": crashed,
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"commit {commit}{' (with uncommitted changes)' if dirty else ''}; load average "
              f"{out['load_average']['start']} -> {out['load_average']['end']}; {out['seconds']} s")
        for name, result in results.items():
            print(f"  {name:9s} {headline(result)}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
