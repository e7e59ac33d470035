"""The paper's per-level average scores (spec §5.3, Tables 6, 8 and 9), printed beside ours.

Random is V-MAGE's uniform random agent, Human its five players' average (round numbers, likely
a stopping point), GPT-4o the strongest model of the main table.
"""

from __future__ import annotations

PAPER_SCORES: dict[str, dict[int, dict[str, float]]] = {
    "pong": {
        1: {"random": 0.63, "human": 10.0, "gpt-4o": 0.51},
        2: {"random": 0.39, "human": 10.0, "gpt-4o": 0.39},
        3: {"random": 0.06, "human": 10.0, "gpt-4o": 0.19},
    },
    "flappybird": {
        1: {"random": 1.45, "human": 10.0, "gpt-4o": 3.30},
        2: {"random": 0.34, "human": 10.0, "gpt-4o": 0.71},
        3: {"random": 0.52, "human": 10.0, "gpt-4o": 0.57},
        4: {"random": 0.16, "human": 10.0, "gpt-4o": 1.33},
        5: {"random": 0.10, "human": 10.0, "gpt-4o": 1.74},
        6: {"random": 0.17, "human": 10.0, "gpt-4o": 1.88},
        7: {"random": 0.00, "human": 10.0, "gpt-4o": 0.60},
    },
    "race": {  # Table 5; levels 7-9 are its "Level 1-3 No History" rows; level 6 is not in the table
        1: {"random": 7.30, "human": 100.0, "gpt-4o": 99.99},
        2: {"random": 1.06, "human": 100.0, "gpt-4o": 67.68},
        3: {"random": 0.02, "human": 100.0, "gpt-4o": 48.94},
        4: {"random": 14.59, "human": 100.0, "gpt-4o": 22.92},
        5: {"random": 5.22, "human": 100.0, "gpt-4o": 16.67},
        7: {"random": 1.06, "human": 100.0, "gpt-4o": 97.87},
        8: {"random": 1.06, "human": 100.0, "gpt-4o": 39.57},
        9: {"random": 0.00, "human": 100.0, "gpt-4o": 14.59},
    },
    "tempestrun": {
        1: {"random": 385.72, "human": 2000.0, "gpt-4o": 466.25},
        2: {"random": 271.65, "human": 1500.0, "gpt-4o": 361.44},
        3: {"random": 190.71, "human": 1000.0, "gpt-4o": 213.73},
        4: {"random": 157.17, "human": 800.0, "gpt-4o": 177.60},
    },
    "supermario": {  # Table 7: its row "Level11" is taken as level 1 and "Level10" as level 10 (README)
        1: {"random": 86.50, "human": 800.0, "gpt-4o": 372.85},
        2: {"random": 94.83, "human": 800.0, "gpt-4o": 424.92},
        3: {"random": 53.19, "human": 1000.0, "gpt-4o": 802.99},
        4: {"random": 52.15, "human": 1400.0, "gpt-4o": 369.76},
        5: {"random": 380.13, "human": 800.0, "gpt-4o": 125.08},
        6: {"random": 472.78, "human": 800.0, "gpt-4o": 233.36},
        7: {"random": 268.74, "human": 800.0, "gpt-4o": 440.66},
        8: {"random": 68.79, "human": 900.0, "gpt-4o": 91.75},
        9: {"random": 329.19, "human": 1300.0, "gpt-4o": 693.56},
        10: {"random": 8.36, "human": 800.0, "gpt-4o": 18.77},
    },
}
