"""The ``launch`` command: run, check, draw and steer graphs, and the commands packs add
(kernel.tools.commands: ``launch elo`` is V-MAGE's)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernel import launchfile
from kernel.bus import logs, outlet, tracing
from kernel.bus.errors import FramebusError
from kernel.bus.resultsdb import ResultsDbError, ResultsNotWritten
from kernel.launchfile import LaunchError

console = outlet.console()  # queued and written by a thread: see kernel.bus.outlet


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="launch", description="framebus: run agent graphs from launch files")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a launch file")
    _file_args(p)
    p.add_argument("--out", type=Path, help="run folder (default runs/<timestamp>-<name>); re-using one resumes it")
    p.add_argument("--trace", choices=["console", "otlp", "file"], help="export OpenTelemetry spans")
    p.add_argument("--json", action="store_true", help="print summary.json to stdout at the end")
    p.add_argument("--record", action="store_true", help="record all bus traffic to RUN/recording.mcap (docs/record.md)")
    _backend_arg(p)
    p.add_argument("--address", help="with --backend ray: the Ray cluster to join (host:port or auto); "
                   "default: start a local Ray instance for this run")
    p.add_argument("--ui", nargs="?", const=0, type=int, metavar="PORT",
                   help="serve the live console on 127.0.0.1:PORT (default: a free port) and print its address "
                   "(docs/console.md)")
    p.add_argument("--human", action="append", default=[], metavar="AGENT",
                   help="play the node AGENT yourself from the console page (swaps it for agent.web; implies --ui); "
                   "repeatable")
    p.add_argument("--takeover", action="append", default=[], metavar="AGENT",
                   help="let a person take over the agent AGENT from the console page, mid-episode, and hand back "
                   "(implies --ui); repeatable")

    p = sub.add_parser("validate", help="check a launch file and print it resolved")
    _file_args(p)
    _backend_arg(p)
    p.add_argument("--address", help="with --backend ray: a running Ray cluster (host:port or auto) to ask where "
                   "each node would land; nothing is started on it")
    p = sub.add_parser("graph", help="draw a launch file's graph")
    _file_args(p)
    p.add_argument("--format", choices=["text", "mermaid"], default="text")
    p = sub.add_parser("ls", help="list the bundled launch files by pack, with what each needs")
    p.add_argument("pack", nargs="?", help="only this pack's files (a pack name as `launch ls` shows it)")
    p.add_argument("--json", action="store_true", help="one JSON object: packs, files, broken pack records")
    p = sub.add_parser("describe", help="a node type's inputs, outputs, services and params")
    p.add_argument("node", help="a registered node type (e.g. agent.llm, football.env) or module:Class")

    p = sub.add_parser("ctl", help="steer a running graph")
    p.add_argument("action", choices=["pause", "resume", "step", "stop", "status"])
    p.add_argument("n", nargs="?", type=_step_count, default=1,
                   help=f"steps for `step`: a whole number from 1 to {MAX_STEP:,}")
    p.add_argument("--run", help="run id, run folder or launch pid (default: the newest running graph)")
    p = sub.add_parser("ui", help="open the live console of a running graph (prints its address)")
    p.add_argument("run", nargs="?", help="run id, run folder or launch pid (default: the newest running graph)")
    p.add_argument("--port", type=int, default=0, help="for a run started without --ui: the port of the console "
                   "this command serves (default: a free one)")
    p = sub.add_parser("export", help="a run's ended episodes as rows (jsonl, csv), or runs' step records as "
                       "training data (chat, vab-bc, hf, rollouts; docs/training.md)")
    p.add_argument("run", type=Path, nargs="+", help="the run folder(s); jsonl and csv take one")
    p.add_argument("--format", choices=["jsonl", "csv", "chat", "vab-bc", "hf", "rollouts"], default="jsonl",
                   help="jsonl/csv: one row per episode to stdout; chat: OpenAI chat fine-tuning JSONL; vab-bc: "
                   "VisualAgentBench's behaviour-cloning samples; hf: a Hugging Face dataset with parquet shards; "
                   "rollouts: per decision, token ids, logprobs and rewards for RL trainers")
    p.add_argument("--out", type=Path, help="the folder the training set is written to (chat, vab-bc, hf, "
                   "rollouts)")
    p.add_argument("--images", choices=["files", "inline"], default="files",
                   help="chat, vab-bc, rollouts: pictures as files beside the JSONL (default) or inline base64 "
                   "data URLs")
    p.add_argument("--success", action="store_true", help="only episodes whose metrics say success")
    p.add_argument("--min-metric", action="append", default=[], metavar="METRIC=VALUE",
                   help="only episodes with METRIC >= VALUE (repeatable)")
    p.add_argument("--env", action="append", default=[], help="only episodes of this env (its uses, e.g. "
                   "sokoban.env, or its family, e.g. sokoban; repeatable)")
    p.add_argument("--agent", action="append", default=[], help="only this agent node's decisions (repeatable)")
    p.add_argument("--splice-recovery", action="store_true",
                   help="join a failed episode and a later success on the same task into one trial-and-error "
                   "trajectory where the env's pack says how (VAB-CSS: a standard-setting failure and a hinted "
                   "success); the manifest lists what was joined")
    p.add_argument("--mix", action="append", default=[], metavar="FAMILY=TIMES",
                   help="write each record of an env family TIMES times in all (VAB's mix: css=3)")

    p = sub.add_parser("serve", help="serve a launch file as an environment for online training (--openenv); "
                       "docs/training.md")
    p.add_argument("file", help="a launch file path, or the name of a bundled one (see `launch ls`)")
    p.add_argument("--openenv", action="store_true", help="speak OpenEnv's reset/step/state (HTTP and WebSocket)")
    p.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1; any address "
                   "but loopback needs --token)")
    p.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0: a free one)")
    p.add_argument("--agent", default="agent", help="the node the client plays (default: agent)")
    p.add_argument("--replicas", type=int, default=1, help="graphs run at once, one per session; a client past "
                   "them is refused (default 1)")
    p.add_argument("--token", help="a secret of 16 or more characters every request must carry "
                   "(Authorization: Bearer TOKEN, or http://HOST:PORT/TOKEN as the client's base URL)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NODE.PARAM=VALUE",
                   help="override a param (or run.FIELD / bus.FIELD); repeatable")

    p = sub.add_parser("stats", help="per-edge message counts and drops of a running graph")
    p.add_argument("--run", help="run id, run folder or launch pid (default: the newest running graph)")
    p.add_argument("--json", action="store_true")
    from kernel.tools import commands, replay, report

    replay.add_parser(sub)
    report.add_parser(sub)
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        commands.add_pack_parsers(sub, words, COMMANDS, commands.pack_commands())
    except commands.PackCommandError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2

    args = parser.parse_args(words)
    handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
    if handler is None:
        console.print(f"[bold red]error:[/] the pack command {args.command!r} set no handler", highlight=False)
        return 2
    try:
        return handler(args) if args.command in COMMANDS else commands.run(args.command, handler, args)
    except ResultsNotWritten as exc:  # a full disk is no bad input: 1, as a failed run
        console.print(f"[bold red]error:[/] {escape(str(exc))}; nothing was run: make room there and run the same "
                      "command again to resume", highlight=False, soft_wrap=True)
        return 1
    except (LaunchError, PreflightFailed, ResultsDbError, FileNotFoundError, report.PageNotWritten,
            report.RunUnreadable, replay.ReplayRefused) as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except BrokenPipeError:  # `launch export RUN | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


MAX_STEP = 1_000_000_000
"""The most steps one ``launch ctl step N`` lets happen: a count the clock can hold and the bus
can carry; more than any run takes between two looks."""


def _step_count(text: str) -> int:
    """``N`` of ``launch ctl step N``: a usage error says the range (a negative count, 1e23, 2**70 are
    no number of steps; the kernel would refuse the first, msgpack fail on the last)."""
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or not 1 <= n <= MAX_STEP:
        raise argparse.ArgumentTypeError(f"expected a whole number of steps from 1 to {MAX_STEP:,}, got {text!r}")
    return n


def _file_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a launch file path, or the name of a bundled one (see `launch ls`)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NODE.PARAM=VALUE",
                   help="override a param (or run.FIELD / bus.FIELD); repeatable")
    p.add_argument("--episodes", type=int, help="override run.episodes")


def _backend_arg(p: argparse.ArgumentParser) -> None:
    from kernel.graph.backends import clusters

    p.add_argument("--backend", choices=["local", *clusters()], default="local",
                   help="where node processes run: this machine, or a Ray cluster (docs/scale.md); "
                   "ray also checks each node's resources: against what Ray accepts")


def _load(args: argparse.Namespace, *, check: bool = False) -> launchfile.LaunchFile:
    """The launch file of a command; with ``check`` also each node's params (against its ``Params``
    model) and the nodes' own preflight checks, before any process starts."""
    if not check:
        return launchfile.load(launchfile.resolve_path(args.file), sets=args.sets, episodes=args.episodes)
    from kernel.sdk.registry import load_node_class
    from kernel.tools.imports import bounded
    from kernel.tools.preflight import problems

    resources = None  # the local backend ignores resources:
    if args.backend == "ray":
        from kernel.tools.ray_backend import RayResources as resources
    lf = launchfile.load(launchfile.resolve_path(args.file), sets=args.sets, episodes=args.episodes,
                         node_class=bounded(load_node_class), resources=resources)
    found = problems(lf)
    if found:
        raise PreflightFailed("\n".join(found))
    placed = [n.id for n in lf.nodes if n.placement is not None]
    if placed and args.backend == "local":
        console.print(f"[yellow]note:[/] placement: is for --backend ray; the local backend runs every node on this "
                      f"machine, so it ignores the placement of {', '.join(map(repr, placed))}",
                      highlight=False, soft_wrap=True)
    return lf


class PreflightFailed(FramebusError):
    """The launch file is valid but cannot run here (e.g. a missing API key)."""


def _run(args: argparse.Namespace) -> int:
    lf = _load(args, check=True)
    if args.trace and (problem := tracing.missing(args.trace)):
        raise PreflightFailed(problem)
    if args.record:
        from kernel.tools.record import with_recorder

        lf = with_recorder(lf)
    logs.configure("kernel")
    from kernel.graph import runner
    from kernel.tools import announce, progress

    announcing = announce.announcer(console)
    watch = lambda kernel: progress.show(kernel, console, lf.run.metric)  # noqa: E731
    from kernel.tools.console import is_web_agent

    if args.ui is not None or args.human or args.takeover or any(is_web_agent(n) for n in lf.nodes):
        # (a launch file with an agent.web node is played from the page: it gets the console unasked)
        lf, announcing, watch = _with_ui(args, lf, announcing, watch)
    run = runner.run(lf, args.out, trace=args.trace, console=console, backend=args.backend,
                     address=args.address, watch=watch, announce=announcing)
    try:
        import uvloop

        summary = uvloop.run(run)
    except ImportError:
        summary = asyncio.run(run)
    _print_summary(summary)
    # The run is over and written: like any command, wait for a paused reader (a pager, Ctrl-S) to
    # take the last lines and the summary; a closed one (`| head`) ends the wait at once.
    outlet.drain(console_s=None)
    if args.json:
        print(json.dumps(summary))
    return runner.EXIT_CODES.get(summary["status"], 1)


def _with_ui(args: argparse.Namespace, lf: launchfile.LaunchFile, announcing: Any, watch: Any) -> tuple[Any, Any, Any]:
    """``--ui`` and ``--human``: the console node added (and agents swapped), its address in the
    run's announcement (for ``launch ui``) and printed once every node is up."""
    from kernel.tools import console as ui

    if args.backend != "local":
        raise LaunchError(f"--ui and --human need the local backend (the console listens on this machine's "
                          f"loopback), not --backend {args.backend}")
    if args.ui is not None and not 0 <= args.ui <= 65535:
        raise LaunchError(f"--ui {args.ui}: a port is a number from 1 to 65535 (or leave it out for a free one)")
    for agent in args.human:
        lf = ui.with_human(lf, agent)
    for agent in args.takeover:
        if agent in args.human:
            raise LaunchError(f"--human {agent} and --takeover {agent}: choose one (--human: the person plays every "
                              "step; --takeover: the agent plays until the person takes over)")
        lf = ui.with_takeover(lf, agent)
    port, token = args.ui or ui.free_port(), ui.new_token()
    address = ui.url(port, token)
    lf = ui.with_console(lf, port, token)

    def announce_with_console(info: dict[str, Any], ipc_dir: Path) -> Callable[[], None]:
        return announcing({**info, "console": address}, ipc_dir)

    async def watch_with_console(kernel: Any) -> None:
        console.print(f"[bold]console:[/] {address}", highlight=False, soft_wrap=True)
        await watch(kernel)

    return lf, announce_with_console, watch_with_console


def _ui(args: argparse.Namespace) -> int:
    """The console of a running graph: its own when it was started with --ui, else one served here
    from the kernel's services alone (graph, counters, episodes, steering; no frames)."""
    from kernel.tools import console as ui

    info = _find_run(args.run)
    if info.get("console"):
        print(f"console: {info['console']}", flush=True)  # the command's answer: on stdout
        return 0
    from kernel.tools.console.standalone import serve_forever

    port, token = args.port or ui.free_port(), ui.new_token()
    console.print("the run has no console node, so this console shows no frames (start a run with `launch run --ui` "
                  "for those); Ctrl-C ends this console, not the run", highlight=False, soft_wrap=True)
    outlet.drain(console_s=1.0)
    return serve_forever(info, port, token, lambda: print(f"console: {ui.url(port, token)}", flush=True))


def _validate(args: argparse.Namespace) -> int:
    if args.address and args.backend != "ray":
        raise LaunchError("--address names a Ray cluster to ask where nodes would land; add --backend ray")
    lf = _load(args, check=True)
    print(lf.to_yaml(), end="")
    if args.address:
        _where(lf, args.address)
    console.print(f"[green]ok[/] {lf.source}: {len(lf.nodes)} nodes, {len(lf.edges())} edges")
    return 0


def _where(lf: launchfile.LaunchFile, address: str) -> None:
    """Join the cluster at ``address`` (starting nothing on it) and say where each node would land."""
    from kernel.tools.ray_backend import RayCluster
    from kernel.tools.ray_placement import render

    cluster = RayCluster(address, console)
    cluster.start()
    try:
        machines = cluster.machines()
        landings = cluster.plan(lf)
    finally:
        cluster.shutdown()
    console.print(escape(f"where each node would run on the Ray cluster at {address} ({len(machines)} machine(s): "
                         f"{', '.join(map(str, machines))}):"), highlight=False, soft_wrap=True)
    for line in render(landings):
        console.print(escape(line), highlight=False, soft_wrap=True)
    failed = [x.node for x in landings if x.problem is not None]
    if failed:
        raise LaunchError(f"{len(failed)} of {len(landings)} nodes cannot be placed on the cluster at {address}: "
                          f"{', '.join(map(repr, failed))} (the reasons above)")


def _graph(args: argparse.Namespace) -> int:
    from kernel.tools import graphview

    lf = _load(args)
    print(graphview.render_mermaid(lf) if args.format == "mermaid" else graphview.render_text(lf))
    return 0


def _ls(args: argparse.Namespace) -> int:
    from kernel.launchfile.errors import closest
    from kernel.tools import catalogue

    cat = catalogue.build()
    groups = cat.by_pack()
    if args.pack is not None:
        names = [p.name for p, _ in groups]
        if args.pack not in names:
            suggestion = closest(args.pack, names)
            print(f"launch ls: no pack {args.pack!r} bundles launch files; packs: {', '.join(names)}"
                  + (f" (did you mean {suggestion!r}?)" if suggestion else ""), file=sys.stderr)
            return 2
        groups = [(p, files) for p, files in groups if p.name == args.pack]
    if args.json:
        print(json.dumps({"packs": [{"name": p.name, "title": p.title, "source": p.source, "needs": list(p.needs),
                                     "files": [f.as_json() for f in files]} for p, files in groups],
                          "broken": cat.broken}, indent=2))
        return 0
    # a glance: a pack's needs on its line, a file's own needs beyond them on the file's, wrapped in
    # their column; descriptions cut to the width
    def more(pack: catalogue.Pack, item: catalogue.Listed) -> str:
        return ", ".join(n for n in item.needs if n not in pack.needs)

    console = Console()
    file_w = max((len(f.file) + 2 for _, files in groups for f in files), default=12)
    needs_w = min(30, max((len(", ".join(p.needs)) for p, _ in groups), default=5),
                  max((len(more(p, f)) + 2 for p, files in groups for f in files), default=5))
    table = Table(box=None, pad_edge=False)
    table.add_column("launch file", no_wrap=True, width=file_w)
    table.add_column("needs", width=max(5, needs_w))
    table.add_column("description", no_wrap=True, overflow="ellipsis",
                     width=max(12, console.width - file_w - max(5, needs_w) - 4))  # 4: the gaps between columns
    for pack, files in groups:
        table.add_row(f"[bold]{escape(pack.title)}[/]", f"[dim]{escape(', '.join(pack.needs))}[/]",
                      f"[dim]{escape(pack.source)}[/]")
        for item in files:
            extra = more(pack, item)
            table.add_row(f"  {escape(item.file)}", f"+ {escape(extra)}" if extra else "", escape(item.description))
        table.add_section()
    console.print(table)
    for problem in cat.broken:
        console.print(f"[yellow]a pack record could not be read:[/] {escape(problem)}")
    return 0


def _describe(args: argparse.Namespace) -> int:
    from kernel.tools.describe import describe

    print(describe(args.node))
    return 0


def _ctl(args: argparse.Namespace) -> int:
    svc = {"status": "status"}.get(args.action, f"ctl.{args.action}")
    reply = _call_kernel(args.run, svc, {"n": args.n})
    print(json.dumps(reply, indent=2))
    return 0


def _stats(args: argparse.Namespace) -> int:
    reply = _call_kernel(args.run, "stats", {})
    if args.json:
        print(json.dumps(reply, indent=2))
        return 0
    table = Table("edge", "policy", "sent", "received", "dropped", "queued")
    for e in reply["edges"]:
        table.add_row(e["edge"], e["policy"], *(str(e[k]) for k in ("sent", "received", "dropped", "queued")))
    Console().print(table)
    if reply.get("decode_errors"):
        # senders name themselves: their names are shown as text, never as console markup
        Console().print(f"malformed messages dropped: {reply['decode_errors']}", markup=False, highlight=False)
    if reply.get("refused"):  # well-formed calls a sender may not make (docs/protocol.md section 8)
        Console().print(f"kernel calls refused, per sender: {reply['refused']}", markup=False, highlight=False)
    return 0


def _export(args: argparse.Namespace) -> int:
    if args.format in ("jsonl", "csv"):
        from kernel.tools.export import export

        if len(args.run) != 1 or args.out is not None:
            console.print(f"[bold red]error:[/] --format {args.format} writes one run's episodes to stdout: give one "
                          "run folder and no --out (the training formats chat, vab-bc, hf and rollouts take several)",
                          highlight=False, soft_wrap=True)
            return 2
        return export(args.run[0], args.format, sys.stdout)
    from kernel.tools.trainset import ExportError
    from kernel.tools.trainset.command import export_command

    try:
        return export_command(args, console)
    except ExportError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2


def _replay(args: argparse.Namespace) -> int:
    from kernel.tools import replay

    return replay.command(args)


def _serve(args: argparse.Namespace) -> int:
    """``launch serve``: imported here, as openenv-core (FastAPI, pydantic models) is optional and
    slow to import, and no other command needs it."""
    try:
        from kernel.tools import openenv_serve
    except ModuleNotFoundError as exc:
        raise PreflightFailed(f"launch serve --openenv needs openenv-core (pip install 'openenv-core==0.3.0'): "
                              f"{exc}") from None
    try:
        return openenv_serve.command(args)
    except openenv_serve.ServeRefused as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2


def _report(args: argparse.Namespace) -> int:
    from kernel.tools import report

    return report.command(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": _run, "validate": _validate, "graph": _graph, "ls": _ls, "describe": _describe, "ctl": _ctl,
    "stats": _stats, "ui": _ui, "export": _export, "replay": _replay, "report": _report, "serve": _serve,
}
"""Every built-in ``launch`` command and the function that carries it out; a pack's command
carries its own (``handler``, set by its ``add_parser``), run by kernel.tools.commands ``run``,
which also writes the page such a handler may return."""


def _find_run(which: str | None) -> dict[str, Any]:
    """The newest running graph of this user that matches ``which``; announcements that fail the
    trust checks of kernel.tools.announce (wrong owner or mode, a symlink, a foreign endpoint) are skipped."""
    from kernel.tools.announce import live_runs

    runs, untrusted = live_runs()
    for why in untrusted:
        console.print(f"[yellow]warning:[/] not trusting {why}", highlight=False, soft_wrap=True)
    if which:
        runs = [r for r in runs if which in (r["run_id"], r["run_dir"], str(r["pid"]))
                or Path(which).resolve() == Path(r["run_dir"])]
    if not runs:
        raise SystemExit(f"launch: no running graph{' matches ' + which if which else ''}; start one with `launch run`")
    return runs[0]


def _call_kernel(which: str | None, svc: str, body: Any) -> Any:
    from kernel.tools.client import KernelClient

    info = _find_run(which)
    with KernelClient(info["endpoint"], curve=info.get("curve")) as client:
        return client.call(svc, body)


_CONSOLE_EDGE = re.compile(r"-> console(-\d+)?/in\d+$")


def _print_summary(summary: dict[str, Any]) -> None:
    ep = summary["episodes"]
    style = "green" if summary["status"] == "completed" else "red"
    metrics = ", ".join(f"{k}={v:.4g}" for k, v in summary["metrics"].items())
    console.print(
        f"[{style}]{summary['status']}[/] ({escape(str(summary['reason']))}): episodes {ep['completed']}/{ep['total']} completed, "
        f"{ep['failed']} failed{f', {unscored} unscored' if (unscored := ep.get('unscored')) else ''}"
        f"{'; ' + metrics if metrics else ''}\nrun folder: {summary['run_dir']}",
        highlight=False, soft_wrap=True,
    )
    for edge in summary.get("stats", {}).get("edges", []):
        if _CONSOLE_EDGE.search(edge["edge"]):
            continue  # the console keeps only the newest of each output: its drops are by design (summary.json has them)
        if edge["dropped"]:
            console.print(f"[yellow]dropped[/] {edge['dropped']} of {edge['sent']} messages on {edge['edge']} "
                          f"(policy {edge['policy']})", highlight=False)
    for node, errors in summary.get("stats", {}).get("decode_errors", {}).items():
        # the sources are ZeroMQ identities whoever connected chose: text, never markup
        console.print(f"[yellow]malformed[/] messages dropped by {escape(node)}: {escape(str(errors))}", highlight=False)
    if dropped := summary.get("console", {}).get("dropped_lines"):
        console.print(f"[yellow]console[/]: {dropped} lines were not shown because the terminal did not read them "
                      f"in time; {summary['run_dir']}/logs has every line", highlight=False, soft_wrap=True)
    if dropped := summary.get("log_files", {}).get("dropped_lines"):
        console.print(f"[yellow]logs[/]: {dropped} lines were dropped because the disk did not keep up",
                      highlight=False)


if __name__ == "__main__":
    sys.exit(main())
