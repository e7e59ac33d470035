"""V-MAGE's two other per-model measures beside ELO: the unit-test metric and the anchoring metric.

Unit tests (spec §5.6, point 23): not the mean score but "the percentage of rounds where the
model's score outperforms this established random baseline", the baseline being the mean score of
random actions on the level. The random baseline is an ordinary entrant of the same ELO call (the
run that agent.random played, or one labelled ``random``), so both metrics read one set of runs;
its own rate is reported too, as the reference a model must beat. Per level, per Table 32
ability, and over every level the baseline played.

Anchoring (spec §5.5, point 22): "the number of sequential rounds where the model's output
response remained unchanged", Super Mario left out ("being stuck in a corner" is not anchoring);
"avg frames" = the sampling interval x that. judge.vmage counts each episode's maximal runs of one
unchanged reply (the action the game received); pooled per game, decisions / runs is the mean run
length in decisions and frames / runs in frames (exactly interval x rounds in lockstep, and the
frames really played under the realtime clock). Where an LLM agent recorded its raw replies
(``RUN/steps``), the same is counted on the reply text too (``text_*``): the paper's "output
response" likely means the whole reply, and a model that reasons anew each time never repeats it
even when its action stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nodes.judge.vmage_runs import Entrant, Result

ABILITIES: dict[str, tuple[tuple[str, int], ...]] = {
    "Positioning": (("race", 1), ("race", 7)),  # Table 32: Race 1 and 1 No History (our level 7)
    "Tracking": (("pong", 1), ("pong", 2), ("pong", 3)),
    "Visual Grounding": (("tempestrun", 1),),
    "Timing": (("flappybird", 1), ("flappybird", 2), ("flappybird", 3)),
}
"""Table 32's unit tests: the levels that probe each ability."""

ANCHOR_EXCLUDED = ("supermario",)


def _by_level(ent: Entrant) -> dict[tuple[str, int], list[Result]]:
    out: dict[tuple[str, int], list[Result]] = {}
    for (g, lv, _), res in ent.results.items():
        out.setdefault((g, lv), []).append(res)
    return out


def unit_tests(entrants: Sequence[Entrant]) -> dict[str, Any]:
    """The share (0-1, as Table 33 prints it) of each entrant's episodes that score above the
    random baseline's mean on their level; levels the baseline did not play are left out. With no
    random entrant there is no baseline, and the result says so instead of inventing one."""
    randoms = [e for e in entrants if e.is_random]
    if not randoms:
        return {"baseline": None, "note": "no random entrant (a run of agent.random, or --name RUN=random): "
                                          "no baseline to exceed"}
    base: dict[tuple[str, int], list[float]] = {}
    for r in randoms:
        for cell, res in _by_level(r).items():
            base.setdefault(cell, []).extend(x.score for x in res)
    baseline = {cell: float(np.mean(v)) for cell, v in base.items()}
    per_level: dict[str, dict[str, float]] = {}
    per_ability: dict[str, dict[str, float]] = {}
    overall: dict[str, float] = {}
    for ent in entrants:
        above: dict[tuple[str, int], tuple[int, int]] = {}
        for cell, res in _by_level(ent).items():
            if cell in baseline:
                above[cell] = (sum(x.score > baseline[cell] for x in res), len(res))
        if not above:
            continue
        for (g, lv), (k, n) in sorted(above.items()):
            per_level.setdefault(f"{g}/{lv}", {})[ent.name] = k / n
        abilities = {}
        for ability, cells in ABILITIES.items():
            hits = [above[c] for c in cells if c in above]
            if hits:
                abilities[ability] = sum(k for k, _ in hits) / sum(n for _, n in hits)
        per_ability[ent.name] = abilities
        overall[ent.name] = sum(k for k, _ in above.values()) / sum(n for _, n in above.values())
    return {"baseline": [r.name for r in randoms],
            "random_mean": {f"{g}/{lv}": v for (g, lv), v in sorted(baseline.items())},
            "per_level": per_level, "per_ability": per_ability, "overall": overall}


def anchoring(entrants: Sequence[Entrant]) -> dict[str, Any]:
    """Per entrant and game (Super Mario left out), the mean run of unchanged replies in decisions
    and in frames, pooled over the game's episodes; ``avg`` is the mean over games, as Table 3's
    Avg. column. Episodes judged before judge.vmage counted reply runs are skipped (and counted)."""
    rounds: dict[str, dict[str, float]] = {}
    frames: dict[str, dict[str, float]] = {}
    text_rounds: dict[str, dict[str, float]] = {}
    text_frames: dict[str, dict[str, float]] = {}
    uncounted: dict[str, int] = {}
    for ent in entrants:
        sums: dict[str, list[int]] = {}  # game -> [decisions, frames, runs]
        text: dict[str, list[int]] = {}  # game -> [replies, frames, runs of one reply text]
        for (g, _, _), res in ent.results.items():
            if g in ANCHOR_EXCLUDED:
                continue
            if res.text_runs:
                t = text.setdefault(g, [0, 0, 0])
                t[0] += res.texts
                t[1] += res.frames
                t[2] += res.text_runs
            if res.reply_runs is None or res.reply_runs < 1:
                uncounted[ent.name] = uncounted.get(ent.name, 0) + 1
                continue
            s = sums.setdefault(g, [0, 0, 0])
            s[0] += res.decisions
            s[1] += res.frames
            s[2] += res.reply_runs
        if sums:
            rounds[ent.name] = {g: d / r for g, (d, _, r) in sorted(sums.items())}
            frames[ent.name] = {g: f / r for g, (_, f, r) in sorted(sums.items())}
        if text:
            text_rounds[ent.name] = {g: d / r for g, (d, _, r) in sorted(text.items())}
            text_frames[ent.name] = {g: f / r for g, (_, f, r) in sorted(text.items())}
    return {"rounds": rounds, "frames": frames,
            "avg_rounds": {n: float(np.mean(list(v.values()))) for n, v in rounds.items()},
            "avg_frames": {n: float(np.mean(list(v.values()))) for n, v in frames.items()},
            "text_rounds": text_rounds, "text_frames": text_frames,
            "avg_text_rounds": {n: float(np.mean(list(v.values()))) for n, v in text_rounds.items()},
            "episodes_without_reply_runs": uncounted,
            "excluded_games": list(ANCHOR_EXCLUDED)}
