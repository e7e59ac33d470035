"""What BALROG published for NetHack and MiniHack, printed beside our runs in summary.json.

The rows are the BALROG leaderboard's, per model, for its naive zero-shot agent: the numbers a user
compares a framebus run with, kept apart from ours so nobody mistakes one for the other. BALROG's
NetHack is NetHackChallenge-v0 (each game a fresh one); its MiniHack mean is over its MiniHack tasks.
"""

SOURCE = ("BALROG leaderboard (balrogai.com): data.json of github.com/balrog-ai/experiments at commit 5e80b3c, "
          "naive zero-shot agent; per model: mean progression in percent (llm: text only, vlm: text and image), "
          "its standard error (_se) and the episodes behind it (_n)")

NETHACK = {
    "Claude-3.5-Sonnet": {"llm": 0.582, "llm_se": 0.521, "llm_n": 5, "vlm": 1.155, "vlm_se": 0.424, "vlm_n": 5},
    "Gemini-1.5-Flash": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 5},
    "Llama-3.1-8B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5},
    "Llama-3.2-3B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5},
    "GPT-4o": {"llm": 0.37, "llm_se": 0.37, "llm_n": 5, "vlm": 0.37, "vlm_se": 0.37, "vlm_n": 5},
    "Gemini-1.5-Pro": {"llm": 0.37, "llm_se": 0.37, "llm_n": 5, "vlm": 0.484, "vlm_se": 0.484, "vlm_n": 5},
    "Llama-3.1-70B": {"llm": 0.35, "llm_se": 0.35, "llm_n": 5},
    "GPT-4o-mini": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 5},
    "Llama-3.2-90B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 5},
    "Llama-3.2-11B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 5},
    "Llama-3.2-1B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 5},
}

MINIHACK = {
    "Claude-3.5-Sonnet": {"llm": 15.0, "llm_se": 5.646, "llm_n": 40, "vlm": 22.5, "vlm_se": 6.603, "vlm_n": 40},
    "Gemini-1.5-Flash": {"llm": 5.0, "llm_se": 3.45, "llm_n": 40, "vlm": 2.5, "vlm_se": 2.47, "vlm_n": 40},
    "Llama-3.1-8B": {"llm": 5.0, "llm_se": 3.446, "llm_n": 40},
    "Llama-3.2-3B": {"llm": 2.5, "llm_se": 2.469, "llm_n": 40},
    "GPT-4o": {"llm": 10.0, "llm_se": 4.74, "llm_n": 40, "vlm": 5.0, "vlm_se": 3.44, "vlm_n": 40},
    "Gemini-1.5-Pro": {"llm": 5.0, "llm_se": 3.45, "llm_n": 40, "vlm": 5.0, "vlm_se": 3.44, "vlm_n": 40},
    "Llama-3.1-70B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 40},
    "GPT-4o-mini": {"llm": 10.0, "llm_se": 4.74, "llm_n": 40, "vlm": 2.5, "vlm_se": 2.47, "vlm_n": 40},
    "Llama-3.2-90B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 40, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 40},
    "Llama-3.2-11B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 40, "vlm": 0.0, "vlm_se": 0.0, "vlm_n": 40},
    "Llama-3.2-1B": {"llm": 5.0, "llm_se": 3.446, "llm_n": 40},
}
