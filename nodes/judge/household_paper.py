"""VisualAgentBench's published VAB-OmniGibson success rates, printed beside ours in summary.json's
``household`` section.

Transcribed from VAB's Table 4, OmniGibson column (success rate in % over its 181 test instances;
proprietary models prompted, open models fine-tuned on VAB's trajectories), as given in
/work/shared/specs/visualagentbench.md §5. They were measured in OmniGibson (Isaac Sim, physics and
rendered views); the household here is a drawn, symbolic one, so they are a reference point, not a
number this world must reproduce.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCE", "TABLE4_OMNIGIBSON", "table"]

SOURCE = ("VisualAgentBench (Liu et al., 2024), Table 4 OmniGibson column (success rate %, 181 test "
          "instances)")

TABLE4_OMNIGIBSON: dict[str, float] = {
    "gpt-4o-2024-05-13": 41.4,
    "gpt-4-vision-preview": 36.5,
    "gpt-4-turbo-0409": 26.5,
    "claude-3.5-sonnet": 24.3,
    "claude-3-opus": 14.9,
    "gpt-4o-mini-2024-07-18": 12.2,
    "gemini-1.5-pro": 22.1,
    "gemini-1.0-pro": 4.4,
    "qwen-vl-max": 0.0,
    "InternVL-2 (fine-tuned)": 16.0,
    "Qwen2-VL (fine-tuned)": 13.8,
    "GLM-4V (fine-tuned)": 8.8,
    "LLaVA-NeXT (fine-tuned)": 3.3,
    "CogVLM2 (fine-tuned)": 3.3,
    "CogAgent (fine-tuned)": 6.6,
    "CogVLM (fine-tuned)": 3.3,
    "LLaVA-1.5 (fine-tuned)": 1.7,
    "Qwen-VL (fine-tuned)": 1.7,
}


def table() -> dict[str, Any]:
    """The column as summary.json carries it: model -> success rate in %."""
    return dict(TABLE4_OMNIGIBSON)
