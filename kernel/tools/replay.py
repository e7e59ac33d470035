"""``launch replay FILE.mcap``: look at a recorded run again, or play a new agent against it.

Three uses of one recording (kernel/tools/record.py writes it):

* no option: what the file holds (topics, episodes, how many decisions, whether it is complete);
* ``--render DIR``: re-render episodes: each recorded frame as a PNG, an animated GIF per episode,
  and a text transcript (observation text, actions, rewards) that works for text-only runs too;
* ``--agent USES``: drive a new agent with the recorded observations, in recorded order. The
  recorded launch file is run again with the environment swapped for :class:`ReplayEnv` (same node
  id, so the agents' wiring stays; kernel/tools/replay_env.py), judges dropped, and the agents' ``uses:`` replaced; the new
  actions are compared with the recorded ones (agreement per episode). It is open loop: the world
  does not react to the new actions, so agreement after the first difference is about decisions
  on someone else's trajectory.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel.bus.errors import FramebusError
from kernel.launchfile import ClockSpec, LaunchError, LaunchFile, NodeSpec
from kernel.sdk.steps import StepRecordError, parse_step
from kernel.tools import rewrite

if TYPE_CHECKING:  # kernel.tools.record pulls in numpy and the node SDK: only import it when used
    from kernel.tools.record import Recorded, Recording


# --------------------------------------------------------------------------------------------
# episodes of a recording


class ReplayRefused(FramebusError):
    """The file or the choice given to ``launch replay`` cannot be replayed: bad input, exit 2, with
    the file named and what it holds instead."""


@dataclass
class Decision:
    """One observation and what the agents answered to it."""

    t: int
    obs: Recorded
    actions: dict[str, Any] = field(default_factory=dict)  # agent node -> action body
    step: dict[str, Any] | None = None  # the environment's step record (reward, done, info)


@dataclass
class EpisodeTrace:
    id: str
    decisions: list[Decision] = field(default_factory=list)


def recorded_launch(rec: Recording) -> LaunchFile | None:
    """The launch file the recording was made with (None if it carries none); LaunchError if it
    does not load here (a pack it used is not installed, say)."""
    text = rec.launch_yaml
    return rewrite.loads(text, f"{rec.path.stem}-launch.yaml") if text.strip() else None


def obs_topic(rec: Recording, wanted: str | None = None) -> str:
    """The observation channel: ``wanted``, or the only ``*/obs`` one."""
    topics = [t for t, schema in rec.topics.items() if t.endswith("/obs") and schema != "foxglove.CompressedImage"]
    if wanted:
        if wanted not in rec.topics:
            raise ReplayRefused(f"no topic {wanted!r} in {rec.path}; topics: {', '.join(rec.topics)}")
        return wanted
    if len(topics) != 1:
        raise ReplayRefused(f"{rec.path} has {len(topics) or 'no'} observation topics "
                         f"({', '.join(topics) or '-'}); choose one with --obs")
    return topics[0]


def agent_topics(rec: Recording, env: str) -> list[str]:
    """The ``node/output`` wired into the environment's ``action`` input (all ``*/action`` topics
    when the recording carries no launch file, or one that does not load here)."""
    try:
        lf = recorded_launch(rec)
    except LaunchError:
        lf = None
    wired = rewrite.sources_of(lf, env, "action") if lf is not None else []
    return wired or [t for t in rec.topics if t.endswith("/action")]


def episodes(rec: Recording, topic: str) -> dict[str, EpisodeTrace]:
    """Episodes in recorded order. An action belongs to the latest observation of its step that
    was published before it, which is exact for lockstep worlds."""
    env = topic.split("/", 1)[0]
    agents = {t: t.split("/", 1)[0] for t in agent_topics(rec, env)}
    traces: dict[str, EpisodeTrace] = {}
    by_step: dict[tuple[str, int], Decision] = {}
    current: EpisodeTrace | None = None
    for m in rec.messages:
        if m.topic == topic and isinstance(m.raw, dict):
            eid = str(m.raw.get("episode", "?"))
            current = traces.setdefault(eid, EpisodeTrace(eid))
            t = m.step if m.step is not None else int(m.raw.get("t", len(current.decisions)))
            decision = Decision(t, m)
            current.decisions.append(decision)
            by_step[(eid, t)] = decision
        elif m.topic in agents and current is not None:
            target = by_step.get((current.id, m.step)) if m.step is not None else None
            target = target or (current.decisions[-1] if current.decisions else None)
            if target is not None:
                target.actions.setdefault(agents[m.topic], m.body())  # the first answer is the one used
        elif m.topic == f"{env}/step" and isinstance(m.raw, dict):
            found = by_step.get((str(m.raw.get("episode")), m.raw.get("t")))
            if found is not None:
                found.step = m.body()
    return traces


# --------------------------------------------------------------------------------------------
# re-rendering


def transcript(trace: EpisodeTrace) -> str:
    from kernel.tools.record import to_json

    lines = [f"episode {trace.id}: {len(trace.decisions)} decisions"]
    for d in trace.decisions:
        raw = d.obs.raw if isinstance(d.obs.raw, dict) else {}
        lines.append(f"\n[t={d.t}] {raw.get('text', '')}".rstrip())
        for agent, action in d.actions.items():
            lines.append(f"  {agent}: {json.dumps(to_json(action, None))}")
        if d.step:
            cut = ", truncated" if _truncated(d.step) else ""
            lines.append(f"  -> reward {d.step.get('reward')}, valid {d.step.get('valid')}, done {d.step.get('done')}"
                         f"{cut}")
    return "\n".join(lines) + "\n"


def _truncated(step: dict[str, Any]) -> bool:
    """Whether a recorded step record says a step budget cut its episode off (a recording made before
    ``truncated`` was the record's own field has it in ``info``; one that is no record says nothing)."""
    try:
        return parse_step(step)["truncated"]
    except StepRecordError:
        return False


def render(traces: list[EpisodeTrace], out: Path, *, key: str = "frame", gif_ms: int = 250) -> list[Path]:
    """Write each episode's recorded frames (``DIR/<episode>/t0000.png``), a GIF of them, and its
    transcript (``DIR/<episode>.txt``); returns the files written. Frames are the recorded PNGs,
    byte for byte."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for trace in traces:
        frames: list[bytes] = []
        for d in trace.decisions:
            png = d.obs.png(key)
            if png is not None:
                folder = out / trace.id
                folder.mkdir(exist_ok=True)
                path = folder / f"t{d.t:04d}.png"
                path.write_bytes(png)
                written.append(path)
                frames.append(png)
        if frames:
            written.append(_gif(frames, out / f"{trace.id}.gif", gif_ms))
        text = out / f"{trace.id}.txt"
        text.write_text(transcript(trace))
        written.append(text)
    return written


def _gif(frames: list[bytes], path: Path, ms: int) -> Path:
    from PIL import Image

    from kernel.sdk.images import png_array

    images = [Image.fromarray(png_array(f)).convert("RGB") for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=ms, loop=0)
    return path


# --------------------------------------------------------------------------------------------
# driving a new agent


def replay_graph(rec: Recording, topic: str, *, agent_uses: str | None, node: str | None,
                 episode_ids: list[str]) -> LaunchFile:
    """The recorded launch file made into a replay: the environment becomes a :class:`ReplayEnv`,
    the recorder and every node that reads another output of the environment (judges) go, and
    the agents (or ``node``) get ``agent_uses``."""
    lf = recorded_launch(rec)
    if lf is None:
        raise ReplayRefused(f"{rec.path} carries no launch file, so there is no agent to start")
    env, _, output = topic.partition("/")
    agents = [t.split("/", 1)[0] for t in rewrite.sources_of(lf, env, "action")]
    targets = [node] if node else agents
    ids = {n.id for n in lf.nodes}
    for target in targets:
        if target not in ids:
            raise ReplayRefused(f"no node {target!r} in the recorded launch file")
    recorders = {n.id for n in lf.nodes if n.uses == rewrite.RECORDER_USES}
    dropped = rewrite.readers(lf, recorders, cut=lambda src, out: src == env and out != output)
    recorded_env = lf.node(env)
    clock = recorded_env.clock
    wait_for = [a for a in (clock.wait_for if clock is not None and clock.wait_for else agents) if a not in dropped]
    replay_env = NodeSpec(
        id=env, uses=rewrite.REPLAY_ENV_USES,
        params={"recording": str(rec.path.resolve()), "topic": topic, "episodes": episode_ids},
        inputs={k: v for k, v in recorded_env.inputs.items() if k == "action"},
        clock=ClockSpec(mode="lockstep", wait_for=wait_for, default_action=None,
                        deadline=clock.deadline if clock is not None else None))
    graph = rewrite.replace_node(rewrite.without(lf, dropped), env, replay_env)
    if agent_uses:
        for target in targets:
            if target not in dropped:
                kept = graph.node(target).params if graph.node(target).uses == agent_uses else {}
                graph = rewrite.replace_node(graph, target, uses=agent_uses, cmd=None, params=kept)
    return graph.model_copy(update={
        "name": f"{lf.name}-replay", "description": f"replay of {rec.path.name}",
        "run": lf.run.model_copy(update={"episodes": len(episode_ids), "out": None})})


def drive(rec: Recording, topic: str, args: argparse.Namespace, episode_ids: list[str]) -> dict[str, Any]:
    """Run the replay graph; returns the comparison (also in ``RUN/replay.jsonl``)."""
    import asyncio

    from kernel import launchfile
    from kernel.bus import logs, outlet
    from kernel.graph import runner
    from kernel.tools.announce import announcer

    out = args.out or rec.path.parent / "replays" / f"{datetime.now():%Y%m%d-%H%M%S}-{args.agent.replace(':', '.')}"
    out.mkdir(parents=True, exist_ok=True)
    source = out / "replay-source.yaml"
    graph = replay_graph(rec, topic, agent_uses=args.agent, node=args.node, episode_ids=episode_ids)
    source.write_text(graph.to_yaml())
    lf = launchfile.load(source, sets=args.sets)  # the --set overrides, checked like any file's
    logs.configure("kernel")
    console = outlet.console()  # queued: a terminal that stops reading cannot stall the run
    summary = asyncio.run(runner.run(lf, out, console=console, announce=announcer(console)))
    lines = (out / "replay.jsonl").read_text().splitlines() if (out / "replay.jsonl").exists() else []
    rows = [json.loads(line) for line in lines if line.strip()]
    same = sum(r["same"] for r in rows)
    per_episode: dict[str, dict[str, int]] = {}
    for r in rows:
        e = per_episode.setdefault(r["episode"], {"decisions": 0, "same": 0})
        e["decisions"] += 1
        e["same"] += int(r["same"])
    return {"status": summary["status"], "run_dir": str(out), "decisions": len(rows), "same": same,
            "agreement": same / len(rows) if rows else 0.0, "episodes": per_episode,
            "differences": [r for r in rows if not r["same"]][:20]}


# --------------------------------------------------------------------------------------------
# the command


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="re-render a recording, or drive a new agent with its observations")
    p.add_argument("file", type=Path, help="a recording (RUN/recording.mcap, from `launch run --record`)")
    p.add_argument("--episode", action="append", default=[], metavar="ID", help="only this episode; repeatable")
    p.add_argument("--obs", help="the observation topic (default: the only */obs one)")
    p.add_argument("--render", type=Path, metavar="DIR", help="write frames (PNG, GIF) and transcripts to DIR")
    p.add_argument("--agent", metavar="USES", help="drive this agent (a node type or module:Class) with the "
                   "recorded observations and compare its actions with the recorded ones")
    p.add_argument("--node", help="the agent node to replace (default: every agent wired to the environment)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NODE.PARAM=VALUE",
                   help="override a param of the replay graph; repeatable")
    p.add_argument("--out", type=Path, help="run folder of the replay (default RECORDING_DIR/replays/...)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from kernel.tools.record import RecordingError, read_recording

    console = Console(stderr=True)
    if not args.file.exists():
        raise ReplayRefused(f"{args.file} does not exist")
    try:
        rec = read_recording(args.file)
    except RecordingError as exc:
        raise ReplayRefused(f"{exc}") from None
    topic = obs_topic(rec, args.obs)
    traces = episodes(rec, topic)
    ids = args.episode or list(traces)
    unknown = [e for e in ids if e not in traces]
    if unknown:
        raise ReplayRefused(f"no episode {', '.join(unknown)} in {args.file}; it has {', '.join(traces)}")
    if not rec.complete:
        console.print(f"[yellow]{args.file} has no summary (the run was stopped hard); read up to where it ends")
    result: dict[str, Any] = {"file": str(args.file), "complete": rec.complete, "obs": topic,
                              "episodes": {e: len(traces[e].decisions) for e in ids}}
    if args.render:
        written = render([traces[e] for e in ids], args.render)
        result["rendered"] = [str(p) for p in written]
        console.print(f"rendered {len(ids)} episode(s) into {args.render} ({len(written)} files)")
    if args.agent:
        result["replay"] = drive(rec, topic, args, ids)
        r = result["replay"]
        table = Table("episode", "decisions", "same actions", "agreement")
        for eid, e in r["episodes"].items():
            table.add_row(eid, str(e["decisions"]), str(e["same"]), f"{e['same'] / max(1, e['decisions']):.0%}")
        console.print(table)
        console.print(f"{args.agent}: {r['same']}/{r['decisions']} actions as recorded ({r['agreement']:.0%}); "
                      f"details in {r['run_dir']}/replay.jsonl", highlight=False)
    if not args.render and not args.agent:
        table = Table("topic", "messages")
        counts: dict[str, int] = {}
        for m in rec.messages:
            counts[m.topic] = counts.get(m.topic, 0) + 1
        for t in rec.topics:
            table.add_row(t, str(counts.get(t, "images")))
        console.print(table)
        for e in ids:
            console.print(f"{e}: {len(traces[e].decisions)} decisions")
    if args.json:
        print(json.dumps(result))
    return 0 if not args.agent or result["replay"]["status"] == "completed" else 1
