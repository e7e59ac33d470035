"""What BALROG published for NetHack, printed beside our runs in summary.json.

BALROG reports the mean progression in percent per model (paper, arXiv 2411.13543, and its
leaderboard). The exact per-model table could not be read from here; what is recorded is what the
paper's summary states, with its source, so nobody mistakes it for a measured row of ours.
"""

PUBLISHED = {
    "metric": "mean progression, percent (BALROG: highest of the dungeon-level and experience-level values reached)",
    "llm_zero_shot": "no model above 1.5% (GPT-4o, Claude 3.5 Sonnet, Llama 3.x, Gemini 1.5 in the paper's v1)",
    "source": "BALROG paper v1 (arXiv 2411.13543) as summarised at "
              "https://the-decoder.com/ai-models-stumble-in-complex-game-tests-scoring-low-across-the-board",
    "best_llm_upper_bound_percent": 1.5,
}

PUBLISHED_MINIHACK = {
    "metric": "success rate, percent (the goal reached)",
    "llm_zero_shot": "all models failed the paper's MiniHack combat and exploration tasks (paper v1 summary)",
    "source": PUBLISHED["source"],
}
