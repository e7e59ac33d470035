"""V-MAGE's ELO over any set of finished runs (spec §4, the paper's Appendix D), as a pack-side CLI.

    launch elo RUN_DIR [RUN_DIR ...] [--json] [--name RUN=LABEL] [--out FILE]
               [--report OUT.html [--screenshot PNG]]   (the tables and each entrant's frame strips)
    python -m nodes.judge.vmage_elo ...   (the tables or JSON, without the entry point installed)

V-MAGE ships no ELO code, so this follows the paper's description. Each run is one entrant (named by
its run folder, or ``--name``; the model it ran is shown beside); runs are paired by (game, level, round), the round being the seed,
so two models meet on the same layout. Per level, N = 100 matches: each draws a random pair of
distinct entrants (eq. 1) and compares the pair's episodes of one shared round, f = (score,
valid_rate) lexicographically (eqs. 2-3). Ratings start at 1500 and move by the classical update
with K = 32 and base 10 / scale 400 (eqs. 4-5). A sequential Elo pass depends on the order of its
matches, so the rating is the mean over T = 10^4 random shuffles of the pool, each a full pass from
1500 (eqs. 6-7). Per-game pools give the Table 2 columns, Avg. ELO is their mean (Table 2), and one
pool of every game's matches gives the pooled rating (eq. 6 literally, Table 14's "Average").
The same runs give Avg. Ratio, the unit-test and the anchoring metrics (nodes.judge.vmage_metrics).

The shuffles are vectorised: all permutations of a chunk advance through the matches together, one
numpy step per match, which keeps the full V-MAGE pool (33 levels x 100 matches x 10^4 shuffles)
to seconds. Every random draw comes from ``--seed``, so the same runs always give the same table,
whatever order they are named in.

The --report page is described here as SDK data (nodes.judge.vmage_elo_report, kernel.sdk.pages)
and drawn by ``launch`` (kernel.tools.commands): the handler returns a ``PageFile`` rather than
importing the report tools, so ``python -m`` has no page.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

import numpy as np

from kernel.sdk.pages import PageFile
from nodes.game.vmage.paper import PAPER_SCORES
from nodes.judge.vmage_elo_paper import TABLE2, TABLE2_GAMES, table2_json
from nodes.judge.vmage_metrics import anchoring, unit_tests
from nodes.judge.vmage_runs import EloError, Entrant, Result, load_entrants, parse_names

K = 32.0
"""Appendix D: "K is a constant ... (typically set to 32)"; the paper states no other value."""
INITIAL = 1500.0
ROUNDS = 100
"""Matches per level: "100 evaluation rounds for each game level"."""
PERMUTATIONS = 10_000
"""T = 10^4 independent shuffles of the pool."""
SEED = 0
_LN10_400 = math.log(10.0) / 400.0


def expected(ra: Any, rb: Any) -> Any:
    """E_A = 1 / (1 + 10^((R_B - R_A)/400)) (eq. 4), for floats or arrays."""
    return 1.0 / (1.0 + np.exp((np.asarray(rb, dtype=float) - ra) * _LN10_400))


def update(ra: float, rb: float, sa: float, k: float = K) -> tuple[float, float]:
    """One match (eq. 5). E_B = 1 - E_A and S_B = 1 - S_A, so B moves by exactly what A loses: the
    pool's mean stays at the initial rating, in floating point too."""
    delta = k * (sa - float(expected(ra, rb)))
    return ra + delta, rb - delta


def outcome(fa: Result, fb: Result) -> float:
    """S_A (eq. 3): f(A) > f(B) on (score, valid_rate) compared lexicographically wins, equal draws
    (spec §4 point 1: the valid rate only breaks ties of score)."""
    ka, kb = (fa.score, fa.valid_rate), (fb.score, fb.valid_rate)
    return 1.0 if ka > kb else 0.0 if ka < kb else 0.5


@dataclass(frozen=True)
class Pool:
    """Matches as parallel arrays: entrant indices ``a`` and ``b``, A's result ``s`` (B's is 1 - s),
    and where each was played (game, level, round)."""

    a: np.ndarray
    b: np.ndarray
    s: np.ndarray
    game: np.ndarray
    level: np.ndarray
    round: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    def where(self, mask: np.ndarray) -> Pool:
        return Pool(self.a[mask], self.b[mask], self.s[mask], self.game[mask], self.level[mask], self.round[mask])


def build_pool(entrants: Sequence[Entrant], rounds: int = ROUNDS, seed: int = SEED) -> tuple[Pool, list[str]]:
    """The match pool (eq. 1-3) and notes on levels that could not be played.

    Per (game, level), from its own random stream (so adding a game leaves the others' matches
    as they were): ``rounds`` matches, match t between a pair drawn uniformly
    from the distinct pairs that share a round of that level, comparing their episodes of the
    pair's shared round number t mod (shared rounds) (the spec's reference cycles through episodes
    the same way; here only through layouts both played, so a pair never meets on different seeds).
    """
    levels = sorted({(g, lv) for e in entrants for (g, lv, _) in e.results})
    rows: list[tuple[int, int, float, str, int, int]] = []
    notes: list[str] = []
    for g, lv in levels:
        rounds_of = [sorted(r for (gg, ll, r) in e.results if (gg, ll) == (g, lv)) for e in entrants]
        pairs = []
        for i in range(len(entrants)):
            for j in range(i + 1, len(entrants)):
                shared = sorted(set(rounds_of[i]) & set(rounds_of[j]))
                if shared:
                    pairs.append((i, j, shared))
        if not pairs:
            who = [e.name for e, rs in zip(entrants, rounds_of) if rs]
            notes.append(f"{g} level {lv}: no two entrants played a common round ({', '.join(who)}); no matches")
            continue
        rng = np.random.default_rng([seed, 0, zlib.crc32(f"{g}/{lv}".encode())])  # a level's own draws
        for t, p in enumerate(rng.integers(len(pairs), size=rounds)):
            i, j, shared = pairs[p]
            r = shared[t % len(shared)]
            s = outcome(entrants[i].results[(g, lv, r)], entrants[j].results[(g, lv, r)])
            rows.append((i, j, s, g, lv, r))
    if not rows:
        raise EloError("the runs share no (game, level, round): no two of them played the same layout")
    a, b, s, game, level, rnd = zip(*rows)
    return Pool(np.array(a, dtype=np.intp), np.array(b, dtype=np.intp), np.array(s, dtype=float),
                np.array(game), np.array(level, dtype=int), np.array(rnd, dtype=int)), notes


def elo_passes(pool: Pool, n_entrants: int, orders: np.ndarray, k: float = K,
               initial: float = INITIAL) -> np.ndarray:
    """Ratings after one full sequential pass per row of ``orders`` (each a permutation of the
    pool's match indices), shape (passes, entrants)."""
    sets = np.zeros((1, len(pool)), dtype=np.intp)
    return _sweep(pool, n_entrants, orders, sets, 1, k, initial)[:, 0, :]


def _sweep(pool: Pool, n_entrants: int, orders: np.ndarray, sets: np.ndarray, n_sets: int, k: float,
           initial: float) -> np.ndarray:
    """The passes of ``orders`` advanced together, one numpy step per match position: step j plays
    match orders[p, j] of every pass p at once. ``sets`` (rows, matches) says which rating sets each
    match updates (one row per set it belongs to), so the pooled and the per-game pools ride on one
    shuffle: the order a uniform permutation of the pool induces on one game's matches is itself a
    uniform permutation of them. Returns ratings of shape (passes, sets, entrants)."""
    orders = np.asarray(orders)
    passes, n = orders.shape
    if n != len(pool):
        raise ValueError(f"orders have {n} columns for a pool of {len(pool)} matches")
    stride = n_sets * n_entrants
    flat = np.full(passes * stride, float(initial))
    base = np.arange(passes, dtype=np.intp) * stride
    cols = np.ascontiguousarray(orders.T)  # (matches, passes): row j is step j of every pass
    sa = pool.s[cols]
    slots = [(sets[row] * n_entrants + pool.a, sets[row] * n_entrants + pool.b) for row in range(len(sets))]
    for j in range(n):
        m = cols[j]
        s = sa[j]
        for slot_a, slot_b in slots:
            xa = slot_a[m] + base
            xb = slot_b[m] + base
            ra, rb = flat[xa], flat[xb]
            delta = k * (s - 1.0 / (1.0 + np.exp((rb - ra) * _LN10_400)))  # K (S_A - E_A), eqs. 4-5
            flat[xa] = ra + delta  # a != b, and each pass owns its slots: no index repeats in a step
            flat[xb] = rb - delta
    return flat.reshape(passes, n_sets, n_entrants)


def stabilized(pool: Pool, n_entrants: int, permutations: int = PERMUTATIONS, seed: int = SEED,
               k: float = K, initial: float = INITIAL, sets: np.ndarray | None = None, n_sets: int = 1,
               chunk_cells: int = 8_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over ``permutations`` random shuffles of the pool (eq. 7) of each
    entrant's rating in each rating set, shape (sets, entrants); with no ``sets``, one set of all
    matches. Chunks bound the memory (chunk_cells = passes x matches held at once)."""
    n = len(pool)
    if sets is None:
        sets, n_sets = np.zeros((1, n), dtype=np.intp), 1
    rng = np.random.default_rng([seed, 1])
    total = np.zeros((n_sets, n_entrants))
    total_sq = np.zeros((n_sets, n_entrants))
    per_chunk = max(1, min(permutations, chunk_cells // max(n, 1)))
    done = 0
    while done < permutations:
        size = min(per_chunk, permutations - done)
        orders = np.empty((size, n), dtype=np.intp)
        for p in range(size):
            orders[p] = rng.permutation(n)
        r = _sweep(pool, n_entrants, orders, sets, n_sets, k, initial) - initial  # about the start: no cancellation
        total += r.sum(axis=0)
        total_sq += (r * r).sum(axis=0)
        done += size
    mean = total / permutations
    var = np.maximum(total_sq / permutations - mean * mean, 0.0)
    return mean + initial, np.sqrt(var)


def human_ratio(ent: Entrant) -> dict[str, float]:
    """Per game, the mean over levels of (the entrant's mean score / the paper's human score); the
    games the paper gives no human score for are left out (spec §4 point 7, §8.10)."""
    per_level: dict[tuple[str, int], list[float]] = {}
    for (g, lv, _), res in ent.results.items():
        per_level.setdefault((g, lv), []).append(res.score)
    by_game: dict[str, list[float]] = {}
    for (g, lv), scores in per_level.items():
        human = PAPER_SCORES.get(g, {}).get(lv, {}).get("human")
        if human:
            by_game.setdefault(g, []).append(float(np.mean(scores)) / human)
    return {g: float(np.mean(v)) for g, v in sorted(by_game.items())}


def rank(entrants: Sequence[Entrant], rounds: int = ROUNDS, permutations: int = PERMUTATIONS, seed: int = SEED,
         k: float = K, initial: float = INITIAL) -> dict[str, Any]:
    """The whole table as one JSON-ready object: per-game, average and pooled ratings, the spread of
    the pooled rating over shuffles, Avg. Ratio, per-level means and the paper's Table 2."""
    names = [e.name for e in entrants]
    pool, notes = build_pool(entrants, rounds, seed)
    games = sorted(set(pool.game.tolist()))
    game_set = np.array([1 + games.index(g) for g in pool.game.tolist()], dtype=np.intp)
    sets = np.stack([np.zeros(len(pool), dtype=np.intp), game_set])  # set 0 pooled, 1 + g per game
    means, spreads = stabilized(pool, len(names), permutations, seed, k, initial, sets, 1 + len(games))
    per_game: dict[str, dict[str, float]] = {}
    for gi, g in enumerate(games):
        mask = pool.game == g
        playing = set(pool.a[mask].tolist()) | set(pool.b[mask].tolist())
        per_game[g] = {names[i]: float(means[1 + gi, i]) for i in sorted(playing)}
    mean, spread = means[0], spreads[0]
    playing = sorted(set(pool.a.tolist()) | set(pool.b.tolist()))
    avg = {n: float(np.mean([per_game[g][n] for g in per_game if n in per_game[g]])) for n in names
           if any(n in per_game[g] for g in per_game)}
    for n in names:
        if n not in avg:
            notes.append(f"{n}: drew no match (too few --rounds for the pairs that share rounds); not ranked")
    for n in avg:
        missing = [g for g in games if n not in per_game[g]]
        if missing:
            notes.append(f"{n}: Avg. ELO is over its games only; it has no matches in {', '.join(missing)}")
    for e in entrants:
        if e.cut:
            notes.append(f"{e.name}: {e.cut} episode(s) left out, cut short by the run rather than ended by the game")
        if len(e.clocks) > 1:
            notes.append(f"{e.name}: episodes played under different clocks ({', '.join(sorted(e.clocks))})")
    clocks = {c for e in entrants for c in e.clocks}
    if len(clocks) > 1:
        notes.append(f"entrants played under different clocks ({', '.join(sorted(clocks))}): lockstep is V-MAGE's")
    anchor = anchoring(entrants)
    for n, count in anchor["episodes_without_reply_runs"].items():
        notes.append(f"{n}: {count} episode(s) judged without reply runs (an older judge.vmage): not in anchoring")
    ratios = {e.name: human_ratio(e) for e in entrants}
    matches = {f"{g}/{lv}": int(((pool.game == g) & (pool.level == lv)).sum())
               for g, lv in sorted(set(zip(pool.game.tolist(), pool.level.tolist())))}
    return {
        "avg_elo": dict(sorted(avg.items(), key=lambda kv: -kv[1])),
        "per_game": per_game,
        "pooled": {names[i]: float(mean[i]) for i in playing},
        "pooled_order_sd": {names[i]: float(spread[i]) for i in playing},
        "avg_ratio_pct": {n: (100 * float(np.mean(list(r.values()))) if r else None) for n, r in ratios.items()},
        "per_game_ratio": ratios,
        "entrants": {e.name: {"model": e.model, "random": e.is_random, "runs": [str(p) for p in e.runs],
                              "episodes": len(e.results), "clocks": sorted(e.clocks)} for e in entrants},
        "unit_test": unit_tests(entrants),
        "anchoring": anchor,
        "levels": _levels(entrants),
        "matches": matches,
        "protocol": {"k": k, "initial": initial, "base": 10, "scale": 400, "matches_per_level": rounds,
                     "permutations": permutations, "seed": seed, "outcome": "(score, valid_rate) lexicographic",
                     "pairing": "same (game, level, round): the same seed and layout",
                     "order": "mean over the permutations of a full sequential pass from the initial rating"},
        "notes": notes,
        "paper_table2": table2_json(),
    }


def _levels(entrants: Sequence[Entrant]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    cells = sorted({(g, lv) for e in entrants for (g, lv, _) in e.results})
    for g, lv in cells:
        row: dict[str, Any] = {}
        for e in entrants:
            res = [v for (gg, ll, _), v in e.results.items() if (gg, ll) == (g, lv)]
            if res:
                row[e.name] = {"episodes": len(res), "score_mean": float(np.mean([x.score for x in res])),
                               "valid_rate_mean": float(np.mean([x.valid_rate for x in res]))}
        out[f"{g}/{lv}"] = {"ours": row, "paper": dict(PAPER_SCORES.get(g, {}).get(lv, {}))}
    return out


def print_table(result: dict[str, Any], out: TextIO, paper: bool = True) -> None:
    """Our table in the paper's Table 2 layout (per-game ELO, Avg. ELO, Avg. Ratio), the pooled
    rating beside it, then the paper's own Table 2 for scale."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, width=160, force_terminal=False, color_system=None if out is not sys.stdout else "auto")
    games = list(result["per_game"])
    p = result["protocol"]
    table = Table(title="V-MAGE ELO (ours)", caption=(
        f"K {p['k']:g}, start {p['initial']:g}, base {p['base']}/{p['scale']}; {p['matches_per_level']} matches per "
        f"level, pairs on the same (game, level, round), outcome on (score, valid rate); mean over "
        f"{p['permutations']:,} shuffles (seed {p['seed']}). Pooled = one pool of all games; ± its SD over shuffles."))
    table.add_column("Entrant")
    table.add_column("Model")
    for g in games:
        table.add_column(g.capitalize(), justify="right")
    for col in ("Avg. ELO", "Pooled", "Avg. Ratio (%)", "Episodes"):
        table.add_column(col, justify="right")
    for name, avg in result["avg_elo"].items():
        ratio = result["avg_ratio_pct"].get(name)
        table.add_row(name, result["entrants"][name]["model"], *[f"{result['per_game'][g][name]:.0f}" if name in result["per_game"][g] else "-"
                              for g in games],
                      f"{avg:.0f}", f"{result['pooled'][name]:.0f} ± {result['pooled_order_sd'][name]:.0f}",
                      "-" if ratio is None else f"{ratio:.1f}", str(result["entrants"][name]["episodes"]))
    console.print(table)
    levels = Table(title="Mean score per level (ours, then the paper's Random / Human)")
    levels.add_column("Level")
    names = list(result["avg_elo"])
    for n in names:
        levels.add_column(n, justify="right")
    levels.add_column("paper Random / Human", justify="right")
    for cell, row in result["levels"].items():
        pr = row["paper"]
        levels.add_row(cell, *[f"{row['ours'][n]['score_mean']:.2f} (n={row['ours'][n]['episodes']})"
                               if n in row["ours"] else "-" for n in names],
                       " / ".join("-" if pr.get(x) is None else f"{pr[x]:.2f}" for x in ("random", "human")))
    console.print(levels)
    _print_unit_and_anchoring(result, console)
    for note in result["notes"]:
        console.print(f"note: {note}")
    if paper:
        t2 = Table(title="The paper's Table 2 (its own pool, which held entrants it does not list: for scale only)")
        t2.add_column("Model")
        for g in TABLE2_GAMES:
            t2.add_column(g.capitalize(), justify="right")
        t2.add_column("Avg. ELO", justify="right")
        t2.add_column("Avg. Ratio (%)", justify="right")
        for model, row in TABLE2.items():
            t2.add_row(model, *[str(x) for x in row[:6]], f"{row[6]:.1f}")
        console.print(t2)


def _print_unit_and_anchoring(result: dict[str, Any], console: Any) -> None:
    """Table 33's layout (share of episodes above the random mean, per ability and overall) and
    Table 3's (mean run of unchanged replies per game, in decisions and frames)."""
    from rich.table import Table

    names = list(result["avg_elo"])
    unit = result["unit_test"]
    if unit["baseline"] is None:
        console.print(f"unit tests: {unit['note']}")
    else:
        t = Table(title=f"Unit tests: share of episodes above the random mean (baseline: {', '.join(unit['baseline'])})")
        t.add_column("Entrant")
        abilities = [a for a in ("Positioning", "Tracking", "Visual Grounding", "Timing")
                     if any(a in v for v in unit["per_ability"].values())]
        for col in (*abilities, "All levels"):
            t.add_column(col, justify="right")
        for n in names:
            if n in unit["overall"]:
                ab = unit["per_ability"][n]
                t.add_row(n, *["-" if a not in ab else f"{ab[a]:.2f}" for a in abilities], f"{unit['overall'][n]:.2f}")
        console.print(t)
    anchor = result["anchoring"]
    if anchor["rounds"] or anchor["text_rounds"]:
        games = sorted({g for v in anchor["rounds"].values() for g in v})
        t = Table(title="Anchoring: mean run of unchanged replies (the action), decisions / frames (Super Mario "
                        "left out)")
        t.add_column("Entrant")
        for col in (*[g.capitalize() for g in games], "Avg."):
            t.add_column(col, justify="right")
        texts = anchor["avg_text_rounds"]
        if texts:
            t.add_column("Avg. on the reply text", justify="right")
        for n in names:
            if n in anchor["rounds"] or n in texts:
                r, f = anchor["rounds"].get(n, {}), anchor["frames"].get(n, {})
                t.add_row(n, *["-" if g not in r else f"{r[g]:.1f} / {f[g]:.0f}" for g in games],
                          f"{anchor['avg_rounds'][n]:.1f} / {anchor['avg_frames'][n]:.0f}" if r else "-",
                          *([f"{texts[n]:.1f}" if n in texts else "-"] if texts else []))
        console.print(t)


DESCRIPTION = "Rank V-MAGE runs by the paper's permutation-averaged ELO."


def add_arguments(ap: argparse.ArgumentParser, *, page: bool = True) -> None:
    """The judge's arguments, shared by ``launch elo`` and ``python -m nodes.judge.vmage_elo``; the
    page's only where ``launch`` is there to draw it."""
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders of `launch run`")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--name", action="append", default=[], metavar="RUN=LABEL",
                    help="the entrant name of a run (default: the run folder's name); runs given one label "
                    "are one entrant (a model's runs of different games)")
    ap.add_argument("--out", type=Path, help="write to this file instead of stdout")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help=f"matches per level (default {ROUNDS})")
    ap.add_argument("--permutations", type=int, default=PERMUTATIONS,
                    help=f"shuffles averaged (default {PERMUTATIONS})")
    ap.add_argument("--seed", type=int, default=SEED, help="seed of the pairings and the shuffles")
    ap.add_argument("--k", type=float, default=K, help=f"the K factor (default {K:g})")
    ap.add_argument("--no-paper", action="store_true", help="leave out the paper's Table 2")
    if not page:
        return
    ap.add_argument("--report", type=Path, metavar="OUT.html",
                    help="also write an HTML report: the tables, then each entrant's episodes as frame strips")
    ap.add_argument("--screenshot", type=Path, metavar="PNG",
                    help="with --report: render it in headless Chromium to PNG")
    ap.add_argument("--strip-episodes", type=int, default=6, metavar="N",
                    help="with --report: episodes shown per entrant (default 6)")
    ap.add_argument("--strip-steps", type=int, default=16, metavar="N",
                    help="with --report: decisions per strip, spread over the episode (default 16)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``launch elo``: registered under the ``framebus.commands`` entry points (pyproject.toml), so
    the kernel's CLI offers it without knowing V-MAGE."""
    p = sub.add_parser("elo", help="rank V-MAGE runs by the paper's ELO", description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(handler=command)


def output_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the --report / --screenshot paths, checked before the minutes of ranking."""
    report, shot = getattr(args, "report", None), getattr(args, "screenshot", None)
    if shot is not None and report is None:
        return f"--screenshot {shot}: needs --report OUT.html (the page it renders)"
    for flag, path, suffixes in (("--report", report, (".html", ".htm")), ("--screenshot", shot, (".png",))):
        if path is None:
            continue
        if path.is_dir():
            return f"{flag} {path}: is a folder; expected a file path ending in {suffixes[0]}"
        if path.suffix.lower() not in suffixes:
            return f"{flag} {path}: expected a file path ending in {suffixes[0]}"
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            return f"{flag} {path}: {parent} is a file, not a folder to write into"
    if getattr(args, "strip_episodes", 1) < 0 or getattr(args, "strip_steps", 2) < 2:
        return "--strip-episodes must be 0 or more and --strip-steps at least 2"
    return None


def rank_runs(args: argparse.Namespace) -> tuple[dict[str, Any], list[Entrant]] | int:
    """Rank ``args.runs`` and print the tables or the JSON object; the result and its entrants, or
    2 with the reason on a bad run or output path (the paths checked before the minutes of ranking)."""
    if args.rounds < 1 or args.permutations < 1:
        print("vmage_elo: --rounds and --permutations must be at least 1", file=sys.stderr)
        return 2
    problem = output_problem(args)
    if problem:
        print(f"vmage_elo: {problem}", file=sys.stderr)
        return 2
    try:
        entrants = load_entrants(list(args.runs), parse_names(args.name))
        result = rank(entrants, args.rounds, args.permutations, args.seed, args.k)
    except EloError as exc:
        print(f"vmage_elo: {exc}", file=sys.stderr)
        return 2
    fh = args.out.open("w") if args.out else sys.stdout
    try:
        if args.json:
            fh.write(json.dumps({k: v for k, v in result.items() if not (args.no_paper and k == "paper_table2")},
                                indent=2) + "\n")
        else:
            print_table(result, fh, paper=not args.no_paper)
    finally:
        if args.out:
            fh.close()
    return result, entrants


def command(args: argparse.Namespace) -> int | PageFile:
    """``launch elo``: the tables or JSON, and with --report the page for ``launch`` to write (and
    screenshot), its paths then printed on stderr so stdout stays the table or JSON."""
    ranked = rank_runs(args)
    if isinstance(ranked, int):
        return ranked
    if args.report is None:
        return 0
    from nodes.judge.vmage_elo_report import page

    result, entrants = ranked
    return PageFile(page(result, entrants, paper=not args.no_paper, max_episodes=args.strip_episodes,
                         max_steps=args.strip_steps), args.report, args.screenshot)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nodes.judge.vmage_elo``: the tables or JSON only (the page is ``launch elo``'s)."""
    ap = argparse.ArgumentParser(prog="python -m nodes.judge.vmage_elo", description=DESCRIPTION,
                                 epilog="The HTML page (--report, --screenshot) is drawn by `launch elo`.")
    add_arguments(ap, page=False)
    ranked = rank_runs(ap.parse_args(argv))
    return ranked if isinstance(ranked, int) else 0


if __name__ == "__main__":
    sys.exit(main())
