"""What BALROG published for BabyAI and Crafter, printed beside a ``protocol: balrog`` run in summary.json.

The rows are the BALROG leaderboard's, per model, for its naive zero-shot agent. BALROG's BabyAI
tasks are five BabyAI-Text levels (goto, pickup, open, putnext, pick_up_seq_go_to) from its own
Minigrid fork; a framebus run names one MiniGrid/BabyAI id, so its number compares in kind.
"""

SOURCE = ("BALROG leaderboard (balrogai.com): data.json of github.com/balrog-ai/experiments at commit 5e80b3c, "
          "naive zero-shot agent; per model: mean progression in percent (llm: text only, vlm: text and image), "
          "its standard error (_se) and the episodes behind it (_n)")

BABYAI = {
    "Claude-3.5-Sonnet": {"llm": 52.0, "llm_se": 7.065, "llm_n": 50, "vlm": 22.0, "vlm_se": 5.858, "vlm_n": 50},
    "Gemini-1.5-Flash": {"llm": 25.6, "llm_se": 3.9, "llm_n": 125, "vlm": 43.2, "vlm_se": 4.43, "vlm_n": 125},
    "Llama-3.1-8B": {"llm": 30.0, "llm_se": 6.481, "llm_n": 50},
    "Llama-3.2-3B": {"llm": 10.0, "llm_se": 4.243, "llm_n": 50},
    "GPT-4o": {"llm": 77.6, "llm_se": 3.73, "llm_n": 125, "vlm": 62.0, "vlm_se": 4.34, "vlm_n": 125},
    "Gemini-1.5-Pro": {"llm": 58.4, "llm_se": 4.41, "llm_n": 125, "vlm": 58.4, "vlm_se": 4.41, "vlm_n": 125},
    "Llama-3.1-70B": {"llm": 73.2, "llm_se": 3.96, "llm_n": 125},
    "GPT-4o-mini": {"llm": 50.4, "llm_se": 4.47, "llm_n": 125, "vlm": 38.0, "vlm_se": 4.34, "vlm_n": 125},
    "Llama-3.2-90B": {"llm": 55.2, "llm_se": 4.45, "llm_n": 125, "vlm": 28.2, "vlm_se": 4.02, "vlm_n": 125},
    "Llama-3.2-11B": {"llm": 32.8, "llm_se": 4.19, "llm_n": 125, "vlm": 10.4, "vlm_se": 2.73, "vlm_n": 125},
    "Llama-3.2-1B": {"llm": 6.0, "llm_se": 3.359, "llm_n": 50},
}

CRAFTER = {
    "Claude-3.5-Sonnet": {"llm": 32.727, "llm_se": 3.201, "llm_n": 10, "vlm": 37.273, "vlm_se": 3.136, "vlm_n": 10},
    "Gemini-1.5-Flash": {"llm": 20.0, "llm_se": 0.74, "llm_n": 10, "vlm": 20.7, "vlm_se": 4.42, "vlm_n": 10},
    "Llama-3.1-8B": {"llm": 25.455, "llm_se": 3.227, "llm_n": 10},
    "Llama-3.2-3B": {"llm": 17.273, "llm_se": 2.787, "llm_n": 10},
    "GPT-4o": {"llm": 33.1, "llm_se": 2.32, "llm_n": 10, "vlm": 26.81, "vlm_se": 3.74, "vlm_n": 10},
    "Gemini-1.5-Pro": {"llm": 30.21, "llm_se": 2.86, "llm_n": 10, "vlm": 33.5, "vlm_se": 2.07, "vlm_n": 10},
    "Llama-3.1-70B": {"llm": 31.21, "llm_se": 2.68, "llm_n": 10},
    "GPT-4o-mini": {"llm": 15.9, "llm_se": 2.05, "llm_n": 10, "vlm": 19.906, "vlm_se": 3.13, "vlm_n": 10},
    "Llama-3.2-90B": {"llm": 0.0, "llm_se": 0.0, "llm_n": 10, "vlm": 9.99, "vlm_se": 1.13, "vlm_n": 10},
    "Llama-3.2-11B": {"llm": 26.19, "llm_se": 3.29, "llm_n": 10, "vlm": 23.63, "vlm_se": 1.48, "vlm_n": 10},
    "Llama-3.2-1B": {"llm": 12.727, "llm_se": 1.907, "llm_n": 10},
}
