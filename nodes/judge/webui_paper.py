"""MageBench's published WebUI scores, printed beside ours in summary.json's ``webui`` section.

Copied from MageBench's Table 1 (test-mini subset, unified prompt; AES in %, δ = ±2.0 Global,
±2.6 Online), as transcribed in /work/shared/specs/magebench.md §4. These are the paper's numbers
on its own 40-odd mini tasks, not a target for a different task set.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SOURCE", "TABLE1", "table"]

SOURCE = "MageBench, Table 1 (test-mini subset, unified prompt): WebUI AES % Global (δ=±2.0) and Online (δ=±2.6)"

# model -> (Global, Online)
TABLE1: dict[str, tuple[float, float]] = {
    "Phi-3.5-V-4.2B": (0.03, 11.78),
    "DeepSeek-VL-7B": (13.78, 8.07),
    "Xcomposer-2.5-7B": (12.95, 15.26),
    "MiniCPM-V2.6-8B": (12.52, 10.03),
    "LLaVA-v1.5-13B": (11.95, 9.92),
    "Llava-1.6-34B": (6.57, 15.17),
    "Yi-VL-34B": (7.14, 12.08),
    "Qwen2-vl-72B": (7.37, 13.03),
    "NVLM-72B": (4.71, 14.46),
    "InternVL2-76B-LLaMA3": (16.22, 16.76),
    "Llama-3.2-90B-Vision-Instruct": (35.09, 27.47),
    "Claude-3.5-Sonnet": (64.11, 62.08),
    "Gemini-1.5-pro": (44.79, 39.30),
    "GPT-4o": (34.28, 35.50),
    "Idle Baseline": (0.00, 0.00),
    "Random Baseline": (0.00, 0.00),
    "Human": (68.71, 94.32),
}


def table() -> dict[str, dict[str, Any]]:
    """The rows as ``{model: {"global": AES, "online": AES}}``."""
    return {model: {"global": g, "online": o} for model, (g, o) in TABLE1.items()}
