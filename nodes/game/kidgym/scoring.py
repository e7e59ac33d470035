"""The paper's capability score (App. D, spec §4.6), from success rates per task and level.

w_t = 0.2 p_t,1 + 0.3 p_t,2 + 0.5 p_t,3 weighs the harder levels more, and
Score(c) = 100 x the mean of w_t over the tasks T_c that exercise capability c (``CAPABILITIES``,
the paper's §5 mapping, which reproduces Table 6 up to the errata in ``paper.ERRATA``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from nodes.game.kidgym.tasks import CAPABILITIES

LEVEL_WEIGHTS: tuple[float, float, float] = (0.2, 0.3, 0.5)


def task_weight(rates: Sequence[float]) -> float:
    """w_t for one task from its (L1, L2, L3) success rates."""
    if len(rates) != 3:
        raise ValueError("a task weight needs the success rates of all three levels")
    return sum(w * p for w, p in zip(LEVEL_WEIGHTS, rates))


def capability_scores(rates: Mapping[str, Sequence[float | None]]) -> dict[str, float]:
    """Score(c) for every capability whose tasks all have rates at all three levels.

    ``rates`` maps a task abbreviation to its (L1, L2, L3) success rates (None where unplayed);
    a capability with any task or level missing is left out rather than scored on a subset."""
    out = {}
    for capability, tasks in CAPABILITIES.items():
        rows = [rates.get(t) for t in tasks]
        if all(row is not None and len(row) == 3 and None not in row for row in rows):
            weights = [task_weight([float(p) for p in row]) for row in rows if row is not None]  # type: ignore[misc]
            out[capability] = 100.0 * sum(weights) / len(weights)
    return out
