"""``--splice-recovery``: failed and successful episodes of one task joined into trial-and-error
trajectories, where the environment's pack says how (kernel.sdk.splicing)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any, Iterable, Mapping

from kernel.sdk.splicing import SPLICERS_GROUP, DecisionData, EpisodeData, Splicer
from kernel.tools.trainset.runs import Decision, Episode, ExportError


def splicers() -> dict[str, Any]:
    """The packs' splicers by their environment's ``uses``."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=SPLICERS_GROUP)}


def _data(ep: Episode) -> EpisodeData:
    return {"episode_id": ep.episode_id, "run": str(ep.run), "env": ep.env, "metrics": dict(ep.metrics),
            "decisions": [DecisionData(**dataclasses.asdict(d)) for d in ep.decisions]}  # type: ignore[typeddict-item]


def _decision(data: Mapping[str, Any], where: str) -> Decision:
    try:
        return Decision(t=data["t"], head=list(data["head"]), turn=dict(data["turn"]), response=str(data["response"]),
                        valid=bool(data["valid"]), icl=data.get("icl"), seen=tuple(data.get("seen") or ()),
                        tokens=dict(data.get("tokens") or {}))
    except (KeyError, TypeError) as exc:
        raise ExportError(f"{where} returned a decision that is not one ({exc}): see kernel.sdk.splicing") from None


def splice_recovery(episodes: Iterable[Episode]) -> tuple[list[Episode], list[dict[str, Any]]]:
    """Every episode, with each pair a pack's splicer joins replaced by the joined trajectory (in
    the successful episode's place), and the list of what was joined. A success pairs with the
    first earlier-listed failure of its task that its splicer accepts; each episode joins once."""
    episodes = list(episodes)
    found = splicers()
    loaded: dict[str, Splicer] = {}
    keyed: list[tuple[Episode, str | None, EpisodeData | None]] = []
    for ep in episodes:
        if ep.env not in found:
            keyed.append((ep, None, None))
            continue
        if ep.env not in loaded:
            loaded[ep.env] = found[ep.env].load()
        data = _data(ep)
        keyed.append((ep, loaded[ep.env].task(data), data))
    used: set[int] = set()
    out: list[Episode] = []
    joined: list[dict[str, Any]] = []
    for i, (ep, task, data) in enumerate(keyed):
        if i in used:
            continue
        if task is None or data is None or not ep.metrics.get("success"):
            out.append(ep)
            continue
        splicer = loaded[ep.env]
        for j, (other, other_task, other_data) in enumerate(keyed):
            if j in used or j == i or other_task != task or other.env != ep.env or other.agent != ep.agent:
                continue
            assert other_data is not None
            decisions = splicer.join(other_data, data)
            if decisions is None:
                continue
            where = f"the splicer of {ep.env} ({found[ep.env].value})"
            used.update((i, j))
            out = [e for e in out if e is not other]  # a failure listed before its success was kept: no more
            out.append(dataclasses.replace(
                ep, episode_id=f"{other.episode_id}+{ep.episode_id}", decisions=[_decision(d, where) for d in decisions],
                metrics={**ep.metrics, "spliced": 1.0}, rewards=None))
            joined.append({"task": task, "env": ep.env, "failed": f"{other.run}:{other.episode_id}",
                           "succeeded": f"{ep.run}:{ep.episode_id}", "decisions": len(decisions)})
            break
        else:
            out.append(ep)
    return out, joined
