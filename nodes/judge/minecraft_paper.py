"""VisualAgentBench's published VAB-Minecraft success rates, printed beside ours in summary.json's
``minecraft`` section.

Transcribed from VAB's Table 4, Minecraft column (success rate in % over its 116 test tasks;
proprietary models prompted with thought, open models fine-tuned on VAB's trajectories), as given
in /work/shared/specs/visualagentbench.md §5. They were measured in MineRL with Steve-1 as the
low-level executor; the world and the executor here are different (a flying-squid server and a
scripted executor), so they are a reference point, not a number this world must reproduce.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCE", "TABLE4_MINECRAFT", "table"]

SOURCE = "VisualAgentBench (Liu et al., 2024), Table 4 Minecraft column (success rate %, 116 test tasks)"

TABLE4_MINECRAFT: dict[str, float] = {
    "gpt-4o-2024-05-13": 55.2,
    "gpt-4-vision-preview": 47.4,
    "gpt-4-turbo-0409": 50.0,
    "claude-3.5-sonnet": 56.0,
    "claude-3-opus": 51.7,
    "gpt-4o-mini-2024-07-18": 30.2,
    "gemini-1.5-pro": 41.4,
    "gemini-1.0-pro": 11.2,
    "qwen-vl-max": 6.0,
    "InternVL-2 (fine-tuned)": 28.4,
    "Qwen2-VL (fine-tuned)": 24.1,
    "GLM-4V (fine-tuned)": 19.8,
    "LLaVA-NeXT (fine-tuned)": 23.3,
    "CogVLM2 (fine-tuned)": 25.9,
    "CogAgent (fine-tuned)": 20.7,
    "CogVLM (fine-tuned)": 19.8,
    "LLaVA-1.5 (fine-tuned)": 25.9,
    "Qwen-VL (fine-tuned)": 18.1,
}


def table() -> dict[str, Any]:
    """The column as summary.json carries it: model -> success rate in %."""
    return dict(TABLE4_MINECRAFT)
