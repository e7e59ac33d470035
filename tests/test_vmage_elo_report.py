"""`launch elo RUN... --report OUT.html`: the ELO tables and each entrant's frame strips on one report
page, built from two short real recorded Pong runs, its numbers checked against `--json`, its
frames decoded, and the page laid out in real Chromium."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable
from html.parser import HTMLParser
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from kernel.tools import cli, commands
from kernel.tools.report.shot import chromium
from nodes.judge.vmage_elo_report import chosen_episodes
from nodes.judge.vmage_runs import load_entrants
from tests.helpers import ROOT, launch
from tests.test_vmage_elo import _fake_run


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, under the <h3> before it."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._title = ""
        self._in: str | None = None
        self._text = ""
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h3", "td", "th"):
            self._in, self._text = tag, ""
        elif tag == "table":
            self.tables[self._title] = []
        elif tag == "tr":
            self._row = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3" and self._in == "h3":
            self._title, self._in = self._text.strip(), None
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(self._text.strip())
            self._in = None
        elif tag == "tr" and self._row is not None:
            self.tables.setdefault(self._title, []).append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two short recorded Pong runs with frames drawn: random, and the scripted tracker."""
    tmp = tmp_path_factory.mktemp("elo_report")
    rand, scripted = tmp / "random", tmp / "scripted"
    for launch_file, out, extra in (("vmage_pong_random.yaml", rand, []),
                                    ("vmage_scripted.yaml", scripted, ["--set", "env.game=pong", "--set", "env.frame_cap=150"])):
        proc = launch("run", f"launch/{launch_file}", "--out", str(out), "--record", "--set", "env.frames=true",
                      "--set", "run.episodes=3", *extra, cwd=ROOT, timeout=240)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return rand, scripted


@pytest.fixture
def elo(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[str]], int]:
    """``launch elo`` in this process (the page is drawn by launch, not the pack), its entry point
    given here so the test does not depend on what the venv has installed."""
    ep = EntryPoint("elo", "nodes.judge.vmage_elo:add_parser", commands.COMMAND_GROUP)
    monkeypatch.setattr(commands, "pack_commands", lambda: {"elo": ep})
    return lambda argv: cli.main(["elo", *argv])


def strip_images(html: str, title: str) -> list[np.ndarray]:
    """The decoded frames of one entrant's strips (its section runs to the next group or the footer)."""
    start = html.index(f"Episode strips: {title}")
    end = min(i for i in (html.find("Episode strips:", start + 1), html.find("<footer")) if i > 0)
    return [np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
            for data in re.findall(r'<img alt="ep\d+ t=\d+" src="data:image/png;base64,([^"]+)"', html[start:end])]


@pytest.mark.skipif(chromium() is None, reason="no Chromium on this machine")
@pytest.mark.timeout(400)
def test_elo_report_holds_the_json_numbers_and_real_frames_in_chromium(runs: tuple[Path, Path], tmp_path: Path,
                                                                        sync_chromium) -> None:
    pytest.importorskip("playwright")
    rand, scripted = runs
    html_path, png = tmp_path / "out" / "elo.html", tmp_path / "out" / "elo.png"
    proc = launch("elo", str(rand), str(scripted), "--permutations", "1000", "--json", "--report", str(html_path),
                  "--screenshot", str(png), cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)  # stdout stays the JSON; the paths go to stderr
    assert f"report: {html_path}" in proc.stderr and f"screenshot: {png}" in proc.stderr
    html = html_path.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained

    tables = Tables()
    tables.feed(html)
    elo = tables.tables["ELO (ours first)"]
    head, rows = elo[0], {r[0]: dict(zip(elo[0], r)) for r in elo[1:]}
    assert head[:3] == ["entrant", "model", "Pong"] and "Avg. ELO" in head and "Flappybird" in head
    assert [r[0] for r in elo[1:3]] == list(res["avg_elo"]) == ["scripted", "random"]  # ours first, best first
    for name in ("scripted", "random"):
        row = rows[name]
        assert row["Pong"] == f"{res['per_game']['pong'][name]:.0f}"
        assert row["Avg. ELO"] == f"{res['avg_elo'][name]:.0f}"
        assert row["Pooled ± SD"] == f"{res['pooled'][name]:.0f} ± {res['pooled_order_sd'][name]:.0f}"
        assert row["Avg. Ratio (%)"] == f"{res['avg_ratio_pct'][name]:.1f}"
        assert row["episodes"] == "3" and row["model"] == name
    assert rows["GPT-4o"]["Avg. ELO"] == f"{res['paper_table2']['GPT-4o']['avg_elo']:.0f}"  # Table 2, shaded below
    assert re.search(r'<tr class="paper">\s*<td class="[^"]*">GPT-4o</td>', html)
    levels = {r[0]: r for r in tables.tables["Mean score per level"][1:]}
    assert set(levels) == {"pong/1", "pong/2", "pong/3"} and levels["pong/1"][1] == "100"
    unit = {r[0]: r[-1] for r in tables.tables["Unit tests: share of episodes above the random mean"][1:]}
    assert unit["scripted"] == f"{res['unit_test']['overall']['scripted']:.2f}"
    assert "Anchoring: mean run of unchanged replies, decisions / frames" in tables.tables

    # each entrant's strips: the same three layouts in the same order, real frames
    for name in ("scripted", "random"):
        section = html[html.index(f"Episode strips: {name} ({name})"):]
        captions = re.findall(r"· (pong level \d, round \d)</span>", section)[:3]
        assert captions == ["pong level 1, round 0", "pong level 2, round 0", "pong level 3, round 0"]
        frames = strip_images(html, f"{name} ({name})")
        assert len(frames) >= 3 * 6
        for frame in frames[:: max(1, len(frames) // 6)]:
            assert frame.shape[0] > 50 and frame.std() > 5 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 8

    shot = np.asarray(Image.open(png).convert("RGB"))
    assert shot.shape[1] == 1280 and shot.shape[0] > 1500
    assert len(np.unique(shot.reshape(-1, 3)[::97], axis=0)) > 50  # tables and frames, not a blank page
    layout = laid_out(sync_chromium, html_path)
    assert layout["pageWidth"] <= layout["viewport"], layout  # nothing pushes the page sideways
    assert layout["tableOverflow"] == 0, layout  # the ELO table fits its card: no column hidden behind a scroll
    assert layout["tableVisible"] and layout["tableRows"] == len(elo)
    assert layout["groups"] == 2 and layout["images"] >= 36 and layout["broken"] == 0, layout


def laid_out(browser, page_path: Path) -> dict[str, float]:
    """What Chromium makes of the page: its width, the ELO table's box, and the strip images loaded."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(page_path.resolve().as_uri(), wait_until="load")
        return page.evaluate("""() => {
            const box = document.querySelector('.tablebox');
            const table = box.querySelector('table').getBoundingClientRect();
            const imgs = [...document.querySelectorAll('section.group img')];
            return {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
                    tableOverflow: box.scrollWidth - box.clientWidth,
                    tableVisible: table.width > 600 && table.height > 100 && table.right <= window.innerWidth,
                    tableRows: box.querySelectorAll('tr').length,
                    groups: document.querySelectorAll('section.group').length, images: imgs.length,
                    broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).length};
        }""")
    finally:
        page.context.close()


def test_unrecorded_runs_still_get_the_tables_and_say_why_no_strips(tmp_path: Path,
                                                                    elo: Callable[[list[str]], int]) -> None:
    cells = {("pong", lv, r): float(r % 2 + lv) for lv in (1, 2) for r in range(3)}
    a = _fake_run(tmp_path / "a", "agent.random", {k: 0.0 for k in cells})
    b = _fake_run(tmp_path / "b", "agent.scripted", cells)  # no summary.json, no recording, no step records
    entrants = load_entrants([a, b])
    shown = chosen_episodes(entrants, 4)
    assert [s.key for s in shown["a"]] == [s.key for s in shown["b"]] == sorted(cells)[:4]
    out = tmp_path / "elo.html"
    assert elo([str(a), str(b), "--permutations", "50", "--report", str(out), "--out", str(tmp_path / "t.txt")]) == 0
    html = out.read_text()
    assert "ELO (ours first)" in html and "Episode strips: a (random)" in html
    assert html.count("no frames or step records to show") == 2


@pytest.mark.parametrize("flags, message", [
    (["--report", "{tmp}"], "{tmp}: is a folder; expected a file path ending in .html"),
    (["--report", "{tmp}/elo.txt"], "{tmp}/elo.txt: expected a file path ending in .html"),
    (["--report", "{tmp}/f/elo.html"], "{tmp}/f is a file, not a folder to write into"),
    (["--screenshot", "{tmp}/x.png"], "--screenshot {tmp}/x.png: needs --report OUT.html"),
    (["--report", "{tmp}/e.html", "--screenshot", "{tmp}/x.jpg"],
     "--screenshot {tmp}/x.jpg: expected a file path ending in .png"),
])
def test_bad_report_paths_are_named_before_ranking(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   flags: list[str], message: str,
                                                   elo: Callable[[list[str]], int]) -> None:
    (tmp_path / "f").write_text("a file")
    args = [f.format(tmp=tmp_path) for f in flags]
    assert elo([str(tmp_path / "no-run-a"), str(tmp_path / "no-run-b"), *args]) == 2  # before the runs are read
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
