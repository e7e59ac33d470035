"""`launch report RUN`: a self-contained HTML page with the benchmark tables (papers' numbers beside
ours), matplotlib plots and per-episode strips of recorded frames; checked in headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from kernel.tools.report import build
from kernel.tools.report.shot import chromium
from kernel.tools.report.tables import section_tables
from tests.helpers import launch
from tests.test_record import FRAMES_YAML

# The shapes the judges put into summary.json (nodes/judge/sokoban.py, kidgym.py), with their numbers.
SOKOBAN = {"tiers": {"all": {"episodes": 3, "score_mean": 49.0, "success_rate": 0.0},
                     "v0": {"episodes": 2, "score_mean": 48.5, "success_rate": 0.0}},
           "score_mean": 49.0, "paper": {"idle": 41.18, "random": 46.61, "human_online": 96.85}}
KIDGYM = {"episodes": 72, "success_rate": 0.14,
          "cells": {f"{task}-L{level}": {"episodes": 2, "successes": 1, "success_rate": 0.5,
                                          "paper_random": 0.25, "paper_human": 1.0}
                    for task in ("CL", "SE", "SO") for level in (1, 2, 3)},
          "capability": {"Memory": 5.0, "Planning": 7.5}, "paper_capability": {"Memory": 40.0, "Planning": 30.0}}


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    (tmp / "frames.yaml").write_text(FRAMES_YAML)
    result = launch("run", "frames.yaml", "--record", "--out", str(tmp / "run"), cwd=tmp)
    assert result.returncode == 0, result.stderr
    return tmp / "run"


def test_paper_numbers_sit_beside_ours() -> None:
    tiers, methods = section_tables("sokoban", SOKOBAN)
    assert tiers.title == "sokoban: tiers" and tiers.columns == ["", "episodes", "score_mean", "success_rate"]
    assert methods.columns == ["method", "score_mean"] and methods.rows[0] == ["this run", 49.0]
    assert methods.rows[1:] == [["paper: idle", 41.18], ["paper: random", 46.61], ["paper: human_online", 96.85]]
    assert methods.paper_rows == {1, 2, 3}

    overview, cells, capability = section_tables("kidgym", KIDGYM)
    assert overview.rows == [["episodes", 72], ["success_rate", 0.14]]
    # pivoted like the paper: a row per task, a group of (ours, random, human) per level
    assert cells.groups == [("", 1), ("L1", 3), ("L2", 3), ("L3", 3)]
    assert cells.columns[:4] == ["", "ours", "random", "human"] and [r[0] for r in cells.rows] == ["CL", "SE", "SO"]
    assert cells.rows[0][1:4] == [0.5, 0.25, 1.0] and cells.paper == {2, 3, 5, 6, 8, 9}
    assert capability.rows == [["this run", 5.0, 7.5], ["paper", 40.0, 30.0]] and capability.paper_rows == {1}


def test_an_empty_mapping_or_list_is_a_line_of_the_overview_not_an_empty_table() -> None:
    (bus,) = section_tables("bus", {"transport": "ipc", "curve_refused_by": {}, "errors": []})
    assert bus.rows == [["transport", "ipc"], ["curve_refused_by", "none"], ["errors", "none"]]
    overview, refused = section_tables("bus", {"transport": "tcp", "curve_refused_by": {"kernel": 3}})
    assert refused.title == "bus: curve_refused_by" and refused.rows == [["this run", 3]]


def test_report_of_a_recorded_run(recorded_run: Path, tmp_path: Path) -> None:
    result = launch("report", str(recorded_run), "--out", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "r.html").read_text()
    assert "<table" in html and "Episode strips" in html and "ep00000" in html and "ep00001" in html
    assert "http://" not in html and "https://" not in html  # self-contained: nothing to fetch
    images = re.findall(r'<img alt="([^"]*)"[^>]* src="data:image/png;base64,([^"]+)"', html)
    plots = [alt for alt, _ in images if alt == "per-episode metrics"]
    frames = [(alt, data) for alt, data in images if alt.startswith("ep0000")]
    assert plots and len(frames) > 2
    thumb = np.asarray(Image.open(io.BytesIO(base64.b64decode(frames[0][1]))))
    assert thumb.ndim == 3 and thumb.shape[1] > thumb.shape[0]  # the hello strip, scaled, is wider than tall
    assert re.search(r'class="act[^"]*">right</div>', html)  # the agent's action under its frame
    assert "env/obs -&gt; agent/obs" in html  # the run's wiring table, escaped
    assert "was not recorded" not in html


def test_report_without_a_recording(tmp_path: Path) -> None:
    result = launch("run", "hello.yaml", "--episodes", "2", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    html = build(tmp_path / "run").read_text()
    assert "Episodes" in html and "ep00001" in html and "Episode strips" not in html
    assert "No frames here: this run was not recorded. Run the launch file again with --record" in html

    # A sentence in a summary section (a paper's citation, say) wraps in its cell instead of
    # stretching the table past its card; short values stay on one line.
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    source = "VisualWebArena (Koh et al., 2024): Table 3, Table 5 and Figure 6; success rates in %"
    summary["bench"] = {"paper_source": source, "model": "GPT-4V"}
    (tmp_path / "run" / "summary.json").write_text(json.dumps(summary))
    html = build(tmp_path / "run").read_text()
    assert re.search(r'<td class="[^"]*\bprose\b[^"]*">' + re.escape(source), html)
    assert re.search(r'<td class="\s*">GPT-4V</td>', html)


def test_a_screenshot_without_chromium_is_an_error_line_and_the_report_is_still_written(
        recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAMEBUS_CHROMIUM", str(tmp_path / "no-such-chromium"))
    result = launch("report", str(recorded_run), "--out", str(tmp_path / "r.html"), "--screenshot", str(tmp_path / "r.png"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"no Chromium for the screenshot (FRAMEBUS_CHROMIUM={tmp_path / 'no-such-chromium'} does not exist)" \
        in " ".join(result.stderr.split())  # the console wraps long lines
    assert (tmp_path / "r.html").stat().st_size > 0 and not (tmp_path / "r.png").exists()


@pytest.mark.skipif(chromium() is None, reason="no Chromium on this machine")
def test_report_renders_in_chromium(recorded_run: Path, tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    result = launch("report", str(recorded_run), "--out", str(tmp_path / "r.html"),
                    "--screenshot", str(tmp_path / "r.png"), timeout=120)
    assert result.returncode == 0, result.stderr
    shot = np.asarray(Image.open(tmp_path / "r.png").convert("RGB"))
    assert shot.shape[1] == 1280 and shot.shape[0] > 900  # the full page, taller than one screen
    colors = np.unique(shot.reshape(-1, 3)[::97], axis=0)
    assert len(colors) > 50  # text, tables, plots and frames, not a blank page


def test_recordings_are_taken_in_the_order_they_were_written(tmp_path):
    from kernel.tools.recording_files import recordings

    for name in ("recording-10.mcap", "recording.mcap", "recording-2.mcap", "recording-1.mcap", "other.mcap"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in recordings(tmp_path)] == [
        "recording.mcap", "recording-1.mcap", "recording-2.mcap", "recording-10.mcap"]
