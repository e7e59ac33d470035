"""``python -m nodes.browser.vwa tasks FILE...`` and ``... score TASK.json --answer TEXT [--url URL]``.

``tasks`` reads WebArena-format task files as they are (VWA's, WebArena's, WebArena-Lite's, and the
one-task files WebArena generates), prints how many tasks each benchmark, site, evaluator, check kind
and difficulty has, which sites have no local site here, and every task the evaluators cannot run,
counted by reason and then listed with what it lacks; it exits 1 when some cannot run and 2 when a
file cannot be read. ``score`` scores a task from an answer and a final URL, without a browser; the
reward (0 or 1) is the last line. Base URLs for ``__SITE__`` placeholders come from ``--base-url
site=URL`` or, as in WebArena and VWA, the variables CLASSIFIEDS, SHOPPING, SHOPPING_ADMIN, REDDIT,
GITLAB, MAP, WIKIPEDIA and HOMEPAGE.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import Counter
from pathlib import Path

from nodes.browser.vwa.registry import REGISTRY
from nodes.browser.vwa.tasks import (
    ANSWER_KINDS,
    CONTENT_KINDS,
    EVAL_TYPES,
    LEVELS,
    SITES,
    TaskFileError,
    VwaTask,
    load_task_file,
)

# the local site that plays each benchmark site, where its name differs (nodes/browser/sites/server.py);
# the shop's admin panel is the shop's own /admin (site_nodes: {__SHOPPING_ADMIN__: shopping/admin})
LOCAL_NAMES = {"reddit": "forum", "wikipedia": "wiki", "gitlab": "forge", "shopping_admin": "shopping"}


def local_sites() -> set[str]:
    """The benchmark sites a local site node can serve."""
    from nodes.browser.sites.server import SITES as LOCAL

    return {site for site in SITES if site in LOCAL or LOCAL_NAMES.get(site) in LOCAL}


def base_urls(pairs: list[str]) -> dict[str, str]:
    urls = {site: os.environ[site.upper()] for site in SITES if os.environ.get(site.upper())}
    for pair in pairs:
        site, sep, url = pair.partition("=")
        if not sep or not site or not url:
            raise SystemExit(f"--base-url takes site=URL, got {pair!r}")
        urls[site.strip().lower()] = url.strip()
    return urls


def _reason(problem: str) -> str:
    """A problem line without its key and the list of known names: what many tasks share."""
    reason = problem.split(": ", 1)[1] if ": " in problem else problem
    return reason.split(" (known:")[0].split(" (allowed:")[0]


def _needs_llm(task: VwaTask) -> bool:
    """Whether some answer would go to the LLM judge: a fuzzy_match, or an unachievable task's reason."""
    ev = task.eval
    answers = ev.reference_answers if "string_match" in ev.eval_types else None
    if answers is not None and answers.fuzzy_match:
        return True
    return "program_html" in ev.eval_types and any(t.required_contents.fuzzy_match for t in ev.program_html)


def _count(title: str, counts: Counter[str], order: list[str] | None = None) -> None:
    keys = [k for k in order or [] if counts[k]] + sorted(k for k in counts if k not in (order or []))
    if keys:
        print(title)
        for key in keys:
            print(f"  {key} {counts[key]}")


def cmd_tasks(args: argparse.Namespace) -> int:
    tasks: list[VwaTask] = []
    unreadable = 0
    for file in args.files:
        try:
            tasks += load_task_file(file)
        except TaskFileError as e:
            print(f"error: {e}", file=sys.stderr)
            unreadable += 1
    print(f"{len(tasks)} tasks in {len(args.files) - unreadable} files")
    _count("per benchmark (by the fields its files carry):", Counter(t.origin for t in tasks))
    _count("per site (a task counts for each site it uses):",
           Counter(site for t in tasks for site in t.sites), list(SITES))
    _count("per evaluator:", Counter(kind for t in tasks for kind in t.eval.eval_types), list(EVAL_TYPES))
    checks: Counter[str] = Counter()
    for t in tasks:
        ev = t.eval
        if "string_match" in ev.eval_types and ev.reference_answers is not None:
            checks.update(f"string_match.{k}" + ("(N/A)" if k == "fuzzy_match" and t.unachievable else "")
                          for k in ev.reference_answers.kinds() + ev.reference_answers.unknown_keys())
        if "url_match" in ev.eval_types:
            checks[f"url_match.{ev.url_note or 'no url_note'}"] += 1
        if "program_html" in ev.eval_types:
            checks.update(f"program_html.{k}" for target in ev.program_html
                          for k in target.required_contents.kinds() + target.required_contents.unknown_keys())
    _count("per check kind (string checks, URL rules, page content checks):", checks,
           [*(f"string_match.{k}" for k in ANSWER_KINDS), "string_match.fuzzy_match(N/A)",
            "url_match.EXACT", "url_match.GOLD in PRED", "url_match.no url_note",
            *(f"program_html.{k}" for k in CONTENT_KINDS)])
    print("per difficulty:")
    for axis in ("overall", "reasoning", "visual"):
        levels = Counter(t.difficulty(axis) or "unlabelled" for t in tasks)  # type: ignore[arg-type]
        order = [*LEVELS, *sorted(set(levels) - set(LEVELS))]
        print(f"  {axis}: " + ", ".join(f"{level} {levels[level]}" for level in order if levels[level]))
    print(f"with input images {sum(bool(t.images) for t in tasks)}, several tabs "
          f"{sum(len(t.start_urls) > 1 for t in tasks)}, unachievable {sum(t.unachievable for t in tasks)}, "
          f"require_reset {sum(t.require_reset for t in tasks)}, require_login {sum(t.require_login for t in tasks)}, "
          f"storage_state {sum(bool(t.storage_state) for t in tasks)}")
    llm = sum(_needs_llm(t) for t in tasks)
    vision = sum(any(q.eval_vqa for q in t.eval.page_image_query) for t in tasks
                 if "page_image_query" in t.eval.eval_types)
    print(f"need a model to be scored: an LLM judge (fuzzy_match, or an N/A task's reason; judge.vwa's grader) "
          f"{llm}, a vision model or the attribute oracle (eval_vqa) {vision}")
    local = local_sites()
    remote = Counter(site for t in tasks for site in set(t.sites) if site not in local)
    if remote:
        print("sites with no local site here (give their base URLs, hosts: in the env): "
              + ", ".join(f"{site} ({n} tasks)" for site, n in sorted(remote.items())))
    notes = [(t, n) for t in tasks for n in t.notes]
    if notes:
        print(f"read leniently ({len(notes)}):")
        for task, note in notes:
            print(f"  {task.source}: task {task.task_id}: {note}")
    blocked = [(t, p) for t in tasks for p in t.problems()]
    if blocked:
        print(f"cannot run ({len({(t.source, t.task_id) for t, _ in blocked})} tasks), by reason:")
        reasons: dict[str, set[tuple[str, int]]] = {}
        for task, problem in blocked:
            reasons.setdefault(_reason(problem), set()).add((task.source, task.task_id))
        for reason, which in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(which)} tasks: {reason}")
        if any("unknown func: helper" in p for _, p in blocked):
            print(f"  (func: helpers known: {', '.join(REGISTRY)})")
        print("each:")
        for task, problem in blocked:
            print(f"  {task.source}: task {task.task_id}: {problem.split(' (known: ')[0]}")
    elif not unreadable:
        print("all tasks can run")
    if unreadable:
        print(f"{unreadable} of {len(args.files)} files could not be read (errors above)")
    return 2 if unreadable else 1 if blocked else 0


def cmd_score(args: argparse.Namespace) -> int:
    from nodes.judge.vwa_eval import CannotScore, evaluate  # the judge's evaluators; the CLI is their front

    try:
        tasks = load_task_file(args.task, base_urls(args.base_url), strict=False)
    except TaskFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.task_id is not None:
        tasks = [t for t in tasks if t.task_id == args.task_id]
        if not tasks:
            print(f"error: {args.task}: no task {args.task_id}", file=sys.stderr)
            return 2
    elif len(tasks) != 1:
        print(f"error: {args.task} holds {len(tasks)} tasks: pick one with --task-id", file=sys.stderr)
        return 2
    task = tasks[0]
    try:
        result = asyncio.run(evaluate(task, answer=args.answer, url=args.url))
    except CannotScore as e:
        print(f"cannot score: {e}", file=sys.stderr)
        return 3
    for check in result.checks:
        mark = "pass" if check.passed else "FAIL"
        print(f"{mark} {check.evaluator}: {check.what}" + (f" ({check.detail})" if check.detail else ""))
    print(int(result.reward))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.browser.vwa", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_tasks = sub.add_parser("tasks", help="validate task files and count them")
    p_tasks.add_argument("files", nargs="+", type=Path)
    p_score = sub.add_parser("score", help="score a string or URL task from an answer, without a browser")
    p_score.add_argument("task", type=Path)
    p_score.add_argument("--answer", default="", help="the answer of the final stop action")
    p_score.add_argument("--url", default=None, help="the URL the agent ended on (url_match)")
    p_score.add_argument("--task-id", type=int, default=None, help="which task, when the file holds several")
    p_score.add_argument("--base-url", action="append", default=[], metavar="SITE=URL",
                         help="base URL of a site's placeholder, e.g. classifieds=http://127.0.0.1:9980 or "
                         "shopping_admin=http://127.0.0.1:7780/admin")
    args = parser.parse_args(argv)
    return cmd_tasks(args) if args.command == "tasks" else cmd_score(args)


if __name__ == "__main__":
    sys.exit(main())
