"""``launch`` subcommands that packs provide, through the ``framebus.commands`` entry points.

The kernel knows no benchmark, yet a benchmark's tools (V-MAGE's ELO judge: ``launch elo``) belong
under ``launch`` beside run and report. A pack registers ``NAME = "module:add_parser"`` in the
group; ``add_parser(subparsers)`` adds its subparser and sets ``handler`` (a function of the parsed
arguments returning the exit status), as kernel.tools.report does. Entry points are read without
importing anything, and only the chosen command's module is imported: ``launch --help`` and
``launch run`` never load a pack's tools (their numpy, their tables), only see their names.

A pack command may also have a page to show (``launch elo --report OUT.html --screenshot PNG``).
A pack builds on the SDK and the bus only, so it does not draw the page: its handler returns a
``kernel.sdk.pages.PageFile`` (the page as data, the HTML path, the PNG path) instead of a status,
and ``run`` writes it with the run report's renderer (kernel.tools.report ``write_page``) and takes
the screenshot, printing both paths on stderr so stdout stays the command's own output.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from collections.abc import Callable, Collection, Mapping, Sequence

from kernel.sdk.pages import PageFile

COMMAND_GROUP = "framebus.commands"


class PackCommandError(Exception):
    """A registered pack command could not be loaded; the message names its entry point."""


def pack_commands() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed pack commands by name (metadata only: nothing is imported)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=COMMAND_GROUP)}


def chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named by ``argv``: its first word, since ``launch`` itself takes no option
    with a value before the subcommand."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def add_pack_parsers(sub: argparse._SubParsersAction, argv: Sequence[str], builtin: Collection[str],
                     commands: Mapping[str, importlib.metadata.EntryPoint]) -> None:
    """Add each pack command to ``sub``: in full (its module imported, its ``add_parser`` called)
    when ``argv`` chooses it, else as a name with a pointer to its own help, so the listing costs
    no import. A name a built-in command already has is left out: the kernel's commands keep
    their meaning whatever is installed."""
    name = chosen(argv)
    for cmd, ep in sorted(commands.items()):
        if cmd in builtin:
            continue
        if cmd != name:
            sub.add_parser(cmd, help=f"from a pack ({ep.value.split(':')[0]}); see `launch {cmd} --help`")
            continue
        try:
            add_parser = ep.load()
        except (ImportError, AttributeError) as exc:
            raise PackCommandError(f"the pack command {cmd!r} ({ep.value}) cannot be loaded: {exc}") from exc
        before = set(sub.choices)
        add_parser(sub)
        if cmd not in sub.choices or set(sub.choices) - before != {cmd}:
            raise PackCommandError(f"the pack command {cmd!r} ({ep.value}) must add exactly the subcommand {cmd!r}")


def run(name: str, handler: Callable[[argparse.Namespace], int | PageFile], args: argparse.Namespace) -> int:
    """Carry out the pack command ``name``: its handler's exit status, or 0 once the page it returned
    is written (and its screenshot taken). A page path that cannot be written raises
    kernel.tools.report.PageNotWritten, and a missing Chromium FileNotFoundError, which ``launch``
    reports as one error line, as it does for ``launch report``."""
    done = handler(args)
    if not isinstance(done, PageFile):
        return done
    from kernel.tools.report import write_page

    path = write_page(done.page, done.path)
    print(f"report: {path}", file=sys.stderr)
    if done.screenshot is not None:
        from kernel.tools.report.shot import screenshot

        try:
            print(f"screenshot: {screenshot(path, done.screenshot)}", file=sys.stderr)
        except RuntimeError as exc:
            print(f"launch {name}: cannot take the screenshot {done.screenshot}: {exc}; the report itself was "
                  "written", file=sys.stderr)
            return 2
    return 0
