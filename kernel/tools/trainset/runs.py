"""Run folders read as training material: each ended episode of an agent with its decisions.

A decision is one step record of an agent that asked a model (``docs/agents.md``): the prompt as
the model was sent it, pictures as the files the run kept (``RUN/steps/images``), and the reply as
the model wrote it. Nothing is rendered again: an exporter only rearranges what is here. Records
of an attempt that was abandoned (a node died and the episode was dealt again) are left out.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import yaml

from kernel.bus.resultsdb import FILENAME, damaged, metrics_of, unusable

Message = dict[str, Any]


class ExportError(ValueError):
    """A run folder, a filter or an option that cannot be exported as asked; the text says which."""


@dataclass(frozen=True)
class Decision:
    """One model call that counted: the messages before the turn it answered, that turn, the reply."""

    t: int | None
    head: list[Message]
    """The messages before the current turn as the model was sent them: the rules (system), then
    the history the agent kept (older pictures may have been replaced by a note)."""
    turn: Message
    """The user turn of this step: the observation, with its pictures."""
    response: str
    valid: bool
    icl: str | None = None
    """The in-context examples the system prompt held (VAB's training format leaves them out)."""
    seen: tuple[str, ...] = ()
    """The sha256 of each picture's bytes as the model node reported sending them."""
    tokens: Mapping[str, Any] = field(default_factory=dict)
    """The reply's tokens as the model server gave them (``model.chat`` with ``logprobs: true``):
    ``logprobs``, ``tokens``, and from vLLM ``prompt_ids`` and ``completion_ids``."""

    def images(self, messages: Sequence[Message] | None = None) -> list[dict[str, Any]]:
        """The image parts of ``messages`` (default: the head and the turn), in order."""
        found = []
        for m in (messages if messages is not None else [*self.head, self.turn]):
            if isinstance(m.get("content"), list):
                found += [p for p in m["content"] if p.get("type") == "image"]
        return found


@dataclass
class Episode:
    run: Path
    launch: str
    env: str
    """The ``uses`` of the node whose observations the agent read (``sokoban.env``, ``css.env``)."""
    agent: str
    episode_id: str
    status: str
    metrics: dict[str, Any]
    decisions: list[Decision] = field(default_factory=list)
    rewards: list[float] | None = None
    """The env's reward at each step (its record of the episode), where the run has it."""

    @property
    def family(self) -> str:
        """The env's family, as ``--mix`` names it: ``css`` for ``css.env``."""
        return self.env.split(".", 1)[0].split(":", 1)[0]


@dataclass(frozen=True)
class Filters:
    success: bool = False
    min_metrics: Mapping[str, float] = field(default_factory=dict)
    envs: Sequence[str] = ()
    agents: Sequence[str] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"success": self.success, "min_metric": dict(self.min_metrics), "env": list(self.envs),
                "agent": list(self.agents)}

    def keeps(self, ep: Episode) -> bool:
        if self.envs and not ({ep.env, ep.family} & set(self.envs)):
            return False
        if self.agents and ep.agent not in self.agents:
            return False
        if self.success and not _truthy(ep.metrics.get("success")):
            return False
        for key, low in self.min_metrics.items():
            value = ep.metrics.get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < low:
                return False
        return True


def parse_min_metric(text: str) -> tuple[str, float]:
    """``reward=0.5`` -> ("reward", 0.5); an ExportError naming the option otherwise."""
    key, sep, value = text.partition("=")
    try:
        if not sep or not key.strip():
            raise ValueError
        return key.strip(), float(value)
    except ValueError:
        raise ExportError(f"--min-metric {text!r}: expected METRIC=NUMBER, e.g. reward=0.5") from None


@dataclass
class RunSummary:
    """What one run folder gave: for the manifest."""

    path: Path
    launch: str
    episodes: int = 0
    kept: int = 0
    decisions: int = 0
    agents: list[str] = field(default_factory=list)


def _truthy(value: Any) -> bool:
    return bool(value) and not (isinstance(value, str) and value.lower() in ("false", "0"))


def _launch(run: Path) -> dict[str, Any]:
    path = run / "launch.yaml"
    if not path.exists():
        raise ExportError(f"{run} has no launch.yaml: is it a run folder?")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ExportError(f"{path}: not readable as YAML ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise ExportError(f"{path}: no list of nodes in it")
    return data


def _obs_sources(launch: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Agent node id -> (the node its ``obs`` input reads, that node's ``uses``)."""
    nodes = [n for n in launch["nodes"] if isinstance(n, dict)]
    uses = {str(n.get("id")): str(n.get("uses") or "") for n in nodes}
    out = {}
    for n in nodes:
        obs = (n.get("inputs") or {}).get("obs")
        src = obs.get("from") if isinstance(obs, dict) else obs
        if isinstance(src, list):
            src = src[0] if src else None
        if isinstance(src, str) and "/" in src:
            env = src.split("/", 1)[0]
            out[str(n.get("id"))] = (env, uses.get(env, ""))
    return out


def decision_of(record: Mapping[str, Any]) -> Decision | None:
    """The decision in a step record; None for a record of no model call (an early stop, a model
    error, a human's move, a record from before prompts were kept)."""
    prompt = record.get("prompt")
    attempts = record.get("attempts")
    response = record.get("response")
    if not isinstance(prompt, list) or not isinstance(attempts, int) or attempts < 1 or not isinstance(response, str):
        return None
    current = len(prompt) - 1 - 2 * (attempts - 1)  # the turn asked, before any ask-again pairs
    if current < 0 or not isinstance(prompt[current], dict) or prompt[current].get("role") != "user":
        return None
    seen = record.get("seen_images")
    tokens = record.get("tokens")
    return Decision(t=record.get("t"), head=list(prompt[:current]), turn=prompt[current], response=response,
                    valid=bool(record.get("valid")), icl=record.get("icl") or None,
                    seen=tuple(seen) if isinstance(seen, list) else (), tokens=tokens if isinstance(tokens, dict) else {})


def read_run(run: Path, filters: Filters, summary: RunSummary | None = None) -> Iterator[Episode]:
    """The ended episodes of ``run`` that pass ``filters``, one per agent that asked a model, in
    episode order."""
    run = Path(run)
    if not run.is_dir():
        raise ExportError(f"{run} is not a folder: expected a run folder (launch run --out)")
    launch = _launch(run)
    sources = _obs_sources(launch)
    path = run / FILENAME
    if not path.exists():
        raise ExportError(f"{run} has no {FILENAME}: is it a run folder?")
    if summary is not None:
        summary.launch = str(launch.get("name") or "")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ended = db.execute("SELECT episode_id, status, metrics, attempt FROM episodes ORDER BY idx, episode_id").fetchall()
        for eid, status, cell, attempt in ended:
            if summary is not None:
                summary.episodes += 1
            metrics = metrics_of(path, eid, cell)
            rows = db.execute("SELECT node, record FROM steps WHERE episode_id = ? AND attempt IS ? ORDER BY node, rowid",
                              (eid, attempt)).fetchall()
            by_agent: dict[str, list[Decision]] = {}
            rewards: dict[str, list[float]] = {}
            for node, cell in rows:
                try:
                    record = json.loads(cell)
                except ValueError as exc:
                    raise damaged(path, f"a step record of episode {eid} is not JSON", exc) from None
                if not isinstance(record, dict):
                    continue
                if record.get("decision") is False and isinstance(record.get("rewards"), list):
                    rewards[node] = [float(r) for r in record["rewards"] if isinstance(r, (int, float))]
                elif (decision := decision_of(record)) is not None:
                    for part in decision.images():  # each picture's file, checked once and named in full:
                        part["path"] = str(image_file(run, part))  # a spliced trajectory mixes runs
                    by_agent.setdefault(node, []).append(decision)
            for agent, decisions in by_agent.items():
                env_node, env_uses = sources.get(agent, ("", ""))
                ep = Episode(run=run, launch=str(launch.get("name") or ""), env=env_uses, agent=agent,
                             episode_id=eid, status=status, metrics=metrics, decisions=decisions,
                             rewards=rewards.get(env_node))
                if summary is not None and agent not in summary.agents:
                    summary.agents.append(agent)
                if filters.keeps(ep):
                    if summary is not None:
                        summary.kept += 1
                        summary.decisions += len(decisions)
                    yield ep
    except sqlite3.DatabaseError as exc:
        raise (unusable(path, exc) if "not a database" in str(exc) else
               damaged(path, "reading its episodes and step records failed", exc)) from None
    finally:
        db.close()


def image_file(run: Path, part: Mapping[str, Any]) -> Path:
    """The file a record's image part names, checked to stay inside the run's picture folder (an
    image part read by :func:`read_run` has it checked and in full, as ``path``)."""
    if isinstance(part.get("path"), str):
        return Path(part["path"])
    rel = part.get("file")
    sha = part.get("sha256")
    if not isinstance(rel, str) or not isinstance(sha, str):
        raise ExportError(f"{run}: a prompt picture has no kept file (a run from before pictures were kept, "
                          f"or an agent on another machine): {part.get('image')!r}")
    path = (run / rel).resolve()
    if path.parent != (run / "steps" / "images").resolve():
        raise ExportError(f"{run}: a step record names a picture outside steps/images: {rel!r}")
    if not path.exists():
        raise ExportError(f"{run}: the picture {rel} a step record names is missing")
    return path
