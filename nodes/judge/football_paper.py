"""MageBench's published Football scores, printed beside a run's so a reader can place it.

Zhang et al., "MageBench: Bridging Large Multimodal Models to Agents" (github.com/microsoft/MageBench),
the "Football Online" column of Table 1 (test-mini set: 20 scenarios, 10 repeats) and Table 4
(complete set: 108 scenarios, averaged over 3 repeats). Units: the mean per episode of the summed
shaped reward, as the released evaluator computes it, i.e. the judge's ``code`` variant; Football
has no Global setting. Models printed as IFE (instruction-following error: over 90% of outputs
unparsable) have no number and are left out; Claude and humans were not run on the complete set.
"""

from __future__ import annotations

SOURCE = ("MageBench (Zhang et al., github.com/microsoft/MageBench), Football Online column: Table 1 for the "
          "test-mini set, Table 4 for the complete set; mean summed shaped reward per episode (the code variant)")

SETS = {"mini": "test-mini (Table 1: 20 scenarios, 10 repeats)",
        "full": "complete set (Table 4: 108 scenarios, mean of 3 repeats)"}

SCORES: dict[str, dict[str, float]] = {
    "mini": {
        "idle": 2.53, "random": 17.33, "human": 54.68,
        "Phi-3.5-V-4.2B": 10.00, "MiniCPM-V2.6-8B": 2.10, "LLaVA-v1.5-13B": 18.13, "Llava-1.6-34B": 3.91,
        "Qwen2-vl-72B": 15.75, "NVLM-72B": 14.46, "InternVL2-76B-LLaMA3": 10.50,
        "Llama-3.2-90B-Vision-Instruct": 14.28, "Claude-3.5-Sonnet": 16.94, "Gemini-1.5-pro": 18.33,
        "GPT-4o": 21.20,
    },
    "full": {
        "idle": 2.36, "random": 16.64,
        "InternVL2-1B": -2.47, "InternVL2-2B": 2.00, "Qwen2-vl-2B": 0.64, "InternVL2-4B": -0.03,
        "Phi-3.5-V-4.2B": 11.04, "LLaVA-v1.5-7B": -0.80, "Llava-1.6-mistral-7B": -3.64, "Qwen2-vl-7B": 2.68,
        "MiniCPM-V2.6-8B": 3.61, "InternVL2-8B": 7.90, "Llama-3.2-11B-Vision-Instruct": 11.58,
        "LLaVA-v1.5-13B": 16.59, "InternVL2-26B": 15.62, "Llava-1.6-34B": 3.04, "InternVL2-40B": 12.99,
        "Qwen2-vl-72B": 15.02, "NVLM-72B": 18.43, "InternVL2-76B-LLaMA3": 8.04,
        "Llama-3.2-90B-Vision-Instruct": 8.32, "GPT-4o": 17.78, "Gemini-1.5-pro": 19.61,
    },
}


def paper_set(scenarios: list[str], mini: set[str], magebench: set[str]) -> str | None:
    """Which published set a run's scenarios compare with: ``mini`` when all are test-mini ones,
    ``full`` when all are MageBench's, None when any is not (a gfootball level)."""
    played = set(scenarios)
    if played and played <= mini:
        return "mini"
    if played and played <= magebench:
        return "full"
    return None
