"""``launch report RUN``: one self-contained HTML page about a run.

It reads the run folder (summary.json, episodes.jsonl, steps/*.jsonl, recording*.mcap) and writes
the page with everything inline (CSS, matplotlib plots and frame thumbnails as base64 PNGs):
a header, the headline metrics, each benchmark's section as tables with the papers' numbers
beside ours (kernel/tools/report/tables.py), plots, the episode table, the pictures nodes kept per
episode side by side (``Node.attach_images``: a generated page beside its target,
kernel/tools/report/gallery.py), and for each episode a strip of frames with the agent's actions
and reasoning. ``--screenshot`` also renders it in headless
Chromium (kernel/tools/report/shot.py), which is how a change to the page should be checked.

A pack's page over several runs (``launch elo --report``) comes here as data: its command returns
a ``kernel.sdk.pages.PageFile`` and ``launch`` (kernel/tools/commands.py) draws it with
``write_page``, so the pack never imports these tools.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from kernel.bus.errors import FramebusError
from kernel.sdk.images import data_url
from kernel.sdk.pages import Page, Table
from kernel.tools.report.plots import RESULT_HINTS
from kernel.tools.report.tables import fmt

# summary.json keys that are about the run itself, not a benchmark's results
RUN_KEYS = {"run_id", "launch_file", "status", "reason", "started_at", "duration_s", "episodes", "resumed_episodes",
            "deal", "summary_file",
            "metrics", "nodes", "stats", "run_dir"}
MAX_EPISODE_ROWS = 200
MAX_EPISODE_COLUMNS = 12
# A run without a recording has no frames to show, and a page that silently lacks them looks broken.
NOT_RECORDED = ("No frames here: this run was not recorded. Run the launch file again with --record (or with a "
                "recorder node in it, docs/record.md) and the report shows each episode as a strip of its steps: "
                "the recorded frame (or the observation's text) and the agent's action.")


class RunUnreadable(FramebusError):
    """The run folder cannot be reported on: no summary.json, or one that is no run's summary, or a
    damaged recording. Bad input, so the command exits 2 with the file named, like every refusal."""


class PageNotWritten(FramebusError):
    """The report's page cannot be written where it was asked to be (``--out``): the message names the path and why."""


def check_page_path(path: Path) -> None:
    """Refuse a page path before any work: a folder in its place or in its way, something that is no
    regular file, or an existing file that is no HTML page (``--out RUN/results.sqlite`` would
    otherwise be overwritten). An earlier report is replaced, as re-running a report should."""
    blocker = next((p for p in (path.parent, *path.parent.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise PageNotWritten(f"cannot write the report to {path}: {blocker} is a file, not a folder")
    if path.is_dir():
        raise PageNotWritten(f"cannot write the report to {path}: it is a folder; --out names the HTML file to "
                             f"write, e.g. {path / 'report.html'}")
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise PageNotWritten(f"cannot write the report to {path}: it is not a regular file (a FIFO, a device "
                                 "or a broken link); give the path of a new .html file")
        with path.open("rb") as fh:
            head = fh.read(64).lstrip().lower()
        if head and not head.startswith((b"<!doctype html", b"<html")):
            raise PageNotWritten(f"cannot write the report to {path}: it exists and is not an HTML page, so it is "
                                 "left alone; give the path of a new .html file (or remove that one)")


def _facts(summary: dict[str, Any], data: Any) -> list[tuple[str, str]]:
    eps = summary.get("episodes") or {}
    facts = [
        ("launch file", Path(str(summary.get("launch_file", "?"))).name),
        ("started", str(summary.get("started_at", "?")).replace("T", " ")[:19]),
        ("duration", f"{summary.get('duration_s', 0):.1f} s"),
        ("episodes", f"{eps.get('completed', 0)}/{eps.get('total', 0)} completed, {eps.get('failed', 0)} failed"
                     + (f", {eps['unscored']} unscored" if eps.get("unscored") else "")),
        ("nodes", str(len(summary.get("nodes") or {}))),
    ]
    if data.recordings:
        names = ", ".join(r.path.name + ("" if r.complete else " (cut short)") for r in data.recordings)
        facts.append(("recording", names))
    if summary.get("resumed_episodes"):
        facts.append(("resumed", f"{summary['resumed_episodes']} episodes from an earlier run"))
    deal = summary.get("deal") if isinstance(summary.get("deal"), dict) else {}
    if deal.get("outside"):
        facts.append(("not counted", f"{deal['outside']} ended episodes in the folder outside this run's deal "
                      f"({deal.get('ids')}): left out of the counts, means and tables"))
    return facts


def results_first(names: list[str]) -> list[str]:
    """Scores, successes and rewards before bookkeeping (tokens per node, retries...)."""
    return sorted(names, key=lambda k: not any(hint in k for hint in RESULT_HINTS))


def episode_table(episodes: list[dict[str, Any]]) -> Table | None:
    if not episodes:
        return None
    columns: dict[str, None] = {}
    for ep in episodes:
        for k, v in (ep.get("metrics") or {}).items():
            if not isinstance(v, (dict, list)):
                columns[k] = None
    names = results_first(list(columns))[:MAX_EPISODE_COLUMNS]
    rows = [[ep.get("episode_id"), ep.get("status"), *((ep.get("metrics") or {}).get(k) for k in names)]
            for ep in episodes[:MAX_EPISODE_ROWS]]
    table = Table("episodes", ["episode", "status", *names], rows)
    if len(episodes) > MAX_EPISODE_ROWS:
        table.note = f"the first {MAX_EPISODE_ROWS} of {len(episodes)} episodes (all of them are in episodes.jsonl)"
    return table


def run_tables(summary: dict[str, Any]) -> list[Table]:
    nodes = summary.get("nodes") or {}
    tables = [Table("nodes", ["node", "state", "restarts", "exit code", "error"],
                    [[n, s.get("state"), s.get("restarts"), s.get("exit_code"), (s.get("error") or "")[:80]]
                     for n, s in nodes.items()])] if nodes else []
    edges = (summary.get("stats") or {}).get("edges") or []
    if edges:
        tables.append(Table("edges", ["edge", "policy", "sent", "received", "dropped"],
                            [[e["edge"], e["policy"], e["sent"], e["received"], e["dropped"]] for e in edges]))
    return tables


def build(run_dir: Path, out: Path | None = None, *, max_episodes: int = 12, max_steps: int = 24,
          max_image_episodes: int = 12) -> Path:
    """Write the report of ``run_dir`` (default ``RUN/report.html``) and return its path."""
    from kernel.tools.report import data as rundata
    from kernel.tools.report import plots
    from kernel.tools.report.gallery import galleries
    from kernel.tools.report.tables import section_tables

    check_page_path(out or run_dir / "report.html")
    data = rundata.load(run_dir)
    summary = data.summary
    sections = [(name, section_tables(name, value)) for name, value in summary.items() if name not in RUN_KEYS]
    figures: list[tuple[str, bytes | None]] = []
    for _, tables in sections:
        for t in tables:
            if t.groups:
                figures.append((t.title, plots.comparison(t)))
            elif t.paper_rows and len(t.columns) == 2:
                figures.append((t.title, plots.methods(t)))
    figures.append(("per-episode metrics", plots.episode_metrics(data.episodes, plots.numeric_metrics(data.episodes))))
    figures.append(("model tokens per episode", plots.tokens(data.tokens_per_episode())))
    path = out or run_dir / "report.html"
    cards, with_pictures = galleries(run_dir, data.episodes, path.parent, max_episodes=max_image_episodes)
    headline = [(k, fmt(v)) for k, v in (summary.get("metrics") or {}).items()]
    return render(
        path, title=f"{summary.get('run_id', run_dir.name)}",
        summary={"status": summary.get("status", "?"), "reason": summary.get("reason", "")},
        facts=_facts(summary, data), headline=headline, sections=sections,
        notes=[] if data.recordings else [NOT_RECORDED],
        plots=[(alt, data_url(png)) for alt, png in figures if png],
        episode_table=episode_table(data.episodes), galleries=cards, gallery_total=with_pictures,
        strips=rundata.strips(data, max_episodes=max_episodes, max_steps=max_steps),
        run_tables=run_tables(summary), source=str(run_dir),
    )


def write_page(page: Page, path: Path) -> Path:
    """Write a pack's page over several runs to ``path`` and return the path: its tables as the run
    report's, its strip groups drawn from the run folders it names (``data.strip_group``), so it
    looks like a run's report without the kernel knowing what was compared."""
    from kernel.tools.report.data import strip_group

    check_page_path(path)  # before the strips are drawn: they read every recording named
    return render(path, title=page.title, facts=page.facts, headline=page.headline, sections=page.sections,
                  notes=page.notes, strip_groups=[strip_group(s) for s in page.strips], source=page.source)


def render(path: Path, **parts: Any) -> Path:
    """Write the report page to ``path`` from the parts given, the rest left empty, and return the path.

    The run report fills every part; a pack's page (``write_page``) fills the ones a page over
    several runs has."""
    import jinja2

    from kernel.tools.report.template import PAGE

    empty: dict[str, Any] = {"title": "", "summary": {"status": "", "reason": ""}, "facts": [], "headline": [],
                             "sections": [], "notes": [], "plots": [], "episode_table": None, "galleries": [],
                             "gallery_total": 0, "strips": [], "strip_groups": [], "run_tables": [], "source": ""}
    unknown = set(parts) - set(empty)
    if unknown:
        raise TypeError(f"report page: unknown parts {sorted(unknown)}")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(PAGE).render(**{**empty, **parts}, fmt=fmt,
                                        generated=datetime.now().strftime("%Y-%m-%d %H:%M"))
    check_page_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html)
    except OSError as exc:  # a folder it may not write, a full disk
        raise PageNotWritten(f"cannot write the report to {path}: {exc.strerror or exc}") from None
    return path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an HTML report of a run folder")
    p.add_argument("run", type=Path, help="a run folder (with summary.json)")
    p.add_argument("--out", type=Path, help="the HTML file (default RUN/report.html)")
    p.add_argument("--episodes", type=int, default=12, help="episodes shown as strips (default 12)")
    p.add_argument("--steps", type=int, default=24, help="decisions per strip, spread over the episode (default 24)")
    p.add_argument("--image-episodes", type=int, default=12, metavar="N",
                   help="episodes whose kept pictures (targets beside results) are shown (default 12)")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="also render the page in headless Chromium to PNG")
    p.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    path = build(args.run, args.out, max_episodes=args.episodes, max_steps=args.steps,
                 max_image_episodes=args.image_episodes)
    print(path)
    if args.screenshot:
        from kernel.tools.report.shot import screenshot

        print(screenshot(path, args.screenshot))
    return 0
