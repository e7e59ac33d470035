"""VAB-CSS's judge node (``judge.css``): each finished episode's success and improve, and the rates.

``css.env`` renders the page after every change and measures its distance to the target itself
(it must, to show the agent the new screenshot), so rendering it again here would only repeat
that work; the judge reads the last step's ``info`` instead and ends the episode with:

* ``success`` (0/1): the final distance (1 - grayscale SSIM) is below 0.1, VAB's definition;
* ``improve`` (0/1): the final distance beats the initial one by more than 0.05 (VAB's code);
* ``initial_distance``, ``final_distance``, ``rounds_used``, ``finished`` (the agent said the end
  phrase), ``tool_failures`` (replies answered with one of VAB's failure texts), ``instance``.

summary.json's ``css`` section has the success rate and improve rate (in %, like the paper), split
by whether the difference description was given, beside VAB's Table 4 CSS column and Table 5
(``css_paper``). A step without the env's scores (another env wired in) ends its episode
``failed`` with the reason, never a silent 0.

The pictures the report shows beside the score (target, initial, final) are kept by ``css.env``,
which holds those renderings already; the judge has none without rendering them again.
"""

from __future__ import annotations

from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord
from nodes.judge import css_paper

__all__ = ["CssJudge"]

_KEYS = ("instance", "initial_distance", "final_distance", "rounds_used", "finished", "tool_failures", "hint")


class CssJudge(JudgeNode):
    """Ends each VAB-CSS episode with its success and improve, and keeps the rates in summary.json."""

    section = "css"

    async def setup(self) -> None:
        self.results: dict[str, list[tuple[bool, bool]]] = {}  # "with_description"/"without_description" -> episodes
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        if "final_distance" not in info or "success" not in info:
            raise Unscored("the last step has no final_distance and success: is its env css.env?")
        success, improve = bool(info["success"]), bool(info["improve"])
        metrics = {"success": float(success), "improve": float(improve), **{k: info[k] for k in _KEYS if k in info},
                   "description": bool(info.get("description", True)), **episode.labels}
        self.log.info("scored", episode=episode.id, success=success, improve=improve,
                      final_distance=info["final_distance"])
        key = "with_description" if metrics["description"] else "without_description"
        self.results.setdefault(key, []).append((success, improve))
        return metrics

    def summary(self) -> dict[str, Any]:
        every = [r for rs in self.results.values() for r in rs]

        def rates(rs: list[tuple[bool, bool]]) -> dict[str, Any]:
            n = len(rs)
            return {"episodes": n, "success_rate": round(100 * sum(s for s, _ in rs) / n, 2) if n else None,
                    "improve_rate": round(100 * sum(i for _, i in rs) / n, 2) if n else None}

        return {**rates(every), "unscored": self.unscored,
                "per_setting": {k: rates(rs) for k, rs in self.results.items()},
                "paper_source": css_paper.SOURCE, "paper": css_paper.table()}
