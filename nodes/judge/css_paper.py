"""VisualAgentBench's published VAB-CSS success rates, printed beside ours in summary.json's ``css``
section.

Transcribed from VAB's Table 4 (the CSS column: success rate in % on its 165 test instances,
proprietary models prompted, open models fine-tuned on VAB's trajectories) and Table 5 (with and
without the natural-language difference description), as given in
/work/shared/specs/visualagentbench.md §5. InternVL-2's 24.2 is the repository leaderboard's (the
paper's text lost that cell). The paper reports no improve rate per model, so there is none here.
These are numbers on VAB's own 165 instances, not a target for the instances generated here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCE", "TABLE4_CSS", "TABLE5", "table"]

SOURCE = ("VisualAgentBench (Liu et al., 2024), Table 4 CSS column (success rate %, 165 test instances; "
          "InternVL-2 from the repository leaderboard) and Table 5 (success rate % with and without the "
          "difference description)")

TABLE4_CSS: dict[str, float] = {
    "gpt-4o-2024-05-13": 34.5,
    "gpt-4-vision-preview": 29.1,
    "gpt-4-turbo-0409": 27.9,
    "claude-3.5-sonnet": 15.8,
    "claude-3-opus": 20.0,
    "gpt-4o-mini-2024-07-18": 17.0,
    "gemini-1.5-pro": 10.9,
    "gemini-1.0-pro": 0.0,
    "qwen-vl-max": 1.8,
    "InternVL-2 (fine-tuned)": 24.2,
    "Qwen2-VL (fine-tuned)": 27.3,
    "GLM-4V (fine-tuned)": 23.6,
    "LLaVA-NeXT (fine-tuned)": 18.2,
    "CogVLM2 (fine-tuned)": 17.6,
    "CogAgent (fine-tuned)": 13.9,
    "CogVLM (fine-tuned)": 10.3,
    "LLaVA-1.5 (fine-tuned)": 7.9,
    "Qwen-VL (fine-tuned)": 4.8,
}

# model -> (with the description, without it)
TABLE5: dict[str, tuple[float, float]] = {
    "gpt-4o-2024-05-13": (34.5, 24.2),
    "gpt-4-turbo-0409": (27.9, 1.9),
    "gpt-4-vision-preview": (29.1, 2.4),
}


def table() -> dict[str, Any]:
    """``{"table4_css_success": {model: SR}, "table5_success": {model: {"with_description": SR,
    "without_description": SR}}}``."""
    return {"table4_css_success": dict(TABLE4_CSS),
            "table5_success": {m: {"with_description": w, "without_description": wo} for m, (w, wo) in TABLE5.items()}}
