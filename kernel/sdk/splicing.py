"""What a pack tells the training export about error recovery (``launch export --splice-recovery``).

VisualAgentBench trained on trial-and-error trajectories made by joining a failed attempt at a task
with a later success on it (spec visualagentbench.md §4). Which episodes pair up, and how their
decisions join, depends on the benchmark (VAB-CSS: a failure in the standard setting and a success
in the lenient one, whose hint must not reach the training text), so a pack says it: a module
registered under the ``framebus.splicers`` entry points, named by its environment's ``uses``
(``"css.env" = "nodes.browser.css.splice"``), with the two functions of :class:`Splicer`. They see
episodes as plain data, the shapes below, and never the export's own code.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict

SPLICERS_GROUP = "framebus.splicers"


class DecisionData(TypedDict):
    """One model call of an agent's step record: the messages before the turn it answered (``head``),
    that turn, and the reply. ``icl``, ``seen`` and ``tokens`` pass through as the record had them."""

    t: int | None
    head: list[dict[str, Any]]
    turn: dict[str, Any]
    response: str
    valid: bool
    icl: str | None
    seen: tuple[str, ...]
    tokens: dict[str, Any]


class EpisodeData(TypedDict):
    episode_id: str
    run: str
    env: str
    metrics: dict[str, Any]
    decisions: list[DecisionData]


class Splicer(Protocol):
    def task(self, episode: EpisodeData) -> str | None:
        """The task the episode plays (episodes of one task may pair), or None to leave it alone."""

    def join(self, failed: EpisodeData, succeeded: EpisodeData) -> list[DecisionData] | None:
        """The decisions of one trial-and-error trajectory made of a failed episode and a successful one
        of the same task, or None where these two do not pair."""
