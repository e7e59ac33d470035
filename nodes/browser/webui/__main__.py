"""``python -m nodes.browser.webui score TASK_DIR PAGE_DIR``: the AES (0-100) of a generated page.

Prints the per-page breakdown and the error counts, AES on the last line. A missing folder, a page
folder without index.html or a broken task exits with status 2 and a message naming the path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nodes.browser.webui.scoring import score
from nodes.browser.webui.task import TaskError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.browser.webui", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("score", help="score a generated page folder against a task folder")
    cmd.add_argument("task_dir", type=Path)
    cmd.add_argument("page_dir", type=Path)
    cmd.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium binary")
    args = parser.parse_args(argv)
    page_dir: Path = args.page_dir
    try:
        if not page_dir.is_dir():
            raise TaskError(f"{page_dir}: no such page folder")
        if not (page_dir / "index.html").is_file():
            raise TaskError(f"{page_dir / 'index.html'}: the page folder has no index.html")
        report = score(args.task_dir, page_dir, args.chromium)
    except (TaskError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
