"""VisualWebArena's published success rates, printed beside a run's so a reader can place it.

Koh et al., "VisualWebArena: Evaluating Multimodal Agents on Realistic Visually Grounded Web Tasks"
(CMU, ACL 2024): Table 3 (baseline LLM and VLM agents on the 910 tasks; Classifieds 234, Reddit
210, Shopping 466 tasks), Table 5 (Appendix B, later models) and Figure 6 (success rate by action
(reasoning) difficulty x visual difficulty) for the three agents it shows. Numbers are the printed
percentages, as read in /work/shared/specs/visualwebarena.md §5.1, §5.2 and §5.5; the human row was
measured on a 230-task subset. A row's name is ``<LLM backbone>[ + <captioner>] / <inputs>``.
"""

from __future__ import annotations

SOURCE = ("VisualWebArena (Koh et al., 2024): Table 3 (baselines), Table 5 (later models), Figure 6 "
          "(reasoning x visual difficulty); success rates in % as printed")

SITES = ("classifieds", "reddit", "shopping")
"""The paper's three sites, in its column order; ``overall`` is the count-weighted mean of them."""

# name -> (table, classifieds, reddit, shopping, overall), in %
TABLE: dict[str, tuple[str, float, float, float, float]] = {
    "LLaMA-2-70B / Acc. Tree": ("Table 3", 0.43, 1.43, 1.29, 1.10),
    "Mixtral-8x7B / Acc. Tree": ("Table 3", 1.71, 2.86, 1.29, 1.76),
    "Gemini-Pro / Acc. Tree": ("Table 3", 0.85, 0.95, 3.43, 2.20),
    "GPT-3.5 / Acc. Tree": ("Table 3", 0.43, 0.95, 3.65, 2.20),
    "GPT-4 / Acc. Tree": ("Table 3", 5.56, 4.76, 9.23, 7.25),
    "LLaMA-2-70B + BLIP-2-T5XL / Acc. Tree + Caps": ("Table 3", 0.00, 0.95, 0.86, 0.66),
    "Mixtral-8x7B + BLIP-2-T5XL / Acc. Tree + Caps": ("Table 3", 1.28, 0.48, 2.79, 1.87),
    "GPT-3.5 + LLaVA-7B / Acc. Tree + Caps": ("Table 3", 1.28, 1.43, 4.08, 2.75),
    "GPT-3.5 + BLIP-2-T5XL / Acc. Tree + Caps": ("Table 3", 0.85, 1.43, 4.72, 2.97),
    "Gemini-Pro + BLIP-2-T5XL / Acc. Tree + Caps": ("Table 3", 1.71, 1.43, 6.01, 3.85),
    "GPT-4 + BLIP-2-T5XL / Acc. Tree + Caps": ("Table 3", 8.55, 8.57, 16.74, 12.75),
    "IDEFICS-80B-Instruct / Image + Caps + Acc. Tree": ("Table 3", 0.43, 0.95, 0.86, 0.77),
    "CogVLM / Image + Caps + Acc. Tree": ("Table 3", 0.00, 0.48, 0.43, 0.33),
    "Gemini-Pro / Image + Caps + Acc. Tree": ("Table 3", 3.42, 4.29, 8.15, 6.04),
    "GPT-4V / Image + Caps + Acc. Tree": ("Table 3", 8.12, 12.38, 19.74, 15.05),
    "IDEFICS-80B-Instruct / Image + Caps + SoM": ("Table 3", 0.85, 0.95, 1.07, 0.99),
    "CogVLM / Image + Caps + SoM": ("Table 3", 0.00, 0.48, 0.43, 0.33),
    "Gemini-Pro / Image + Caps + SoM": ("Table 3", 3.42, 3.81, 7.73, 5.71),
    "GPT-4V / Image + Caps + SoM": ("Table 3", 9.83, 17.14, 19.31, 16.37),
    "Human / Webpage": ("Table 3", 91.07, 87.10, 88.39, 88.70),
    "Llama-3-70B-Instruct + captions / Acc. Tree + Caps": ("Table 5", 7.69, 5.24, 12.88, 9.78),
    "Gemini-Flash-1.5 / Image + Caps + SoM": ("Table 5", 3.85, 4.76, 8.80, 6.59),
    "Gemini-Pro-1.5 / Image + Caps + SoM": ("Table 5", 5.98, 12.86, 14.59, 11.98),
    "GPT-4o / Image + Caps + SoM": ("Table 5", 20.51, 16.67, 20.82, 19.78),
}

LEVELS = ("easy", "medium", "hard", "overall")

# Figure 6: name -> {reasoning level: (visual easy, medium, hard, overall)}, in %
DIFFICULTY: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "GPT-4V / Image + Caps + SoM": {
        "easy": (30.1, 20.5, 26.3, 25.8), "medium": (15.2, 11.3, 11.7, 12.9), "hard": (14.1, 10.4, 8.9, 10.5),
        "overall": (21.4, 14.3, 12.4, 16.4)},
    "GPT-4 / Acc. Tree": {
        "easy": (18.9, 11.1, 10.5, 14.8), "medium": (1.6, 6.1, 7.8, 4.7), "hard": (1.6, 4.2, 1.5, 2.4),
        "overall": (9.0, 7.3, 4.8, 7.3)},
    "GPT-4 + BLIP-2-T5XL / Acc. Tree + Caps": {
        "easy": (23.1, 18.8, 13.2, 20.1), "medium": (14.4, 9.6, 5.2, 10.4), "hard": (7.8, 7.3, 8.1, 7.8),
        "overall": (16.9, 12.2, 8.0, 12.7)},
}

HUMAN = "Human / Webpage"


def check_model(name: str) -> str:
    """``name`` if it is a row of the tables, else ValueError listing the rows."""
    if name not in TABLE:
        raise ValueError(f"paper_model {name!r} is not a row of VWA's Tables 3/5; allowed: {', '.join(TABLE)}")
    return name


def site_rate(name: str, site: str) -> float | None:
    """The published success rate (a fraction) of row ``name`` on ``site`` (or ``overall``)."""
    row = TABLE.get(name)
    columns = (*SITES, "overall")
    if row is None or site not in columns:
        return None
    return round(row[1 + columns.index(site)] / 100, 6)


def difficulty_rate(name: str, reasoning: str, visual: str) -> float | None:
    """Figure 6's success rate (a fraction) for a reasoning x visual cell, where the figure has the row."""
    grid = DIFFICULTY.get(name, {}).get(reasoning)
    if grid is None or visual not in LEVELS:
        return None
    return round(grid[LEVELS.index(visual)] / 100, 6)


def table() -> dict[str, dict[str, float | str]]:
    """Every published row as a fraction per site, with the table it comes from."""
    return {name: {"source": src, **{col: round(v / 100, 6) for col, v in zip((*SITES, "overall"), values, strict=True)}}
            for name, (src, *values) in TABLE.items()}
