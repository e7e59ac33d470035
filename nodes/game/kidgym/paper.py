"""The paper's published numbers, kept beside ours in every summary.

Transcribed from the KidGym paper (ICLR 2026) via the research report (/work/shared/specs/kidgym.md
§4): Table 2 (zero-shot success rates, 100 rounds per task and level, with the Human and Random
rows), Table 7 (chain-of-thought), Table 8 (in-context examples) and Table 6 (capability
scores). The tables are kept as text, one line per model and level, so they can be read against
the paper; they are parsed on import. Known errata are listed in ``ERRATA`` and not corrected.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")

TASK_ORDER: tuple[str, ...] = ("CL", "SE", "SO", "MA", "FI", "PU", "PL", "CO", "DMA", "MMA", "MDE", "MFI")
CAPABILITY_ORDER: tuple[str, ...] = ("Execution", "Memory", "Learning", "Planning", "Perception Reasoning")

Rates = dict[str, dict[str, tuple[float, float, float]]]  # model -> task -> (L1, L2, L3)

_ZERO_SHOT = """
o3 | 1 | 1.00 1.00 0.97 0.87 0.83 0.26 1.00 0.30 0.90 0.44 1.00 0.81
o3 | 2 | 0.98 1.00 0.95 0.42 0.52 0.11 0.98 0.26 0.47 0.18 1.00 0.50
o3 | 3 | 0.92 1.00 0.97 0.27 0.30 0.06 0.71 0.13 0.17 0.05 1.00 0.37
GPT-5 | 1 | 1.00 1.00 1.00 0.97 0.74 0.30 1.00 0.36 0.95 0.62 1.00 0.77
GPT-5 | 2 | 0.96 1.00 0.99 0.43 0.60 0.06 1.00 0.18 0.47 0.10 1.00 0.61
GPT-5 | 3 | 0.92 0.99 0.94 0.11 0.41 0.01 0.88 0.16 0.24 0.01 1.00 0.40
GPT-4o | 1 | 0.46 1.00 0.48 0.33 0.66 0.26 0.71 0.00 0.58 0.00 0.95 0.64
GPT-4o | 2 | 0.24 0.76 0.31 0.19 0.28 0.09 0.37 0.00 0.14 0.00 0.98 0.26
GPT-4o | 3 | 0.13 0.50 0.08 0.00 0.15 0.03 0.20 0.01 0.00 0.00 1.00 0.18
Gemini-2.5-Pro | 1 | 0.99 1.00 0.99 0.95 0.81 0.19 1.00 0.72 0.93 0.66 1.00 0.81
Gemini-2.5-Pro | 2 | 1.00 1.00 0.99 0.18 0.66 0.13 1.00 0.36 0.24 0.49 1.00 0.66
Gemini-2.5-Pro | 3 | 1.00 1.00 0.93 0.03 0.36 0.07 0.74 0.19 0.16 0.00 1.00 0.36
Gemini-2.5-Flash | 1 | 0.83 1.00 0.69 0.86 0.64 0.19 1.00 0.30 0.81 0.19 1.00 0.75
Gemini-2.5-Flash | 2 | 0.71 0.79 0.38 0.15 0.24 0.05 1.00 0.10 0.13 0.00 1.00 0.15
Gemini-2.5-Flash | 3 | 0.50 0.53 0.21 0.01 0.22 0.03 0.58 0.06 0.05 0.01 1.00 0.11
Claude-3.7-Sonnet | 1 | 0.98 0.97 0.85 0.64 0.57 0.22 0.97 0.54 0.60 0.00 0.98 0.43
Claude-3.7-Sonnet | 2 | 0.92 0.68 0.71 0.15 0.32 0.14 0.63 0.33 0.04 0.00 0.98 0.23
Claude-3.7-Sonnet | 3 | 0.81 0.51 0.37 0.05 0.18 0.01 0.44 0.27 0.01 0.00 0.99 0.10
QwenVL-2.5 (72B) | 1 | 0.48 0.98 0.68 0.42 0.41 0.29 0.62 0.00 0.65 0.12 0.96 0.38
QwenVL-2.5 (72B) | 2 | 0.29 0.84 0.28 0.18 0.24 0.08 0.27 0.00 0.17 0.00 0.93 0.18
QwenVL-2.5 (72B) | 3 | 0.01 0.65 0.09 0.03 0.09 0.04 0.15 0.00 0.00 0.00 0.92 0.08
InternVL-3 (78B) | 1 | 0.43 0.99 0.59 0.47 0.48 0.26 0.63 0.01 0.48 0.00 0.91 0.41
InternVL-3 (78B) | 2 | 0.20 0.48 0.29 0.03 0.22 0.10 0.15 0.01 0.11 0.00 0.83 0.13
InternVL-3 (78B) | 3 | 0.05 0.17 0.09 0.01 0.08 0.06 0.09 0.02 0.00 0.00 0.75 0.05
QwenVL-2.5 (32B) | 1 | 0.64 1.00 0.62 0.91 0.60 0.29 0.67 0.00 0.68 0.15 0.94 0.61
QwenVL-2.5 (32B) | 2 | 0.35 0.81 0.44 0.15 0.30 0.04 0.33 0.02 0.09 0.00 0.92 0.19
QwenVL-2.5 (32B) | 3 | 0.05 0.52 0.11 0.03 0.09 0.06 0.20 0.00 0.00 0.00 0.94 0.08
InternVL-3 (38B) | 1 | 0.45 0.88 0.46 0.85 0.58 0.28 0.43 0.00 0.38 0.01 0.85 0.57
InternVL-3 (38B) | 2 | 0.22 0.40 0.29 0.35 0.27 0.09 0.25 0.00 0.12 0.00 0.76 0.32
InternVL-3 (38B) | 3 | 0.24 0.21 0.17 0.03 0.12 0.03 0.18 0.03 0.02 0.00 0.65 0.08
QwenVL-2.5 (7B) | 1 | 0.23 0.79 0.42 0.00 0.34 0.24 0.21 0.00 0.24 0.00 0.25 0.31
QwenVL-2.5 (7B) | 2 | 0.07 0.31 0.20 0.00 0.16 0.07 0.10 0.00 0.04 0.00 0.20 0.11
QwenVL-2.5 (7B) | 3 | 0.01 0.16 0.07 0.00 0.07 0.05 0.11 0.00 0.01 0.00 0.18 0.05
InternVL-3 (8B) | 1 | 0.23 0.41 0.51 0.06 0.19 0.18 0.33 0.00 0.30 0.01 0.39 0.31
InternVL-3 (8B) | 2 | 0.05 0.11 0.26 0.02 0.13 0.09 0.19 0.01 0.02 0.00 0.33 0.14
InternVL-3 (8B) | 3 | 0.02 0.03 0.06 0.00 0.06 0.04 0.09 0.04 0.00 0.00 0.25 0.03
DeepSeekVL-2 | 1 | 0.18 0.47 0.51 0.34 0.33 0.24 0.25 0.12 0.26 0.03 0.34 0.27
DeepSeekVL-2 | 2 | 0.06 0.09 0.14 0.01 0.12 0.09 0.12 0.04 0.03 0.07 0.25 0.10
DeepSeekVL-2 | 3 | 0.01 0.03 0.04 0.00 0.04 0.04 0.12 0.06 0.01 0.08 0.17 0.04
Human | 1 | 0.98 1.00 1.00 1.00 1.00 1.00 1.00 1.00 1.00 0.97 1.00 1.00
Human | 2 | 0.95 1.00 0.97 0.98 1.00 1.00 1.00 1.00 1.00 0.95 1.00 1.00
Human | 3 | 0.93 1.00 0.95 0.97 1.00 1.00 0.95 1.00 1.00 0.92 1.00 1.00
Random | 1 | 0.24 0.25 0.50 0.38 0.25 0.25 0.25 0.15 0.25 0.05 0.25 0.25
Random | 2 | 0.04 0.07 0.08 0.16 0.08 0.08 0.13 0.05 0.17 0.00 0.17 0.08
Random | 3 | 0.02 0.02 0.04 0.12 0.04 0.04 0.13 0.03 0.13 0.00 0.13 0.04
"""

_COT = """
o3 | 1 | 1.00 1.00 0.97 0.95 0.81 0.24 1.00 0.25 0.92 0.47 0.99 0.81
o3 | 2 | 0.98 1.00 0.97 0.70 0.63 0.12 0.98 0.25 0.51 0.50 1.00 0.52
o3 | 3 | 0.92 1.00 0.89 0.73 0.31 0.03 0.81 0.12 0.20 0.71 1.00 0.35
GPT-4o | 1 | 0.95 1.00 0.83 0.80 0.58 0.25 0.95 0.05 0.68 0.16 0.97 0.64
GPT-4o | 2 | 0.96 0.92 0.59 0.31 0.37 0.02 0.38 0.03 0.10 0.01 1.00 0.27
GPT-4o | 3 | 0.24 0.82 0.26 0.23 0.12 0.03 0.24 0.04 0.02 0.34 0.99 0.15
Gemini-2.5-Flash | 1 | 0.86 1.00 0.84 0.83 0.70 0.24 1.00 0.37 0.61 0.28 1.00 0.83
Gemini-2.5-Flash | 2 | 0.62 0.84 0.43 0.15 0.32 0.05 0.98 0.14 0.26 0.03 1.00 0.18
Gemini-2.5-Flash | 3 | 0.40 0.53 0.27 0.04 0.17 0.06 0.67 0.10 0.09 0.01 1.00 0.10
Claude-3.7-Sonnet | 1 | 0.98 0.97 0.98 0.56 0.61 0.31 0.97 0.59 0.33 0.04 0.98 0.42
Claude-3.7-Sonnet | 2 | 0.83 0.81 0.84 0.44 0.32 0.05 0.81 0.43 0.05 0.00 0.97 0.23
Claude-3.7-Sonnet | 3 | 0.93 0.73 0.46 0.43 0.19 0.03 0.57 0.33 0.05 0.10 1.00 0.14
QwenVL-2.5 (72B) | 1 | 0.93 1.00 0.78 0.69 0.37 0.26 0.84 0.02 0.78 0.19 0.97 0.26
QwenVL-2.5 (72B) | 2 | 0.70 0.93 0.56 0.37 0.28 0.09 0.34 0.02 0.19 0.02 0.98 0.20
QwenVL-2.5 (72B) | 3 | 0.23 0.67 0.25 0.15 0.11 0.06 0.19 0.01 0.00 0.00 0.97 0.05
InternVL-3 (78B) | 1 | 0.86 1.00 0.68 0.76 0.55 0.30 0.84 0.10 0.58 0.13 0.94 0.54
InternVL-3 (78B) | 2 | 0.66 0.88 0.62 0.18 0.22 0.06 0.33 0.03 0.06 0.03 0.93 0.25
InternVL-3 (78B) | 3 | 0.30 0.62 0.44 0.07 0.18 0.01 0.14 0.01 0.01 0.01 0.84 0.08
QwenVL-2.5 (7B) | 1 | 0.31 0.86 0.50 0.00 0.25 0.27 0.35 0.00 0.27 0.00 0.79 0.26
QwenVL-2.5 (7B) | 2 | 0.09 0.37 0.26 0.07 0.07 0.08 0.11 0.02 0.04 0.03 0.81 0.08
QwenVL-2.5 (7B) | 3 | 0.04 0.18 0.09 0.04 0.04 0.05 0.07 0.02 0.02 0.02 0.77 0.05
InternVL-3 (8B) | 1 | 0.31 0.65 0.55 0.18 0.22 0.21 0.29 0.03 0.27 0.01 0.58 0.25
InternVL-3 (8B) | 2 | 0.08 0.12 0.42 0.03 0.14 0.10 0.14 0.02 0.08 0.00 0.54 0.14
InternVL-3 (8B) | 3 | 0.05 0.03 0.08 0.01 0.07 0.02 0.11 0.01 0.01 0.00 0.44 0.04
DeepSeekVL-2 | 1 | 0.26 0.46 0.48 0.40 0.33 0.27 0.28 0.16 0.18 0.03 0.34 0.29
DeepSeekVL-2 | 2 | 0.06 0.11 0.16 0.21 0.09 0.11 0.13 0.04 0.03 0.07 0.34 0.09
DeepSeekVL-2 | 3 | 0.02 0.02 0.04 0.13 0.06 0.04 0.12 0.04 0.00 0.07 0.27 0.04
"""

_ICL = """
o3 | 1 | 1.00 0.96 0.83 0.89 0.70 0.25 1.00 0.41 0.96 0.66 1.00 0.73
o3 | 2 | 0.98 1.00 0.88 0.77 0.55 0.06 0.99 0.16 0.59 0.63 1.00 0.56
o3 | 3 | 0.99 0.99 0.74 0.79 0.27 0.03 0.86 0.15 0.18 0.54 0.99 0.26
GPT-4o | 1 | 0.32 0.80 0.46 0.38 0.32 0.21 0.62 0.00 0.30 0.08 0.54 0.36
GPT-4o | 2 | 0.29 0.47 0.18 0.22 0.15 0.08 0.13 0.00 0.14 0.00 0.88 0.09
GPT-4o | 3 | 0.09 0.24 0.05 0.10 0.08 0.05 0.20 0.00 0.01 0.06 0.91 0.07
Gemini-2.5-Flash | 1 | 0.99 0.82 0.72 0.50 0.38 0.20 1.00 0.02 0.49 0.07 0.95 0.32
Gemini-2.5-Flash | 2 | 0.73 0.83 0.44 0.09 0.30 0.07 0.99 0.01 0.03 0.01 0.90 0.25
Gemini-2.5-Flash | 3 | 0.47 0.75 0.25 0.01 0.29 0.01 0.69 0.00 0.05 0.01 0.81 0.21
Claude-3.7-Sonnet | 1 | 0.69 0.47 0.52 0.31 0.42 0.27 0.61 0.09 0.27 0.08 0.73 0.30
Claude-3.7-Sonnet | 2 | 0.60 0.40 0.51 0.32 0.24 0.09 0.40 0.03 0.07 0.00 0.88 0.13
Claude-3.7-Sonnet | 3 | 0.31 0.39 0.35 0.34 0.13 0.05 0.28 0.01 0.01 0.00 0.92 0.09
QwenVL-2.5 (72B) | 1 | 0.30 0.38 0.63 0.00 0.21 0.28 0.54 0.00 0.23 0.19 0.97 0.25
QwenVL-2.5 (72B) | 2 | 0.01 0.23 0.18 0.00 0.06 0.09 0.25 0.00 0.03 0.02 0.98 0.06
QwenVL-2.5 (72B) | 3 | 0.04 0.08 0.05 0.00 0.10 0.05 0.19 0.00 0.00 0.00 0.97 0.08
InternVL-3 (78B) | 1 | 0.21 0.36 0.62 0.27 0.28 0.21 0.44 0.04 0.17 0.01 0.36 0.22
InternVL-3 (78B) | 2 | 0.08 0.29 0.34 0.03 0.10 0.06 0.14 0.01 0.05 0.00 0.34 0.11
InternVL-3 (78B) | 3 | 0.05 0.03 0.12 0.01 0.04 0.04 0.11 0.01 0.00 0.00 0.28 0.02
QwenVL-2.5 (7B) | 1 | 0.35 0.28 0.50 0.00 0.25 0.25 0.21 0.00 0.13 0.02 0.31 0.21
QwenVL-2.5 (7B) | 2 | 0.03 0.12 0.18 0.04 0.08 0.07 0.08 0.01 0.02 0.02 0.18 0.07
QwenVL-2.5 (7B) | 3 | 0.00 0.04 0.08 0.02 0.04 0.03 0.09 0.00 0.01 0.01 0.14 0.03
InternVL-3 (8B) | 1 | 0.32 0.30 0.64 0.35 0.16 0.22 0.26 0.08 0.14 0.03 0.24 0.19
InternVL-3 (8B) | 2 | 0.09 0.05 0.27 0.03 0.05 0.07 0.14 0.05 0.04 0.00 0.21 0.12
InternVL-3 (8B) | 3 | 0.06 0.03 0.10 0.01 0.04 0.05 0.10 0.03 0.00 0.00 0.12 0.09
DeepSeekVL-2 | 1 | 0.22 0.21 0.49 0.22 0.25 0.24 0.24 0.18 0.17 0.02 0.27 0.21
DeepSeekVL-2 | 2 | 0.06 0.07 0.15 0.16 0.09 0.09 0.12 0.06 0.02 0.03 0.15 0.08
DeepSeekVL-2 | 3 | 0.03 0.00 0.03 0.15 0.02 0.02 0.11 0.07 0.02 0.05 0.11 0.01
"""

_CAPABILITY = """
o3 | 95 67 80 30 43
GPT-5 | 95 67 98 30 46
GPT-4o | 23 49 43 7 21
Gemini-2.5-pro | 100 70 79 31 48
Gemini-2.5-flash | 63 50 59 15 31
Claude-3.7-sonnet | 88 46 57 17 31
QwenVL-2.5(72B) | 19 47 41 9 15
InternVL-3(78B) | 17 34 34 5 14
QwenVL-2.5(32B) | 26 47 44 11 18
InternVL-3(38B) | 28 34 34 11 17
QwenVL-2.5(7B) | 7 16 14 2 10
InternVL-3(8B) | 7 14 19 3 10
DeepSeekVL-2 | 6 13 15 7 11
Average | 38 40 57 10 20
Human | 96 99 99 97 100
"""

# The report's re-run of the released code's uniform-random player (spec §4.8), 500 episodes per
# cell where it could be run; None where it was not (a missing rule bank, or not simulated).
_RELEASED_CODE_RANDOM = """
CL | 0.270 0.066 0.024
SE | 0.272 0.078 0.022
SO | - 0.168 0.042
MA | 0.256 0.059 0.007
FI | - 0.090 -
PU | - 0.096 -
PL | 0.228 0.140 0.112
CO | 0.124 0.062 0.052
DMA | 0.224 0.144 0.034
MMA | 0.020 0.000 0.000
MDE | 0.230 0.150 0.120
MFI | 0.246 0.060 -
"""

# Closed forms for a uniform-random player where one exists (spec §2.2, §4.8): 1/4, (2/6)(1/5),
# (3/8)(2/7)(1/6) for SE; 1/n! for SO; k!/(4*8*...) for FI, PU, MFI; 1/4, 1/8, 1/8 for PL;
# 1/4, 1/6, 1/8 for MDE; (1/2)(1/2) for MA level 1 and (1/4)(1/4)(1/3) for MMA level 1.
ANALYTIC_RANDOM: dict[str, tuple[float | None, float | None, float | None]] = {
    "SE": (1 / 4, 2 / 6 * 1 / 5, 3 / 8 * 2 / 7 * 1 / 6),
    "SO": (1 / 2, 1 / 6, 1 / 24),
    "FI": (1 / 4, 1 / 12, 1 / 24),
    "PU": (1 / 4, 1 / 12, 1 / 24),
    "MFI": (1 / 4, 1 / 12, 1 / 24),
    "PL": (1 / 4, 1 / 8, 1 / 8),
    "MDE": (1 / 4, 1 / 6, 1 / 8),
    "MA": (1 / 4, None, None),
    "MMA": (1 / 48, None, None),
}

ERRATA: tuple[str, ...] = (
    "Table 2 Random SO-L2 is 0.08; a uniform-random player wins 1/3! = 0.17 (an arithmetic slip).",
    "Table 2 Random MA 0.38/0.16/0.12, DMA-L3 0.13 and MMA-L1 0.05 are well above what the released code's "
    "random player reaches (0.26/0.06/0.01, 0.03, 0.02); the paper's runs probably used other budgets.",
    "Table 2 Human MMA-L3 is printed 0.92, but 42/45 = 0.933.",
    "Table 6 GPT-5 Learning is printed 98; Table 2 gives 84.0. InternVL-3-78B Planning 5 (6.3) and Learning 34 (35.0) "
    "and the Human row (E 96 vs 94.6, P 97 vs 98.0) also disagree; the Average row is not the model mean.",
)


def _parse_rates(text: str) -> Rates:
    out: Rates = {}
    for line in text.strip().splitlines():
        model, level, nums = (part.strip() for part in line.split("|"))
        values = [float(v) for v in nums.split()]
        row = out.setdefault(model, {t: (0.0, 0.0, 0.0) for t in TASK_ORDER})
        for task, value in zip(TASK_ORDER, values):
            levels = list(row[task])
            levels[int(level) - 1] = value
            row[task] = (levels[0], levels[1], levels[2])
    return out


def _parse_capability(text: str) -> dict[str, dict[str, float]]:
    out = {}
    for line in text.strip().splitlines():
        model, nums = (part.strip() for part in line.split("|"))
        out[model] = dict(zip(CAPABILITY_ORDER, (float(v) for v in nums.split())))
    return out


def _parse_levels(text: str) -> dict[str, tuple[float | None, float | None, float | None]]:
    out = {}
    for line in text.strip().splitlines():
        task, nums = (part.strip() for part in line.split("|"))
        a, b, c = (None if v == "-" else float(v) for v in nums.split())
        out[task] = (a, b, c)
    return out


ZERO_SHOT: Rates = _parse_rates(_ZERO_SHOT)
COT: Rates = _parse_rates(_COT)
ICL: Rates = _parse_rates(_ICL)
CAPABILITY: dict[str, dict[str, float]] = _parse_capability(_CAPABILITY)
RANDOM: dict[str, tuple[float, float, float]] = ZERO_SHOT["Random"]
HUMAN: dict[str, tuple[float, float, float]] = ZERO_SHOT["Human"]
RELEASED_CODE_RANDOM = _parse_levels(_RELEASED_CODE_RANDOM)
MODES: dict[str, Rates] = {"zero-shot": ZERO_SHOT, "cot": COT, "icl": ICL}


def find_model(table: dict[str, T], name: str) -> T | None:
    """A table's row for a model, forgiving case and spacing ("gpt-4o", "QwenVL-2.5(72B)")."""
    key = "".join(name.lower().split())
    return next((row for model, row in table.items() if "".join(model.lower().split()) == key), None)


def paper_rate(model: str, task: str, level: int, mode: str = "zero-shot") -> float | None:
    """A model's published success rate for one cell, or None if the paper has no such number."""
    row = find_model(MODES.get(mode.lower(), {}), model)
    return None if row is None else row[task][level - 1]
