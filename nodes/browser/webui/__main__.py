"""``python -m nodes.browser.webui score TASK_DIR PAGE_DIR [--rules corrected]``: the AES (0-100) of a page.

Prints the per-page breakdown and the error counts, AES on the last line. ``--rules released``
(the default) computes AES as MageBench's released evaluator does, comparable with its Table 1;
``--rules corrected`` fixes that evaluator's accidents (``aes``'s module notes). A missing folder, a page
folder without index.html or a broken task exits with status 2 and a message naming the path.

``python -m nodes.browser.webui tasks [DIR]`` lists the task folders of DIR (the shipped set by
default) with kind, interactions and annotated elements, then the count per kind; a broken folder
is listed with the reason and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nodes.browser.webui.aes import RULES
from nodes.browser.webui.magebench_folder import is_magebench_folder
from nodes.browser.webui.scoring import score
from nodes.browser.webui.steps import TaskError
from nodes.browser.webui.task import KINDS, TASKS_DIR, check_annotations, load_task, task_kind


def list_tasks(folder: Path) -> int:
    """Print the task folders of ``folder``; 1 when one is broken, 2 when ``folder`` is not a folder."""
    if not folder.is_dir():
        print(f"error: {folder}: no such folder", file=sys.stderr)
        return 2
    kinds: dict[str, int] = dict.fromkeys(KINDS, 0)
    broken = interactive = 0
    print(f"{'task':<28} {'kind':<8} {'interactions':>12} {'elements':>8}")
    for root in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            theirs = is_magebench_folder(root)  # MageBench's own layout: named by its site, not a kind
            kind, task = "magebench" if theirs else task_kind(root.name), load_task(root)
            elements = check_annotations(root / "index.html", strict=not theirs)
        except TaskError as err:
            broken += 1
            print(f"{root.name:<28} BROKEN   {err}")
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
        interactive += bool(task.interactions)
        print(f"{root.name:<28} {kind:<8} {len(task.interactions):>12} {elements:>8}")
    print("per kind: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    print(f"{sum(kinds.values())} tasks ({interactive} interactive), {broken} broken")
    return 1 if broken else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.browser.webui", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("score", help="score a generated page folder against a task folder")
    cmd.add_argument("task_dir", type=Path)
    cmd.add_argument("page_dir", type=Path)
    cmd.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium binary")
    cmd.add_argument("--rules", choices=RULES, default="released",
                     help="released: as MageBench's released evaluator (default); corrected: its accidents fixed")
    lister = sub.add_parser("tasks", help="list task folders: kind, interactions, annotated elements")
    lister.add_argument("dir", type=Path, nargs="?", default=TASKS_DIR)
    args = parser.parse_args(argv)
    if args.command == "tasks":
        return list_tasks(args.dir)
    page_dir: Path = args.page_dir
    try:
        if not page_dir.is_dir():
            raise TaskError(f"{page_dir}: no such page folder")
        if not (page_dir / "index.html").is_file():
            raise TaskError(f"{page_dir / 'index.html'}: the page folder has no index.html")
        report = score(args.task_dir, page_dir, args.chromium, args.rules)
    except (TaskError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
