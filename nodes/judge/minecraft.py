"""VAB-Minecraft's judge (``minecraft.judge``): success, VAB's step reward, and how each episode ended.

``minecraft.env`` knows the inventory after every action and computes VAB's step reward as it goes
(``nodes.game.minecraft.rewards``), so the judge reads the last step's ``info`` instead of keeping
a second copy of the world. What it expects there (every step may carry it; the last one must):

``task`` (str)
    VAB's task name, e.g. ``cake``.
``group`` (str)
    VAB's group of the task (``food``, ``tools``, ...), for the per-group table.
``target`` ({"item": str, "count": int, "members": list[str] | None})
    The item (or tag) to obtain and how many; ``members`` lists a tag's items (bare names), and is
    None or absent for a plain item. VAB's target names are ``minecraft:``-prefixed in the task
    file; either form is read.
``inventory`` ({item: count})
    The 36 main slots after the step's action, summed per item, bare names, empty slots left out.
``reward`` (float)
    VAB's step reward so far: the adjusted weights of every ``step_rewards`` item seen at least once
    since the reset (``rewards.StepReward``), so it never falls.
``status`` (str, last step)
    VAB's word for the ending (``nodes.game.minecraft.guards.STATUSES``); ``end_reason`` beside it,
    our shorter reason (``target obtained``, ``round limit``, ``failed in a row``, ``same action``,
    ``no progress``, ``gave up``).

An episode succeeds when the final inventory holds the target (VAB's test: for a tag, one member
held ``count`` times). Its ``partial_score`` is VAB's per-episode figure in its average: 1 for a
success, else the final step reward (at least 0). summary.json's ``minecraft`` section has the
success rate (in %, over every episode scored: a crash or a stop counts as a failure, as VAB
counts them), VAB's ``average_reward`` (the mean partial score), the end statuses and reasons, the
same per group, and VAB's Table 4 Minecraft column beside them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord
from nodes.game.minecraft.rewards import bare, holds, partial_score
from nodes.judge import minecraft_paper

__all__ = ["MinecraftJudge", "target_of"]

NEEDED = ("task", "target", "inventory", "reward")


def target_of(info: dict[str, Any]) -> tuple[str, int, list[str] | None]:
    """The target item (bare), its count and a tag's members from a step's ``info``; ValueError
    naming the field when it is malformed."""
    target = info.get("target")
    if not isinstance(target, dict) or not isinstance(target.get("item"), str) or not target["item"]:
        raise ValueError(f"info.target must be {{'item': str, 'count': int, 'members': [str] | None}}, "
                         f"got {target!r}")
    count = target.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"info.target.count must be an int >= 1, got {count!r}")
    members = target.get("members")
    if members is not None and (not isinstance(members, list) or not all(isinstance(m, str) for m in members)):
        raise ValueError(f"info.target.members must be a list of item names or None, got {members!r}")
    return bare(target["item"]), count, [bare(m) for m in members] if members else None


class MinecraftJudge(JudgeNode):
    """Ends each Minecraft episode with its success and step reward; keeps the rates."""

    section = "minecraft"

    async def setup(self) -> None:
        self.episodes: list[dict[str, Any]] = []
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        if missing := [key for key in NEEDED if key not in info]:
            raise Unscored(f"the last step's info lacks {', '.join(missing)}: is its env minecraft.env?")
        try:
            item, count, members = target_of(info)
        except ValueError as exc:
            raise Unscored(str(exc)) from None
        inventory = info["inventory"]
        if not isinstance(inventory, dict):
            raise Unscored(f"info.inventory must be a mapping of item -> count, got {inventory!r}")
        success = holds(inventory, item, count, lambda name: members if name == item else None)
        reward = float(info["reward"])
        status = str(info.get("status") or ("completed" if success else
                                            "stopped" if episode.labels["stopped"] else "task error"))
        metrics = {"success": float(success), "step_reward": round(reward, 4),
                   "partial_score": round(partial_score(success, reward), 4), "end_status": status,
                   "end_reason": str(info.get("end_reason") or ""), "task": str(info["task"]),
                   "group": str(info.get("group", "")), **episode.labels}
        self.episodes.append(metrics)
        return metrics

    def summary(self) -> dict[str, Any]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for e in self.episodes:
            groups.setdefault(e["group"], []).append(e)
        return {**_rates(self.episodes),
                "end_status": dict(Counter(e["end_status"] for e in self.episodes)),
                "end_reason": dict(Counter(e["end_reason"] for e in self.episodes if e["end_reason"])),
                "per_group": {g: _rates(es) for g, es in sorted(groups.items())},
                "unscored": self.unscored,
                "paper_source": minecraft_paper.SOURCE, "paper": minecraft_paper.table()}


def _rates(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """VAB's two figures (its ``calculate_overall``): success rate in % and the mean partial score."""
    n = len(episodes)
    wins = sum(e["success"] for e in episodes)
    return {"episodes": n, "successes": int(wins),
            "success_rate": round(100 * wins / n, 2) if n else None,
            "average_reward": round(sum(e["partial_score"] for e in episodes) / n, 4) if n else None}
