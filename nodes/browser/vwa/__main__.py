"""``python -m nodes.browser.vwa tasks FILE...`` and ``... score TASK.json --answer TEXT [--url URL]``.

``tasks`` reads VWA task files as they are, prints how many tasks each site, evaluator and difficulty
has, and lists every task the evaluators cannot run, with what they lack; it exits 1 when some cannot
run and 2 when a file cannot be read. ``score`` scores a task from an answer and a final URL, without
a browser; the reward (0 or 1) is the last line. Base URLs for ``__SITE__`` placeholders come from
``--base-url site=URL`` or, as in VWA, the CLASSIFIEDS/SHOPPING/REDDIT/WIKIPEDIA/HOMEPAGE variables.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import Counter
from pathlib import Path

from nodes.browser.vwa.tasks import EVAL_TYPES, LEVELS, TaskFileError, VwaTask, load_task_file

SITES = ("classifieds", "shopping", "reddit", "wikipedia", "homepage")


def base_urls(pairs: list[str]) -> dict[str, str]:
    urls = {site: os.environ[site.upper()] for site in SITES if os.environ.get(site.upper())}
    for pair in pairs:
        site, sep, url = pair.partition("=")
        if not sep or not site or not url:
            raise SystemExit(f"--base-url takes site=URL, got {pair!r}")
        urls[site.strip().lower()] = url.strip()
    return urls


def cmd_tasks(args: argparse.Namespace) -> int:
    tasks: list[VwaTask] = []
    unreadable = 0
    for file in args.files:
        try:
            tasks += load_task_file(file)
        except TaskFileError as e:
            print(f"error: {e}", file=sys.stderr)
            unreadable += 1
    sites = Counter(site for t in tasks for site in t.sites)
    evaluators = Counter(kind for t in tasks for kind in t.eval.eval_types)
    print(f"{len(tasks)} tasks in {len(args.files) - unreadable} files")
    print("per site (a task counts for each site it uses):")
    for site, n in sorted(sites.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {site} {n}")
    print("per evaluator:")
    for kind in [*EVAL_TYPES, *sorted(set(evaluators) - set(EVAL_TYPES))]:
        if evaluators[kind]:
            print(f"  {kind} {evaluators[kind]}")
    print("per difficulty:")
    for axis in ("overall", "reasoning", "visual"):
        levels = Counter(t.difficulty(axis) or "unlabelled" for t in tasks)  # type: ignore[arg-type]
        order = [*LEVELS, *sorted(set(levels) - set(LEVELS))]
        print(f"  {axis}: " + ", ".join(f"{level} {levels[level]}" for level in order if levels[level]))
    print(f"with input images {sum(bool(t.images) for t in tasks)}, several tabs "
          f"{sum(len(t.start_urls) > 1 for t in tasks)}, unachievable {sum(t.unachievable for t in tasks)}, "
          f"require_reset {sum(t.require_reset for t in tasks)}")
    blocked = [(t, p) for t in tasks for p in t.problems()]
    if blocked:
        print(f"cannot run ({len({(t.source, t.task_id) for t, _ in blocked})} tasks):")
        for task, problem in blocked:
            print(f"  {task.source}: task {task.task_id}: {problem}")
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
                         help="base URL of a site's placeholder, e.g. classifieds=http://127.0.0.1:9980")
    args = parser.parse_args(argv)
    return cmd_tasks(args) if args.command == "tasks" else cmd_score(args)


if __name__ == "__main__":
    sys.exit(main())
