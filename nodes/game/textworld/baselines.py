"""What BALROG published for TextWorld, printed beside our runs in summary.json.

The exact per-model table could not be read from here; what is recorded is what the paper's
summary states, with its source, so nobody mistakes it for a measured row of ours.
"""

PUBLISHED = {
    "metric": "mean progression, percent (score / max_score at the end, 100 for a won game)",
    "llm_zero_shot": "GPT-4o and Claude 3.5 Sonnet just over 40%, the other models below 20% (paper v1)",
    "source": "BALROG paper v1 (arXiv 2411.13543) as summarised at "
              "https://the-decoder.com/ai-models-stumble-in-complex-game-tests-scoring-low-across-the-board",
    "note": "BALROG plays pre-generated games it downloads; these games are generated here with the same "
            "generator and settings, so the numbers compare in kind, not game for game",
}
