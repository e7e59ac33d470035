"""A report page described as data: what a pack's ``launch`` command hands the kernel to draw.

A pack command over finished runs (V-MAGE's ``launch elo --report``) wants a page in the run
report's style, but a pack builds on the SDK and the bus only: it must not import the report tools
(kernel.tools.report), which load jinja2, matplotlib and the recording reader. So the pack fills
these dataclasses (its tables, its facts, which episodes of which run folders to show as strips)
and its handler returns a ``PageFile``; ``launch`` (kernel.tools.commands) draws the page with the
run report's renderer and takes the screenshot. The run report builds its own tables from the
same ``Table``.

Plain data and the standard library only: node processes import kernel.sdk, and this module must
cost them nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Table:
    """One table of a page: rows of cells under ``columns``, published numbers marked so the page
    shades them beside ours."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    paper: set[int] = field(default_factory=set)  # indexes of columns holding published numbers
    paper_rows: set[int] = field(default_factory=set)  # indexes of rows holding published numbers
    groups: list[tuple[str, int]] = field(default_factory=list)  # an optional header row above columns
    note: str = ""


@dataclass(frozen=True)
class StripEpisode:
    """One episode to show as a strip: the run folder that holds it, its id there, and what the
    pack calls it (the game, level and seed it was played on)."""

    run: Path
    episode: str
    caption: str = ""


NO_STRIPS = ("no frames or step records to show: record the run (`launch run ... --record`) to see its "
             "episodes here")
NO_FRAMES = "no frames recorded (the run's environment drew none): its steps are shown as text"


@dataclass
class Strips:
    """A group of episode strips under one heading (an entrant of a ranking), in the order given.

    The kernel draws each episode as the run report does (its recorded frames, else its step
    records' text). A group can end up empty or without a picture; then the page shows
    ``no_strips`` or ``no_frames``, which a pack may word for its own runs (which flag draws
    frames)."""

    title: str
    episodes: list[StripEpisode] = field(default_factory=list)
    subtitle: str = ""
    max_steps: int = 24  # decisions per strip, spread over the episode
    no_strips: str = NO_STRIPS
    no_frames: str = NO_FRAMES


@dataclass
class Page:
    """A page over several runs: facts and headline numbers at the top, tables in named sections,
    notes, then the strip groups; ``source`` says what it was made from (the run folders)."""

    title: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    headline: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, list[Table]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strips: list[Strips] = field(default_factory=list)
    source: str = ""


@dataclass(frozen=True)
class PageFile:
    """What a pack command's handler returns when it has a page to write: the page, the HTML file
    it goes to and, optionally, a PNG of it rendered in headless Chromium. ``launch`` writes both
    and prints their paths on stderr, so stdout stays the command's own output."""

    page: Page
    path: Path
    screenshot: Path | None = None
