"""One ``launch run``: a run folder, a kernel, a supervisor, and a summary.json at the end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

from rich.console import Console

from kernel.bus import outlet
from kernel.bus.episode_ids import deal_span
from kernel.bus.ipcpath import make_ipc_dir
from kernel.bus.resultsdb import ResultsNotWritten, not_written
from kernel.bus.shm import remove_segments
from kernel.graph import backends
from kernel.graph.core import Kernel
from kernel.graph.keys import RunKeys
from kernel.launchfile import LaunchError, LaunchFile

READY_TIMEOUT_S = float(os.environ.get("FRAMEBUS_READY_TIMEOUT", "300"))
EXIT_CODES = {"completed": 0, "failed": 1, "stopped": 0, "interrupted": 130, "timeout": 124}
PRIVATE_UMASK = 0o077  # what a run creates: folders 0700, files 0600
# A run folder's disk with less room than this is full: the run would fail at its first result.
MIN_FREE_BYTES = int(os.environ.get("FRAMEBUS_MIN_FREE_BYTES", str(256 * 1024)))

Announce = Callable[[dict[str, Any], Path], Callable[[], None]]
"""Tells others that a run is up (``launch run`` passes kernel.tools.announce's, which `launch ctl`
reads): called with what a client needs to reach the kernel and with the run's ipc folder, once the
kernel listens; returns what takes the announcement back at the end."""


def default_out(lf: LaunchFile) -> Path:
    if lf.run.out:
        return Path(lf.run.out)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{stamp}-{lf.name}"


def write_private(path: Path, text: str) -> None:
    """Write ``path`` readable by its user alone, also where an older, more open one is replaced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(fd, 0o600)
        f.write(text)


async def open_graph(lf: LaunchFile, run_dir: Path, cleanup: contextlib.AsyncExitStack, *, trace: str | None,
                     keys: RunKeys | None) -> tuple[Kernel, Path, dict[str, str]]:
    """A run folder (the user's alone: 0700), the run's ipc folder and its listening kernel, and the
    environment every node process needs to reach them (``launch run`` and the test harness alike);
    ``cleanup`` closes the kernel, then removes the ipc folder and the shared memory named after it."""
    for folder in (run_dir, run_dir / "logs"):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):  # a file where the folder, or one above it, would be
            blocker = next(p for p in (folder, *folder.parents) if p.exists() and not p.is_dir())
            raise LaunchError(f"the run folder {run_dir} cannot be made: {blocker} is a file, not a folder; "
                              "give a folder's path", key="--out / run.out") from None
        except OSError as exc:
            refused = not_written(folder, exc)
            if refused is None:
                raise
            raise refused from None
        folder.chmod(0o700)
    free = shutil.disk_usage(run_dir).free
    if free < MIN_FREE_BYTES:  # a resume on a disk still full: said before any node starts
        raise ResultsNotWritten(f"cannot write {run_dir}: no space left on device ({free // 1024} KiB free; a run "
                                f"starts with at least {MIN_FREE_BYTES // 1024} KiB)")
    ipc_dir = make_ipc_dir()  # mode 0700
    cleanup.callback(remove_segments, ipc_dir.name)
    cleanup.callback(shutil.rmtree, ipc_dir, ignore_errors=True)
    tcp = lf.bus.transport == "tcp"
    endpoint = f"tcp://{lf.bus.host}:0" if tcp else f"ipc://{ipc_dir}/kernel.sock"
    kernel = Kernel(lf, run_dir, endpoint, trace=trace, keys=keys)
    await kernel.open()
    cleanup.callback(kernel.close)
    env = {"FRAMEBUS_KERNEL": kernel.endpoint, "FRAMEBUS_IPC_DIR": str(ipc_dir),
           "FRAMEBUS_LOG_DIR": str(run_dir / "logs"), "FRAMEBUS_RUN_DIR": str(run_dir)}
    if tcp:
        env["FRAMEBUS_TCP_HOST"] = lf.bus.host
    return kernel, ipc_dir, env


async def run(lf: LaunchFile, out: Path | None = None, *, trace: str | None = None,
              console: Console | None = None, backend: str = "local", address: str | None = None,
              watch: Callable[[Kernel], Awaitable[None]] | None = None,
              announce: Announce | None = None) -> dict[str, Any]:
    """Run the graph to its end and write summary.json; returns the summary.

    ``watch`` is the caller's view of the run (``launch run`` passes its progress line): started
    when every node is ready and the run starts, cancelled when it ends."""
    console = console or outlet.console()  # on a queue: a terminal that stops reading stalls no loop
    placement = backends.prepare(lf, backend, address, console)  # Ray: start or join a cluster; CURVE keys
    lf = placement.lf
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as cleanup:  # undone in reverse order, however far the run got
        # A run folder is its user's alone (docs/console.md): results, logs, recordings, the resolved
        # launch file. The umask covers every file the run makes, the node processes' too (they inherit
        # it); open_graph's chmod, a folder an older run left more open.
        cleanup.callback(os.umask, os.umask(PRIVATE_UMASK))
        cleanup.callback(placement.close)  # after the supervisor stopped every node: kill leftovers, leave
        run_dir = (out or default_out(lf)).resolve()
        kernel, ipc_dir, env = await open_graph(lf, run_dir, cleanup, trace=trace, keys=placement.keys)
        try:  # beside it first: a disk that refuses it leaves the resumed run's old one whole
            write_private(run_dir / "launch.yaml.new", lf.to_yaml())
            os.replace(run_dir / "launch.yaml.new", run_dir / "launch.yaml")
        except OSError as exc:
            refused = not_written(run_dir / "launch.yaml", exc)
            if refused is None:
                raise
            with contextlib.suppress(OSError):
                (run_dir / "launch.yaml.new").unlink()
            raise refused from None
        run_id = run_dir.name
        if announce is not None:
            cleanup.callback(announce({"run_id": run_id, "run_dir": str(run_dir), "endpoint": kernel.endpoint,
                                       "launch_file": str(lf.source), **placement.announcement()}, ipc_dir))
        supervisor = placement.supervisor(env, run_dir / "logs", console, kernel.node_exited)
        kernel.ships = supervisor.ships_results  # nodes on other machines send their results over the bus
        interrupts = 0

        def on_signal(signame: str) -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts > 1:
                supervisor.kill_all_now()
            kernel.finish("interrupted", f"{signame} received")

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal, sig.name)
            cleanup.callback(loop.remove_signal_handler, sig)  # only once every node is stopped
        cleanup.push_async_callback(supervisor.stop_all, kernel.stop_nodes)
        started_at = time.time()
        if kernel.book.resumed:
            console.print(f"resuming {run_dir}: {kernel.book.resumed} episode(s) already ended are skipped",
                          highlight=False, soft_wrap=True)
        if kernel.book.outside:
            console.print(f"{run_dir} holds {kernel.book.outside} ended episode(s) outside this run's deal "
                          f"({deal_span(lf.run.episodes)}): they are kept, but neither counted nor averaged",
                          highlight=False, soft_wrap=True)
        await supervisor.start_all()
        ready = asyncio.ensure_future(kernel.ready_event.wait())
        await asyncio.wait({ready, kernel.finished}, timeout=READY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if not kernel.finished.done():
            if kernel.ready_event.is_set():
                if kernel.book.done:
                    kernel.finish("completed", "every episode had already ended")
                else:
                    console.print(f"all {len(kernel.nodes)} nodes ready; running {lf.name}", highlight=False)
                    kernel.start()
                    if watch is not None:
                        watching = asyncio.ensure_future(watch(kernel))
                        cleanup.push_async_callback(asyncio.gather, watching, return_exceptions=True)
                        cleanup.callback(watching.cancel)
            else:
                waiting = [n for n, s in kernel.nodes.items() if s.state != "ready"]
                kernel.finish("failed", f"nodes not ready after {READY_TIMEOUT_S:.0f} s: {', '.join(waiting)}")
        try:
            status, _ = await asyncio.wait_for(asyncio.shield(kernel.finished), lf.run.timeout)
            if status == "completed":
                await kernel.settle()
        except asyncio.TimeoutError:
            kernel.finish("timeout", f"run.timeout of {lf.run.timeout} s reached")
    status, reason = kernel.finished.result()
    summary = {
        "run_id": run_id,
        "launch_file": str(lf.source),
        "status": status,
        "reason": reason,
        "started_at": datetime.fromtimestamp(started_at, timezone.utc).isoformat(),
        "duration_s": round(time.time() - started_at, 3),
        "episodes": kernel.book.counts(),
        "resumed_episodes": kernel.book.resumed,
        "deal": {"episodes": lf.run.episodes, "ids": deal_span(lf.run.episodes),
                 "outside": kernel.book.outside},  # what the counts and means cover
        "metrics": kernel.book.summary_metrics(),
        "bus": kernel.bus_facts(),
        "nodes": {n: {"state": s.state, **supervisor.where(n), "restarts": supervisor.procs[n].restarts,
                      "exit_code": supervisor.procs[n].exit_code, "error": s.error,
                      "results": kernel.results_facts(n),
                      "clock": s.stats.get("clock") if s.stats.get("clock", {}).get("mode") != "free" else None}
                  for n, s in kernel.nodes.items()},
        **kernel.summary_sections(),
        "stats": kernel.stats(),
        # lines the terminal did not take in time (the files under logs/ have them all)
        "console": {"dropped_lines": outlet.dropped_console_lines()},
        "log_files": {"dropped_lines": outlet.dropped_file_lines(supervisor.log_files)},
        "run_dir": str(run_dir),
    }
    note = write_summary(run_dir / "summary.json", summary, console)
    if note is not None:
        summary["summary_file"] = note
    return summary


def write_summary(path: Path, summary: dict[str, Any], console: Console) -> str | None:
    """Write summary.json; on a disk that refuses it, the same without the per-node and per-edge
    detail, and failing that none (a file cut short would only mislead ``launch report``), said in
    one line. Returns None when the whole of it was written, else what was (or was not)."""
    short = {k: summary[k] for k in ("run_id", "launch_file", "status", "reason", "started_at", "duration_s",
                                     "episodes", "resumed_episodes", "deal", "metrics", "run_dir") if k in summary}
    problem = ""
    for note, body in ((None, summary), ("written without its per-node and per-edge detail", short)):
        try:
            write_private(path, json.dumps({**body, **({"summary_file": note} if note else {})}, indent=2,
                                           default=str) + "\n")
            if note is not None:
                console.print(f"{path}: {problem}; {note}", highlight=False, soft_wrap=True)
            return note
        except OSError as exc:
            if not_written(path, exc) is None:
                raise
            problem = str(not_written(path, exc)).removeprefix(f"cannot write {path}: ")
            with contextlib.suppress(OSError):
                path.unlink()
    console.print(f"summary.json could not be written ({path}: {problem}); the ended episodes are in "
                  f"{path.parent / 'episodes.jsonl'}", highlight=False, soft_wrap=True)
    return "not written: " + problem
