"""Which recordings a run folder holds, in the order they were written.

A resumed run or a restarted recorder writes ``recording-1.mcap`` beside ``recording.mcap``, then
``recording-2.mcap``...; by name alone ``-`` sorts before ``.`` and ``10`` before ``2``, so the
report and the console's replay would take an earlier recording's episode for the later one's.
"""

from __future__ import annotations

from pathlib import Path


def written_order(path: Path) -> tuple[int, str]:
    """``recording.mcap`` first, then ``recording-1.mcap``, ``recording-2.mcap``, ``recording-10.mcap``."""
    suffix = path.stem.rpartition("-")[2]
    return (int(suffix) if path.stem != "recording" and suffix.isdigit() else 0, path.name)


def recordings(run_dir: Path) -> list[Path]:
    """The run folder's recordings, oldest first."""
    return sorted(run_dir.glob("recording*.mcap"), key=written_order)
