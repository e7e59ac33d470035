"""Run folders as V-MAGE ELO entrants: each run's judged episodes and the model that played them.

The ELO judge reads finished run folders, not the bus, so it stands apart from the kernel: the
files it needs (``episodes.jsonl``, ``results.sqlite``, ``launch.yaml``) are read here with the
standard library and PyYAML. An entrant is named by its run folder (issue 14: two runs of one
model with different settings are different entrants), unless ``--name RUN=LABEL`` labels it; a
model's results spread over several runs (one per game) become one entrant by giving them one
label, as long as they never played the same (game, level, round) twice. The model or agent the
launch file names is kept beside the name, for the table and to find the random baseline.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml


class EloError(Exception):
    """A problem with the runs given, worded for the person who gave them."""


Key = tuple[str, int, int]  # (game, level, round): the round is the layout's seed


@dataclass(frozen=True)
class Result:
    """What V-MAGE's outcome compares (spec §4 eq. 2): the score first, then the valid rate."""

    score: float
    valid_rate: float
    decisions: int = 0
    frames: int = 0
    reply_runs: int | None = None  # None: judged before judge.vmage counted them
    text_runs: int | None = None  # runs of one unchanged reply text (an LLM agent's step records)
    texts: int = 0  # the replies text_runs was counted over


@dataclass
class Entrant:
    name: str
    runs: list[Path] = field(default_factory=list)
    results: dict[Key, Result] = field(default_factory=dict)
    clocks: set[str] = field(default_factory=set)
    cut: int = 0  # episodes left out: stopped by the run, not ended by the game
    models: set[str] = field(default_factory=set)  # what its runs' launch files name (run_model)

    @property
    def model(self) -> str:
        return ", ".join(sorted(self.models)) or "?"

    @property
    def is_random(self) -> bool:
        """The random baseline (the unit-test metric's reference): agent.random played it, or it is
        labelled so."""
        return self.name.lower() == "random" or self.models == {"random"}


REQUIRED = ("game", "level", "round", "score", "valid_rate")


def _episode_records(run: Path) -> list[dict[str, Any]]:
    """The run's ended episodes: ``episodes.jsonl`` is written before each acknowledgement, so it
    holds every ended episode; the database is the fallback for a folder without the mirror."""
    mirror = run / "episodes.jsonl"
    if mirror.exists():
        out = []
        for line in mirror.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash was never acknowledged
            if isinstance(rec, dict):
                out.append(rec)
        return out
    db = run / "results.sqlite"
    if db.exists():
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT episode_id, status, metrics FROM episodes").fetchall()
        except sqlite3.DatabaseError as exc:
            raise EloError(f"{run}: results.sqlite cannot be read ({exc})") from exc
        finally:
            con.close()
        return [{"episode_id": eid, "status": status, "metrics": json.loads(m)} for eid, status, m in rows]
    raise EloError(f"{run}: not a run folder of `launch run` (no episodes.jsonl or results.sqlite in it)")


def run_model(run: Path) -> str:
    """What played the run, from the launch file it recorded: the model an LLM agent called (with
    '(text)' when it saw no images: the perceptual-skipping variant), else the agent's kind
    (random, scripted, human); the folder's name when the launch file says neither."""
    path = run / "launch.yaml"
    try:
        spec = yaml.safe_load(path.read_text()) if path.exists() else None
    except yaml.YAMLError:
        spec = None
    nodes = spec.get("nodes") if isinstance(spec, dict) else None
    if not isinstance(nodes, list):
        return run.resolve().name
    by_id = {n.get("id"): n for n in nodes if isinstance(n, dict)}
    agents = [n for n in by_id.values() if str(n.get("uses", "")).startswith("agent.")]
    if len(agents) != 1:
        return run.resolve().name
    agent = agents[0]
    params = agent.get("params") or {}
    kind = str(agent["uses"]).split(".", 1)[1]
    model = params.get("model")
    if kind != "llm" or not model:
        return kind
    node = by_id.get(model)
    if isinstance(node, dict):  # the model param names the model node: its served model
        mp = node.get("params") or {}
        serve = mp.get("serve")
        if isinstance(serve, dict):
            model = serve.get("served_name") or serve.get("model") or (
                "smollm2-135m-instruct" if serve.get("kind", "vllm-cpu") == "vllm-cpu" else serve.get("kind"))
        else:
            model = mp.get("model", "gpt-4o")  # model.chat's default
    name = str(model)
    return f"{name} (text)" if params.get("images") is False else name


def read_run(run: Path) -> tuple[dict[Key, Result], set[str], int]:
    """The run's V-MAGE results by (game, level, round), the clocks they were played under, and how
    many episodes were left out because the run cut them short (a timeout or a stop: reason
    'stopped: ...', or a status other than completed): their score is not the game's verdict, and
    comparing it would charge the model for the run's end."""
    if not run.exists():
        raise EloError(f"{run}: no such run folder")
    if not run.is_dir():
        raise EloError(f"{run}: not a run folder (it is a file)")
    records = _episode_records(run)
    results: dict[Key, Result] = {}
    ids: dict[str, Key] = {}
    clocks: set[str] = set()
    cut = 0
    for rec in records:
        m = rec.get("metrics")
        if not judged(m):
            continue  # not judged by judge.vmage (another benchmark, or an episode lost to a crash)
        if cut_short(str(rec.get("status", "completed")), m):
            cut += 1
            continue
        key = key_of(m)
        if key in results:
            raise EloError(f"{run}: {key[0]} level {key[1]} round {key[2]} ended twice "
                           f"(episode {rec.get('episode_id')}); a run plays each layout once")
        results[key] = result_of(m)
        ids[str(rec.get("episode_id"))] = key
        clocks.add(str(m.get("clock", "lockstep")))
    if not results:
        why = f" ({cut} cut short by the run)" if cut else ""
        raise EloError(f"{run}: no V-MAGE episodes among its {len(records)} ended episode(s){why} (none carries "
                       f"{', '.join(REQUIRED)}: was it a vmage.env run judged by judge.vmage?)")
    for eid, (runs, texts) in text_runs(run).items():
        if eid in ids:
            results[ids[eid]] = replace(results[ids[eid]], text_runs=runs, texts=texts)
    return results, clocks, cut


def judged(metrics: Any) -> bool:
    """Whether an episode's metrics are judge.vmage's (the ones ELO compares)."""
    return isinstance(metrics, dict) and all(metrics.get(k) is not None for k in REQUIRED)


def cut_short(status: str, metrics: dict[str, Any]) -> bool:
    """An episode the run stopped rather than the game ended: its score is not the game's verdict."""
    return status != "completed" or str(metrics.get("reason", "")).startswith("stopped")


def key_of(metrics: dict[str, Any]) -> Key:
    return str(metrics["game"]), int(metrics["level"]), int(metrics["round"])


def result_of(metrics: dict[str, Any]) -> Result:
    """One judged episode as ELO sees it; shared by run folders and judge.vmage_elo's live episodes,
    so a run rated as it goes and the same run read back afterwards give the same numbers."""
    runs = metrics.get("reply_runs")
    return Result(float(metrics["score"]), float(metrics["valid_rate"]), int(metrics.get("decisions") or 0),
                  int(metrics.get("frames") or 0), None if runs is None else int(runs))


def episode_keys(run: Path) -> dict[str, Key]:
    """Episode id -> (game, level, round) of the run's compared episodes (judged, ended by the game),
    so the report can show the very episodes the ELO compared."""
    out: dict[str, Key] = {}
    for rec in _episode_records(run):
        m = rec.get("metrics")
        if judged(m) and not cut_short(str(rec.get("status", "completed")), m):
            out[str(rec.get("episode_id"))] = key_of(m)
    return out


def text_runs(run: Path) -> dict[str, tuple[int, int]]:
    """Per episode id, (runs of one unchanged reply text, replies) from the run's agent step records
    (``RUN/steps/<agent>.jsonl``, written by agent.llm with each raw ``response``): the paper's
    "output response", for the anchoring metric beside the action-based count of judge.vmage. Only
    a run with one such file: with several agents, whose replies are whose is not V-MAGE's setting.
    An episode replayed from its step 0 counts its last attempt."""
    files = sorted((run / "steps").glob("*.jsonl")) if (run / "steps").is_dir() else []
    if len(files) != 1:
        return {}
    replies: dict[str, list[str]] = {}
    for line in files[0].read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("response"), str) or rec.get("episode") is None:
            continue
        eid = str(rec["episode"])
        if rec.get("t") == 0:
            replies[eid] = []  # a fresh start (again, for a replayed episode)
        replies.setdefault(eid, []).append(rec["response"])
    out = {}
    for eid, texts in replies.items():
        if texts:
            out[eid] = (1 + sum(a != b for a, b in zip(texts, texts[1:])), len(texts))
    return out


def parse_names(pairs: list[str]) -> dict[Path, str]:
    """``--name RUN=LABEL`` flags by resolved run folder."""
    out: dict[Path, str] = {}
    for pair in pairs:
        run, sep, name = pair.partition("=")
        if not sep or not run or not name.strip():
            raise EloError(f"--name {pair!r}: expected RUN=LABEL (a run folder given, then the name to show)")
        out[Path(run).resolve()] = name.strip()
    return out


def load_entrants(runs: list[Path], names: dict[Path, str] | None = None) -> list[Entrant]:
    """Entrants sorted by name (so the order the runs were given changes nothing), each the union of
    its runs' results; errors name the run folder and what is wrong with it."""
    if len(runs) < 2:
        raise EloError("ELO ranks two or more runs; give at least two run folders")
    entrants = collect_entrants(runs, names)
    if len(entrants) < 2:
        raise EloError(f"all runs are one entrant ({entrants[0].name!r}); label them apart with --name RUN=LABEL")
    for ent in entrants:
        others = set().union(*(set(o.results) for o in entrants if o is not ent))
        if not set(ent.results) & others:
            raise EloError(f"{ent.runs[0]}: shares no (game, level, round) with the other runs, so it has no "
                           f"match to play (it has {_cells(ent)}; the others {_cells_of(others)})")
    return entrants


def collect_entrants(runs: list[Path], names: dict[Path, str] | None = None) -> list[Entrant]:
    """The runs as entrants sorted by name, with no demand on how many there are or what they share
    (judge.vmage_elo adds its own run to them); errors name the run folder and what is wrong."""
    names = dict(names or {})
    seen: set[Path] = set()
    unlabelled: dict[str, Path] = {}
    by_name: dict[str, Entrant] = {}
    for run in runs:
        resolved = run.resolve()
        if resolved in seen:
            raise EloError(f"{run}: given twice")
        seen.add(resolved)
        results, clocks, cut = read_run(run)
        label = names.pop(resolved, None)
        name = label or resolved.name
        if label is None and name in unlabelled:  # two folders of one name in different places
            raise EloError(f"{run}: has the folder name of {unlabelled[name]}; runs are one entrant only when "
                           f"labelled alike: give each a --name RUN=LABEL")
        if label is None:
            unlabelled[name] = run
        ent = by_name.setdefault(name, Entrant(name))
        ent.models.add(run_model(run))
        clash = sorted(set(results) & set(ent.results))
        if clash:
            g, lv, r = clash[0]
            raise EloError(f"{run}: played {g} level {lv} round {r} like {ent.runs[0]}, and both are named "
                           f"{name!r}; label them apart with --name {run}=OTHER")
        ent.runs.append(run)
        ent.results.update(results)
        ent.clocks |= clocks
        ent.cut += cut
    if names:
        raise EloError(f"--name {next(iter(names))}: that run folder is not among the runs given")
    return [by_name[n] for n in sorted(by_name)]


def _cells(ent: Entrant) -> str:
    return _cells_of(set(ent.results))


def _cells_of(keys: set[Key]) -> str:
    by_level: dict[tuple[str, int], list[int]] = {}
    for g, lv, r in keys:
        by_level.setdefault((g, lv), []).append(r)
    parts = [f"{g} {lv} rounds {min(rs)}-{max(rs)}" for (g, lv), rs in sorted(by_level.items())]
    return ", ".join(parts[:4]) + (" ..." if len(parts) > 4 else "") if parts else "nothing"
