"""``launch elo RUN... --report OUT.html``: the ELO table as a report page, with each entrant's episodes.

The numbers are the ones ``launch elo`` prints (``rank()``'s result, formatted the same way), laid
out as report tables (kernel.sdk.pages) so the page looks like a run's report: the paper's Table 2
rows sit in the same table as ours, shaded, as every report sets published numbers beside its own.
Below the tables, each entrant's episodes are shown as the run report's frame strips; the layouts
the entrants share come first and in one order, so the strips of two entrants line up on the same
seed. This module only describes the page (V-MAGE's words and choices, as SDK data); ``launch``
draws it (kernel.tools.commands), so the pack never imports the report tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel.sdk.pages import Page, StripEpisode, Strips, Table
from nodes.judge.vmage_elo_paper import TABLE2, TABLE2_GAMES
from nodes.judge.vmage_runs import Entrant, Key, episode_keys

ABILITIES = ("Positioning", "Tracking", "Visual Grounding", "Timing")
STRIP_EPISODES = 6
STRIP_STEPS = 16


def _rating(value: float | None) -> str:
    """Ratings as ``launch elo`` prints them (whole points, as the paper does)."""
    return "–" if value is None else f"{value:.0f}"


def elo_table(result: dict[str, Any], paper: bool = True) -> Table:
    """Table 2's layout: per-game ELO, Avg. ELO, Avg. Ratio, with the pooled rating and episodes beside;
    the paper's rows below ours, shaded, over the union of both sets of games."""
    ours_games = list(result["per_game"])
    games = ours_games + [g for g in TABLE2_GAMES if paper and g not in ours_games]
    columns = ["entrant", "model", *(g.capitalize() for g in games), "Avg. ELO", "Pooled ± SD", "Avg. Ratio (%)",
               "episodes"]
    rows: list[list[Any]] = []
    for name, avg in result["avg_elo"].items():
        ratio = result["avg_ratio_pct"].get(name)
        rows.append([name, result["entrants"][name]["model"],
                     *(_rating(result["per_game"].get(g, {}).get(name)) for g in games), _rating(avg),
                     f"{result['pooled'][name]:.0f} ± {result['pooled_order_sd'][name]:.0f}",
                     "–" if ratio is None else f"{ratio:.1f}", result["entrants"][name]["episodes"]])
    first_paper = len(rows)
    if paper:
        for model, row in TABLE2.items():
            by_game = dict(zip(TABLE2_GAMES, row[:5]))
            rows.append([model, "paper, Table 2", *(_rating(by_game.get(g)) for g in games), _rating(row[5]), "–",
                         f"{row[6]:.1f}", "–"])
    p = result["protocol"]
    note = (f"K {p['k']:g}, start {p['initial']:g}, base {p['base']}/{p['scale']}; {p['matches_per_level']} matches "
            f"per level on the same (game, level, round), outcome on (score, valid rate); mean over "
            f"{p['permutations']:,} shuffles (seed {p['seed']}). Pooled: one pool of all games, ± its SD over "
            f"shuffles. The paper's pools held entrants its table does not list: its numbers are for scale only")
    return Table("ELO (ours first)", columns, rows, paper_rows=set(range(first_paper, len(rows))), note=note)


def levels_table(result: dict[str, Any]) -> Table:
    """Mean score per level, each entrant's beside the paper's Random and Human, with the matches played."""
    names = list(result["avg_elo"])
    rows = []
    for cell, row in result["levels"].items():
        ours, pr = row["ours"], row["paper"]
        rows.append([cell, result["matches"].get(cell, 0),
                     *(f"{ours[n]['score_mean']:.2f} (n={ours[n]['episodes']})" if n in ours else "–" for n in names),
                     *("–" if pr.get(x) is None else f"{pr[x]:.2f}" for x in ("random", "human"))])
    return Table("Mean score per level", ["level", "matches", *names, "Random", "Human"], rows,
                 paper={2 + len(names), 3 + len(names)})


def unit_table(result: dict[str, Any]) -> Table:
    """Table 33's layout: the share of an entrant's episodes above the random baseline's mean."""
    unit = result["unit_test"]
    if unit["baseline"] is None:
        return Table("Unit tests", ["", "value"], [["not computed", unit.get("note", "no random entrant")]])
    abilities = [a for a in ABILITIES if any(a in v for v in unit["per_ability"].values())]
    rows = [[n, *("–" if a not in unit["per_ability"][n] else f"{unit['per_ability'][n][a]:.2f}" for a in abilities),
             f"{unit['overall'][n]:.2f}"] for n in result["avg_elo"] if n in unit["overall"]]
    return Table("Unit tests: share of episodes above the random mean", ["entrant", *abilities, "all levels"], rows,
                 note=f"baseline: {', '.join(unit['baseline'])} (its own share is the reference)")


def anchoring_table(result: dict[str, Any]) -> Table | None:
    """Table 3's layout: the mean run of unchanged replies per game, in decisions / frames."""
    anchor = result["anchoring"]
    texts = anchor["avg_text_rounds"]
    if not anchor["rounds"] and not texts:
        return None
    games = sorted({g for v in anchor["rounds"].values() for g in v})
    rows = []
    for n in result["avg_elo"]:
        r, f = anchor["rounds"].get(n, {}), anchor["frames"].get(n, {})
        if not r and n not in texts:
            continue
        rows.append([n, *("–" if g not in r else f"{r[g]:.1f} / {f[g]:.0f}" for g in games),
                     f"{anchor['avg_rounds'][n]:.1f} / {anchor['avg_frames'][n]:.0f}" if r else "–",
                     *([f"{texts[n]:.1f}" if n in texts else "–"] if texts else [])])
    columns = ["entrant", *(g.capitalize() for g in games), "Avg.", *(["Avg. on the reply text"] if texts else [])]
    return Table("Anchoring: mean run of unchanged replies, decisions / frames", columns, rows,
                 note="the reply is the action that reached the game; Super Mario left out, as in the paper")


@dataclass(frozen=True)
class Shown:
    """One episode chosen for the strips: which run holds it, and where it was played."""

    run: Path
    episode: str
    key: Key


def chosen_episodes(entrants: Sequence[Entrant], limit: int) -> dict[str, list[Shown]]:
    """Per entrant, up to ``limit`` episodes: layouts played by the most entrants first, then by
    (game, level, round), so every entrant's strips show the same seeds in the same order."""
    where: dict[str, dict[Key, Shown]] = {}
    for ent in entrants:
        found: dict[Key, Shown] = {}
        for run in ent.runs:
            for eid, key in episode_keys(run).items():
                if key in ent.results:
                    found[key] = Shown(run, eid, key)
        where[ent.name] = found
    players: dict[Key, int] = {}
    for found in where.values():
        for key in found:
            players[key] = players.get(key, 0) + 1
    order = sorted(players, key=lambda k: (-players[k], k))
    return {name: [found[k] for k in order if k in found][:limit] for name, found in where.items()}


NO_STRIPS = ("no frames or step records to show: record the run (`launch run ... --record`, and for V-MAGE "
             "`--set env.frames=true`) to see its episodes here")
NO_FRAMES = "no frames recorded (the run's environment drew none: `--set env.frames=true` with `--record` keeps them)"


def strips(entrants: Sequence[Entrant], result: dict[str, Any], *, max_episodes: int = STRIP_EPISODES,
           max_steps: int = STRIP_STEPS) -> list[Strips]:
    """Each entrant's chosen episodes as a group of the run report's strips, best-rated entrant first."""
    chosen = chosen_episodes(entrants, max_episodes)
    by_name = {e.name: e for e in entrants}
    groups = []
    for name in [*result["avg_elo"], *(e.name for e in entrants if e.name not in result["avg_elo"])]:
        ent = by_name[name]
        shown = chosen[name]
        groups.append(Strips(
            f"{name} ({ent.model})",
            [StripEpisode(s.run, s.episode, f"{s.key[0]} level {s.key[1]}, round {s.key[2]}") for s in shown],
            subtitle=(f"{len(shown)} of its {len(ent.results)} compared episodes; the layouts the entrants share "
                      f"come first. Run folder{'s' if len(ent.runs) > 1 else ''}: "
                      f"{', '.join(str(r) for r in ent.runs)}"),
            max_steps=max_steps, no_strips=NO_STRIPS, no_frames=NO_FRAMES))
    return groups


def page(result: dict[str, Any], entrants: Sequence[Entrant], *, paper: bool = True,
         max_episodes: int = STRIP_EPISODES, max_steps: int = STRIP_STEPS) -> Page:
    """The page: the protocol as facts, the four tables, the notes, then each entrant's strips."""
    p = result["protocol"]
    facts = [("entrants", str(len(entrants))), ("games", ", ".join(result["per_game"])),
             ("matches", f"{sum(result['matches'].values())} over {len(result['matches'])} levels"),
             ("K / start", f"{p['k']:g} / {p['initial']:g}"), ("shuffles", f"{p['permutations']:,} (seed {p['seed']})"),
             ("runs", str(sum(len(e.runs) for e in entrants)))]
    tables = [elo_table(result, paper), levels_table(result), unit_table(result)]
    anchor = anchoring_table(result)
    if anchor is not None:
        tables.append(anchor)
    best = next(iter(result["avg_elo"].items()), None)
    headline = [] if best is None else [("best Avg. ELO", f"{best[0]}: {best[1]:.0f}")]
    return Page("V-MAGE ELO", facts=facts, headline=headline, sections=[("V-MAGE ELO", tables)],
                notes=list(result["notes"]),
                strips=strips(entrants, result, max_episodes=max_episodes, max_steps=max_steps),
                source=", ".join(str(r) for e in entrants for r in e.runs))
