"""What BALROG published for TextWorld, printed beside our runs in summary.json.

The rows are the BALROG leaderboard's, per model, for its naive zero-shot agent (TextWorld has no
image, so no VLM column). BALROG plays pre-generated games it downloads; the games here are made by
the same generator with the same settings, so the numbers compare in kind, not game for game.
"""

SOURCE = ("BALROG leaderboard (balrogai.com): data.json of github.com/balrog-ai/experiments at commit 5e80b3c, "
          "naive zero-shot agent; per model: mean progression in percent (llm: text only, vlm: text and image), "
          "its standard error (_se) and the episodes behind it (_n)")

TEXTWORLD = {
    "Claude-3.5-Sonnet": {"llm": 42.059, "llm_se": 5.407, "llm_n": 60},
    "Gemini-1.5-Flash": {"llm": 0.0, "llm_se": 0.0, "llm_n": 60},
    "Llama-3.1-8B": {"llm": 6.078, "llm_se": 2.409, "llm_n": 30},
    "Llama-3.2-3B": {"llm": 3.529, "llm_se": 1.06, "llm_n": 30},
    "GPT-4o": {"llm": 39.31, "llm_se": 5.24, "llm_n": 60},
    "Gemini-1.5-Pro": {"llm": 0.0, "llm_se": 0.0, "llm_n": 60},
    "Llama-3.1-70B": {"llm": 15.0, "llm_se": 4.61, "llm_n": 60},
    "GPT-4o-mini": {"llm": 12.25, "llm_se": 3.55, "llm_n": 60},
    "Llama-3.2-90B": {"llm": 11.18, "llm_se": 2.98, "llm_n": 60},
    "Llama-3.2-11B": {"llm": 6.66, "llm_se": 2.17, "llm_n": 60},
    "Llama-3.2-1B": {"llm": 3.333, "llm_se": 0.906, "llm_n": 30},
}
