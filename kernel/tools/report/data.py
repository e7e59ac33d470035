"""What a report is made of, read from a run folder: summary, episodes, step records, recordings.

Every piece is optional except summary.json: a run without ``--record`` still gets its tables and
plots, and its strips are built from the step records alone (text, no frames).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kernel.graph.episodes import in_deal
from kernel.graph.store import read_mirror
from kernel.sdk.images import data_url, png_array, png_bytes
from kernel.sdk.pages import Strips
from kernel.tools.record import Recording, RecordingError, read_recording, to_json
from kernel.tools.recording_files import recordings as recording_files
from kernel.tools.replay import Decision, EpisodeTrace, episodes
from kernel.tools.report import RunUnreadable

THUMB_PX = 220
STRIP_METRICS = 6  # beside an episode's name: its results, not every counter
STRIP_HINTS = ("score", "success", "reward", "return", "steps", "agreement", "goal")
REASONING_CHARS = 4000


@dataclass
class Card:
    """One decision in an episode strip."""

    t: int
    image: str | None = None  # a data: URI
    text: str = ""  # the observation's text, shown when there is no frame
    actions: list[tuple[str, str]] = field(default_factory=list)  # (agent, action)
    reasoning: list[tuple[str, str]] = field(default_factory=list)  # (agent, the model's reply)
    reward: float | None = None
    valid: bool | None = None
    done: bool = False


@dataclass
class Strip:
    episode: str
    status: str
    metrics: dict[str, Any]
    decisions: int
    cards: list[Card]
    caption: str = ""  # what a page over several runs says the episode was (a pack's words)


@dataclass
class StripGroup:
    """Strips of one group of runs (an entrant of a ranking) on a page over several runs: the
    same strips as a run's own report, under a heading of the pack's choosing (``strip_group``
    draws them from the pack's ``kernel.sdk.pages.Strips``)."""

    title: str
    subtitle: str = ""
    strips: list[Strip] = field(default_factory=list)
    note: str = ""


@dataclass
class RunData:
    run_dir: Path
    summary: dict[str, Any]
    episodes: list[dict[str, Any]]
    steps: dict[str, list[dict[str, Any]]]  # agent node -> step records
    recordings: list[Recording]

    def tokens_per_episode(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for records in self.steps.values():
            for r in records:
                usage = r.get("usage") or {}
                slot = out.setdefault(str(r.get("episode")), {"prompt_tokens": 0, "completion_tokens": 0})
                for k in slot:
                    slot[k] += int(usage.get(k) or 0)
        return out


def load(run_dir: Path, *, need_summary: bool = True) -> RunData:
    """The run folder's parts. A page over several runs wants only their episodes and frames, so it
    passes ``need_summary=False`` and a run stopped before its summary still shows its strips."""
    summary_path = run_dir / "summary.json"
    if not summary_path.exists() and need_summary:
        raise RunUnreadable(f"{run_dir} has no summary.json (is it a run folder of `launch run`?)")
    try:
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    except (ValueError, OSError) as exc:
        raise RunUnreadable(f"{summary_path} cannot be read as a run's summary: {exc}") from None
    if not isinstance(summary, dict):
        raise RunUnreadable(f"{summary_path} cannot be read as a run's summary: it holds a JSON "
                         f"{type(summary).__name__}, not an object")
    eps = _episodes(run_dir / "episodes.jsonl", summary.get("deal"))
    steps = current_attempts({p.stem: _jsonl(p) for p in sorted((run_dir / "steps").glob("*.jsonl"))}, eps)
    try:
        recordings = [read_recording(p) for p in recording_files(run_dir)]  # oldest first: later ones win
    except RecordingError as exc:
        raise RunUnreadable(str(exc)) from None
    return RunData(run_dir, summary, eps, steps, recordings)


def _attempt(record: Mapping[str, Any]) -> int:
    value = record.get("attempt")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def current_attempts(steps: dict[str, list[dict[str, Any]]],
                     episodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each agent's step records of the attempt that ended each episode (its record's ``attempt``,
    1 when it has none), or of the latest attempt of one still open: an episode a dead node took
    down was played again under the same id, and the abandoned attempt's steps and tokens are no
    part of its result."""
    kept = {str(ep["episode_id"]): _attempt(ep) for ep in episodes}
    latest: dict[str, int] = {}
    for records in steps.values():
        for r in records:
            eid = str(r.get("episode"))
            latest[eid] = max(latest.get(eid, 1), _attempt(r))
    wanted = {**latest, **kept}
    return {agent: [r for r in records if _attempt(r) == wanted.get(str(r.get("episode")), 1)]
            for agent, records in steps.items()}


def _episodes(path: Path, deal: Any) -> list[dict[str, Any]]:
    """The run's ended episodes: lines a crash cut short are skipped without the record after them,
    each episode once (its first whole record), and only those of the run's own deal when its
    summary says what that was (records of an earlier run of the folder, or ids the kernel never
    deals, are no result of this run)."""
    try:
        read = read_mirror(path.read_bytes())
    except FileNotFoundError:
        return []
    total = deal.get("episodes", 0) if isinstance(deal, dict) else 0
    seen: set[str] = set()
    out = []
    for rec in read.records:
        eid = rec["episode_id"]
        if eid in seen or (total != 0 and not in_deal(eid, total)):
            continue
        seen.add(eid)
        out.append(rec)
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a crash
    return out


def traces(data: RunData) -> dict[str, EpisodeTrace]:
    """Recorded episodes of every recording of the run (a resumed run has several) and of every
    observation topic in it: replicas (env-0/obs, env-1/obs) play different episodes, and an
    episode seen on two topics is shown from the first, in topic order."""
    found: dict[str, EpisodeTrace] = {}
    for rec in data.recordings:  # a later recording's replay of an episode replaces the earlier one
        mine: dict[str, EpisodeTrace] = {}
        for topic in sorted(t for t in rec.topics if t.endswith("/obs") and rec.topics[t] != "foxglove.CompressedImage"):
            for eid, trace in episodes(rec, topic).items():
                mine.setdefault(eid, trace)
        found.update(mine)
    return found


def thumbnail(png: bytes, px: int = THUMB_PX) -> str:
    """A recorded frame at most ``px`` on its longer side, as a ``data:`` URL for the page."""
    from PIL import Image

    image = Image.fromarray(png_array(png)).convert("RGB")
    grow = px // max(image.size)
    if grow > 1:  # a tiny frame (a grid world): enlarge it in whole pixels, so it stays sharp
        image = image.resize((image.width * grow, image.height * grow), Image.Resampling.NEAREST)
    image.thumbnail((px, px), Image.Resampling.LANCZOS)
    return data_url(png_bytes(np.asarray(image), level=9))  # the page inlines many: small beats fast


def _pick(n: int, limit: int) -> list[int]:
    """``limit`` indexes spread evenly over ``range(n)``, first and last included."""
    if n <= limit:
        return list(range(n))
    return sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})


def _action_text(action: Any) -> str:
    if isinstance(action, str):
        return action
    return json.dumps(to_json(action, None))


def strips(data: RunData, *, max_episodes: int = 12, max_steps: int = 24) -> list[Strip]:
    recorded = traces(data)
    by_step: dict[tuple[str, Any], list[tuple[str, dict[str, Any]]]] = {}
    for agent, records in data.steps.items():
        for r in records:
            by_step.setdefault((str(r.get("episode")), r.get("t")), []).append((agent, r))
    listed = data.episodes or [{"episode_id": e, "status": "recorded", "metrics": {}} for e in recorded]
    out: list[Strip] = []
    for ep in listed[:max_episodes]:
        eid = str(ep["episode_id"])
        trace = recorded.get(eid)
        if trace is not None:
            decisions: list[Decision | int] = list(trace.decisions)
        else:
            decisions = sorted({int(t) for (e, t) in by_step if e == eid and isinstance(t, int)})
        if not decisions:
            continue  # neither recorded nor in step records: the episode table has it
        cards = [_card(decisions[i], eid, by_step) for i in _pick(len(decisions), max_steps)]
        metrics = dict(ep.get("metrics") or {})
        shown = sorted(metrics, key=lambda k: not any(hint in k for hint in STRIP_HINTS))[:STRIP_METRICS]
        out.append(Strip(eid, str(ep.get("status", "")), {k: metrics[k] for k in shown}, len(decisions), cards))
    return out


def _card(decision: Decision | int, eid: str, by_step: dict[tuple[str, Any], list[tuple[str, dict[str, Any]]]]) -> Card:
    if isinstance(decision, int):
        card = Card(decision)
    else:
        card = Card(decision.t)
        raw = decision.obs.raw if isinstance(decision.obs.raw, dict) else {}
        png = decision.obs.png("frame")
        if png is None:
            png = next((p[0] for p in decision.obs.images.values() if p), None)
        card.image = thumbnail(png) if png is not None else None
        card.text = str(raw.get("text", ""))
        card.actions = [(agent, _action_text(a)) for agent, a in decision.actions.items()]
        if decision.step:
            card.reward = decision.step.get("reward")
            card.valid = decision.step.get("valid")
            card.done = bool(decision.step.get("done"))
    for agent, record in by_step.get((eid, card.t), []):
        if record.get("response"):
            card.reasoning.append((agent, str(record["response"])[:REASONING_CHARS]))
        if not any(a == agent for a, _ in card.actions) and "sent" in record:
            card.actions.append((agent, _action_text(record["sent"])))
    return card


def run_strips(run_dir: Path, episode_ids: Sequence[str] | None = None, *, captions: Mapping[str, str] | None = None,
               max_episodes: int = 12, max_steps: int = 24) -> list[Strip]:
    """The run report's strips of the chosen episodes of ``run_dir``, in the order given (all of them
    when None), each captioned from ``captions``: a pack's page over several runs shows the episodes
    it compares (the same layouts for every entrant) with the run report's own strip code."""
    data = load(run_dir, need_summary=False)
    if episode_ids is not None:
        by_id = {str(ep.get("episode_id")): ep for ep in data.episodes}
        data = replace(data, episodes=[by_id[e] for e in episode_ids if e in by_id])
    out = strips(data, max_episodes=max_episodes, max_steps=max_steps)
    for strip in out:
        strip.caption = (captions or {}).get(strip.episode, "")
    return out


def strip_group(wanted: Strips) -> StripGroup:
    """The strips a pack asked for, drawn from each run folder in turn and shown in the pack's
    order, with the pack's note when none could be drawn or none has a frame (an unrecorded run
    still shows its heading and says why it is empty)."""
    by_run: dict[Path, dict[str, str]] = {}  # run -> {episode: caption}, in the order asked
    for ep in wanted.episodes:
        by_run.setdefault(ep.run, {})[ep.episode] = ep.caption
    order = {(ep.run, ep.episode): i for i, ep in enumerate(wanted.episodes)}
    drawn: list[tuple[int, Strip]] = []
    for run, captions in by_run.items():
        for strip in run_strips(run, list(captions), captions=captions, max_episodes=len(captions),
                                max_steps=wanted.max_steps):
            if (run, strip.episode) in order:  # an id the run never ended lets run_strips fall back to all
                drawn.append((order[(run, strip.episode)], strip))
    group = StripGroup(wanted.title, wanted.subtitle, [strip for _, strip in sorted(drawn, key=lambda d: d[0])])
    if not group.strips:
        group.note = wanted.no_strips
    elif not any(card.image for strip in group.strips for card in strip.cards):
        group.note = wanted.no_frames
    return group
