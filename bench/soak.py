"""Soak runs: what a long run and a flood cost, in figures, where a test of the default tier has no room.

Two runs of the real ``launch run hello.yaml`` (environment, agent and judge as processes):

* **memory** (``memory``): many one-step episodes. The resident memory of the launcher (with its
  kernel) and of each node is sampled at every tenth of the run; growth is counted from the first
  tenth (start-up and warm caches are behind it) to the last sample, and reported per 1,000 episodes.
  The run's book is read back: episodes completed, and unique (no deal index twice).
* **flood** (``flood``): the run is paused, and two raw DEALER sockets of this script send malformed
  messages at the kernel's control socket and at the environment's inbox while the world is stepped
  by hand; then the run goes on to its end. Reported: messages ZeroMQ took, messages the kernel and
  the environment counted as refused (each one must be), their resident memory before and at the
  worst of the flood, and whether every episode still completed.

    python bench/soak.py [--json] [--episodes 100000] [--flood 300000] [--only memory flood]

``bash setup.sh test --soak`` runs the same measurements as tests with thresholds
(tests/test_soak.py); this script only reports.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import msgpack
import zmq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernel.bus import protocol  # noqa: E402
from kernel.tools.announce import folder  # noqa: E402
from kernel.tools.client import KernelClient  # noqa: E402

LAUNCH = [sys.executable, "-m", "kernel.tools.cli"]
NODES = ("env", "agent", "judge")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ProcessLookupError(pid)


def ended(out: Path) -> int:
    """Episodes the run's book has ended so far (read-only: the run is writing it)."""
    path = out / "results.sqlite"
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0  # created, no table yet


def book(out: Path) -> tuple[int, int]:
    """Episodes in the finished run's book, and how many distinct deals they are (the index an episode
    was dealt at: one played twice, or lost and dealt again under a new id, would repeat one)."""
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return tuple(db.execute("SELECT COUNT(*), COUNT(DISTINCT idx) FROM episodes").fetchone())  # type: ignore[return-value]
    finally:
        db.close()


def announcement(out: Path) -> dict[str, Any] | None:
    for f in folder().glob("*.json"):
        try:
            info = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if info.get("run_dir") == str(out):
            return info
    return None


def until(pred: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := pred():
            return value
        time.sleep(interval)
    return pred()


class Run:
    """``launch run hello.yaml`` in the background, its console in a file beside its run folder."""

    def __init__(self, out: Path, episodes: int, *sets: str) -> None:
        self.out = out
        self.log_path = out.parent / f"{out.name}.log"
        args = [*LAUNCH, "run", "hello.yaml", "--episodes", str(episodes), "--out", str(out)]
        for s in sets:
            args += ["--set", s]
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(args, env=_env(), stdout=log, stderr=subprocess.STDOUT)

    def log(self, tail: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:]

    def client(self, timeout: float = 20.0) -> KernelClient:
        info = until(lambda: announcement(self.out) or self.proc.poll() is not None, 120)
        if not isinstance(info, dict):
            raise RuntimeError(f"the run never announced itself:\n{self.log()}")
        return KernelClient(info["endpoint"], timeout=timeout, curve=info.get("curve"))

    def pids(self, client: KernelClient) -> dict[str, int]:
        nodes = until(lambda: (s := client.call("status"))["started"] and s["nodes"], 120)
        return {"launcher": self.proc.pid, **{n: nodes[n]["pid"] for n in NODES}}

    def finish(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)

    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())


def memory(out: Path, episodes: int = 100_000, samples: int = 10) -> dict[str, Any]:
    """Many one-step hello episodes; resident memory of the launcher and each node along the way."""
    started = time.monotonic()
    run = Run(out, episodes, "env.max_steps=1", "bus.heartbeat=0.5")
    marks: list[dict[str, Any]] = []
    try:
        with run.client() as client:
            pids = run.pids(client)
        for k in range(1, samples + 1):
            # the last mark just before the end, while every process still runs
            target = episodes * k // samples if k < samples else episodes - max(1, episodes // 100)
            until(lambda t=target: ended(run.out) >= t or run.proc.poll() is not None, 3600, 0.05)
            if run.proc.poll() is not None:
                break
            try:
                marks.append({"episodes": ended(run.out), "rss_kb": {n: rss_kb(p) for n, p in pids.items()}})
            except ProcessLookupError:
                break
        rc = run.finish(600)
    except BaseException:
        run.finish(0)
        raise
    wall = time.monotonic() - started
    summary = run.summary() if (out / "summary.json").exists() else {}
    total, unique = book(out) if (out / "results.sqlite").exists() else (0, 0)
    first, last = (marks[0], marks[-1]) if len(marks) >= 2 else (None, None)
    growth: dict[str, Any] = {}
    if first and last and last["episodes"] > first["episodes"]:
        per_1k = 1000 / (last["episodes"] - first["episodes"])
        for name in first["rss_kb"]:
            a, b = first["rss_kb"][name], last["rss_kb"][name]
            growth[name] = {"rss_mb_first": round(a / 1024, 1), "rss_mb_last": round(b / 1024, 1),
                            "growth_pct": round(100 * (b / a - 1), 2),
                            "growth_kb_per_1k_episodes": round((b - a) * per_1k, 2)}
    return {"returncode": rc, "status": summary.get("status"), "episodes_asked": episodes,
            "episodes_completed": (summary.get("episodes") or {}).get("completed"),
            "episodes_in_book": total, "episodes_unique": unique,
            "measured_from_episode": first["episodes"] if first else None,
            "measured_to_episode": last["episodes"] if last else None,
            "rss": growth, "episodes_per_s": round(total / wall, 1) if wall else None,
            "wall_s": round(wall, 1), "marks": marks, "log_tail": None if rc == 0 else run.log()}


def _header(**fields: Any) -> bytes:
    return msgpack.packb({"v": protocol.PROTOCOL_VERSION, "src": "flooder", "seq": 1, "ts": 0.0, **fields})


#: one of each way a message can be wrong: not msgpack, not a header, a wrong version, an unknown
#: kind, a body that is not msgpack, and a request without its body frame
MALFORMED = [
    [b"\xc1\xc1 not msgpack", msgpack.packb(None)],
    [msgpack.packb([1, 2, 3]), msgpack.packb(None)],
    [msgpack.packb({"v": 99, "k": "req", "src": "flooder", "topic": "status", "cid": 1}), msgpack.packb({})],
    [_header(k="gossip", topic="x"), msgpack.packb(None)],
    [_header(k="req", topic="status", cid=2), b"\xc1\xc1\xc1"],
    [_header(k="req", topic="status", cid=3)],
]


class Flood(threading.Thread):
    """Sends ``n`` malformed messages without blocking, waiting briefly when the peer's queue is full,
    and counts what ZeroMQ took; the socket stays open until ``close`` so nothing taken is lost."""

    def __init__(self, endpoint: str, identity: bytes, n: int, deadline: float) -> None:
        super().__init__(daemon=True)
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.IDENTITY, identity)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self.n, self.deadline, self.sent = n, deadline, 0

    def run(self) -> None:
        send, again = self.sock.send_multipart, zmq.Again
        for i in range(self.n):
            try:
                send(MALFORMED[i % len(MALFORMED)], flags=zmq.NOBLOCK)
                self.sent += 1
            except again:
                if time.monotonic() > self.deadline:
                    return
                self.sock.poll(100, zmq.POLLOUT)

    def close(self) -> None:
        self.sock.close(linger=0)


def flood(out: Path, messages: int = 300_000, episodes: int = 30, deadline_s: float = 60.0) -> dict[str, Any]:
    """A paused run under a flood of malformed messages at its kernel and its environment."""
    started = time.monotonic()
    run = Run(out, episodes, "agent.think_s=0.05", "bus.heartbeat=0.2")
    floods: list[Flood] = []
    try:
        with run.client() as poll:
            pids = run.pids(poll)
            poll.call("ctl.pause")
            nodes = poll.call("status")["nodes"]
            before = {n: rss_kb(pids[n]) for n in ("launcher", "env")}
            worst = dict(before)
            end = time.monotonic() + deadline_s
            floods = [Flood(announcement(out)["endpoint"], b"flood-kernel", messages, end),  # type: ignore[index]
                      Flood(nodes["env"]["inbox"], b"flood-env", messages // 3, end)]
            for f in floods:
                f.start()

            def frame() -> int:
                return (poll.call("status")["nodes"]["env"]["clock"] or {}).get("frame", 0)

            stepped = 0
            while any(f.is_alive() for f in floods):
                at = frame()
                poll.call("ctl.step", {"n": 1})  # the world still moves under the flood
                if until(lambda a=at: frame() >= a + 1, 20):
                    stepped += 1
                worst = {n: max(worst[n], rss_kb(pids[n])) for n in worst}
                time.sleep(0.2)
            sent = {"kernel": floods[0].sent, "env": floods[1].sent}

            def refused() -> dict[str, int]:
                errors = poll.call("stats")["decode_errors"]
                return {"kernel": sum((errors.get("kernel") or {}).values()),
                        "env": sum((errors.get("env") or {}).values())}

            counted = until(lambda: (r := refused()) == sent and r, 60) or refused()
            flood_s = time.monotonic() - started
            poll.call("ctl.resume")
        rc = run.finish(300)
    except BaseException:
        run.finish(0)
        raise
    finally:
        for f in floods:
            f.close()
    summary = run.summary() if (out / "summary.json").exists() else {}
    total, unique = book(out) if (out / "results.sqlite").exists() else (0, 0)
    return {"returncode": rc, "status": summary.get("status"), "sent": sent, "refused": counted,
            "all_counted": counted == sent, "steps_under_flood": stepped,
            "rss_mb_before": {n: round(v / 1024, 1) for n, v in before.items()},
            "rss_mb_worst": {n: round(v / 1024, 1) for n, v in worst.items()},
            "episodes_asked": episodes, "episodes_completed": (summary.get("episodes") or {}).get("completed"),
            "episodes_unique": unique, "episodes_in_book": total,
            "flood_s": round(flood_s, 1), "wall_s": round(time.monotonic() - started, 1),
            "log_tail": None if rc == 0 else run.log()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--episodes", type=int, default=100_000, help="episodes of the memory run (100000)")
    ap.add_argument("--flood", type=int, default=300_000, help="malformed messages at the kernel (300000)")
    ap.add_argument("--only", nargs="+", choices=("memory", "flood"), default=["memory", "flood"])
    args = ap.parse_args(argv)
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="fbsoak-") as tmp:
        if "memory" in args.only:
            result["memory"] = memory(Path(tmp) / "memory", args.episodes)
            result["memory"].pop("marks")
        if "flood" in args.only:
            result["flood"] = flood(Path(tmp) / "flood", args.flood)
    result["cpus"] = os.cpu_count()
    if args.json:
        print(json.dumps(result))
    else:
        for name, part in result.items():
            print(f"{name}: {json.dumps(part, indent=2) if isinstance(part, dict) else part}")
    return 0 if all(isinstance(p, int) or p.get("returncode") == 0 for p in result.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
