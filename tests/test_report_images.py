"""The pictures a node keeps per episode (``Node.attach_images``) and the report's "Images" section:
the rows side by side with the episode's results, from a hand-made run folder and from real
WebUI (target page beside the generated one, per interaction) and VAB-CSS (target, initial,
final) runs, checked in the HTML and in Chromium."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import yaml
from PIL import Image

from kernel.sdk.media import read_sets, write_set
from kernel.sdk.node import Node
from kernel.tools.report import build
from kernel.tools.report.gallery import BOX
from kernel.tools.report.shot import chromium
from kernel.tools.report.tables import fmt
from tests.helpers import ROOT, launch

FIGURE = re.compile(r'<figure><a href="([^"]+)"><img alt="([^"]*)"[^>]* src="data:image/(?:png|jpeg);base64,([^"]+)"></a>')


def solid(color: tuple[int, int, int], size: tuple[int, int] = (300, 200)) -> np.ndarray:
    return np.full((size[1], size[0], 3), color, np.uint8)


def cards(html: str) -> dict[str, str]:
    """Episode id -> the HTML of its card in the Images section."""
    found = re.findall(r'<section class="pics">\s*<h3>(\S+) .*?</section>', html, flags=re.S)
    bodies = re.findall(r'<section class="pics">(.*?)</section>', html, flags=re.S)
    return dict(zip(found, bodies, strict=True))


def rows(card: str) -> list[list[tuple[str, str, np.ndarray]]]:
    """Each row's pictures as (link, alt, decoded thumbnail), in order."""
    out = []
    for row in re.findall(r'<div class="pictures">(.*?)</div>\s*</div>', card, flags=re.S):
        out.append([(link, alt, np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")))
                    for link, alt, data in FIGURE.findall(row)])
    return out


def hand_made_run(run: Path) -> None:
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"run_id": "pics", "status": "completed", "reason": "done",
                                                  "episodes": {"total": 3, "completed": 2}}))
    episodes = [{"episode_id": "ep00000", "status": "completed", "metrics": {"aes": 81.5, "task": "a", "steps": 1}},
                {"episode_id": "ep00001", "status": "failed", "metrics": {"success": 0.0, "final_distance": 0.4}}]
    (run / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))


def test_the_images_section_shows_each_episodes_rows_side_by_side_with_its_results(tmp_path: Path) -> None:
    run = tmp_path / "run"
    hand_made_run(run)
    big = solid((200, 30, 30), (2000, 1000))
    write_set(run, "judge", "ep00000", [("target", big), ("generated", solid((30, 30, 200)))],
              caption="as loaded: stage score 50.0/100", row="stage_0", metrics=("aes", "task"))
    write_set(run, "judge", "ep00000", [("target", solid((0, 0, 0))), ("generated", solid((255, 255, 255)))],
              caption="after interaction 0", row="stage_1", metrics=("aes", "task"))
    # a replayed episode's row replaces the first try's, even with another caption
    write_set(run, "judge", "ep00000", [("target", solid((10, 200, 10))), ("generated", solid((10, 200, 10)))],
              caption="after interaction 0: stage score 100.0/100", row="stage_1", metrics=("aes", "task"))
    png = io.BytesIO()
    Image.fromarray(solid((250, 250, 0))).save(png, format="PNG")
    write_set(run, "env", "ep00001", [("target", png.getvalue()), ("initial", solid((0, 250, 250))),
                                      ("final", solid((250, 0, 250)))], caption="inst-7")
    write_set(run, "env", "ep00002", [("only", solid((9, 9, 9)))])  # an episode that never ended
    with open(run / "media" / "env" / "index.jsonl", "a") as fh:
        fh.write('{"episode": "ep0')  # a line cut short by a crash

    stored = Image.open(run / read_sets(run)[0]["pictures"][0]["path"])
    assert stored.size == (1280, 640)  # kept no larger than max_px on its longer side

    html = build(run, max_image_episodes=2).read_text()
    assert "<h2>Images</h2>" in html and "the first 2 of 3 episodes with pictures" in html
    shown = cards(html)
    assert list(shown) == ["ep00000", "ep00001"]  # in episodes.jsonl's order, bounded
    first = shown["ep00000"]
    assert "aes <b>81.5</b>" in first and "task <b>a</b>" in first and "steps" not in first  # what the node named
    assert "as loaded: stage score 50.0/100" in first and "after interaction 0: stage score 100.0/100" in first
    assert "after interaction 0</div>" not in first  # the replaced row is gone
    (loaded, after) = rows(first)
    assert [alt for _, alt, _ in loaded] == ["ep00000: target", "ep00000: generated"]
    assert loaded[0][2].shape[1] <= BOX[0] and loaded[0][2].shape[0] <= BOX[1]  # inlined small
    assert tuple(loaded[0][2][5, 5]) == (200, 30, 30) and tuple(loaded[1][2][5, 5]) == (30, 30, 200)
    assert tuple(after[0][2][5, 5]) == (10, 200, 10)
    assert all((run / link).is_file() for link, _, _ in loaded + after)  # full size beside the page

    second = shown["ep00001"]
    assert "failed" in second and "success <b>0</b>" in second and "final_distance <b>0.4</b>" in second
    (only,) = rows(second)
    assert [alt.split(": ")[1] for _, alt, _ in only] == ["target", "initial", "final"]

    (tmp_path / "elsewhere").mkdir()
    page = build(run, tmp_path / "elsewhere" / "r.html")
    match = FIGURE.search(page.read_text())
    assert match is not None and match.group(1).startswith("../run/media/judge/ep00000/")
    assert (page.parent / match.group(1)).is_file()


def _png_claiming(width: int, height: int) -> bytes:
    """A PNG signature and header declaring ``width`` x ``height``, and nothing else: a decompression bomb's head."""
    import struct
    import zlib

    ihdr = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))


@pytest.mark.timeout(30)  # a FIFO used to block the report's open() for ever
def test_the_report_reads_only_regular_pictures_inside_the_run_folder(tmp_path: Path) -> None:
    """A media index is data anyone who can write the run folder wrote: what it names outside the
    folder, a FIFO, and files that are not the picture their name says are skipped with a note that
    names the entry, never inlined, never waited on."""
    import os

    run = tmp_path / "run"
    hand_made_run(run)
    write_set(run, "judge", "ep00000", [("target", solid((200, 30, 30)))], caption="kept")
    secret = tmp_path / "outside.png"
    Image.fromarray(solid((1, 2, 3))).save(secret)
    folder = run / "media" / "judge" / "ep00000"
    Image.fromarray(solid((4, 5, 6))).save(folder / "gif-0-x.png", format="GIF")
    (folder / "text-0-x.jpg").write_text("not a picture\n")
    (folder / "bomb-0-x.png").write_bytes(_png_claiming(200_000, 200_000))
    (folder / "link-0-x.png").symlink_to(secret)
    os.mkfifo(folder / "fifo-0-x.png")
    (folder / "dir-0-x.png").mkdir()
    entries = {"absolute": str(secret), "dotdot": "../outside.png", "symlink": "media/judge/ep00000/link-0-x.png",
               "fifo": "media/judge/ep00000/fifo-0-x.png", "gif": "media/judge/ep00000/gif-0-x.png",
               "text": "media/judge/ep00000/text-0-x.jpg", "bomb": "media/judge/ep00000/bomb-0-x.png",
               "nul": "media/judge/\x00.png", "folder": "media/judge/ep00000/dir-0-x.png",
               "suffix": "summary.json"}
    with open(run / "media" / "judge" / "index.jsonl", "a") as fh:
        fh.write(json.dumps({"episode": "ep00000", "node": "judge", "row": "attack", "caption": "attack", "time": 1,
                             "pictures": [{"label": label, "path": path, "width": 300, "height": 200}
                                          for label, path in entries.items()]}) + "\n")

    html = build(run).read_text()
    card = cards(html)["ep00000"]
    assert [alt for row in rows(card) for _, alt, _ in row] == ["ep00000: target"]  # only the node's own picture
    notes = dict(re.findall(r'<div class="note skipped">media/judge/index.jsonl: picture &#39;(\w+)&#39; of row &#39;attack&#39; (.*?)</div>',
                            card))
    assert set(notes) == set(entries), notes
    for label in ("absolute", "dotdot", "symlink"):
        assert "skipped: it lies outside the run folder" in notes[label], notes[label]
    assert "not a regular file" in notes["fifo"] and "not a regular file" in notes["folder"]
    assert "is not a PNG picture, as its name &#39;gif-0-x.png&#39; says" in notes["gif"]
    assert "is not a JPEG picture" in notes["text"]
    assert "Pillow cannot read it as a PNG picture" in notes["bomb"]
    assert "not a usable path" in notes["nul"]
    assert "its name ends in .json, and a picture&#39;s in .png or .jpg" in notes["suffix"]
    assert "(path &#39;../outside.png&#39;)" in notes["dotdot"]


def test_report_out_must_name_an_html_file_it_may_write(tmp_path: Path) -> None:
    """``--out`` names the page: a folder there or in the way, something no regular file, or a file
    that is no HTML page (the run's own results.sqlite) is refused before any work, naming the path;
    an earlier report there is replaced."""
    import os

    from kernel.bus.errors import FramebusError  # launch's exit 2 for bad input; a bare OSError was a traceback

    run = tmp_path / "run"
    hand_made_run(run)
    (run / "results.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(100))
    (tmp_path / "afile").write_text("notes\n")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo.html")
    refused = {tmp_path / "folder": "it is a folder; --out names the HTML file to write",
               tmp_path / "afile" / "r.html": f"{tmp_path / 'afile'} is a file, not a folder",
               run / "results.sqlite": "it exists and is not an HTML page, so it is left alone",
               tmp_path / "afile": "it exists and is not an HTML page",
               tmp_path / "fifo.html": "it is not a regular file"}
    for out, why in refused.items():
        with pytest.raises(FramebusError) as exc:
            build(run, out)
        assert str(exc.value).startswith(f"cannot write the report to {out}: {why}"), str(exc.value)
    assert (run / "results.sqlite").read_bytes().startswith(b"SQLite format 3")
    assert (tmp_path / "afile").read_text() == "notes\n"
    page = build(run, tmp_path / "new" / "r.html")
    assert build(run, page) == page and page.read_text().startswith("<!doctype html>")


def test_a_node_attaches_pictures_off_the_loop_and_without_a_run_folder_keeps_none(tmp_path: Path) -> None:
    node = Node()
    node.id = "judge"
    node._rt = SimpleNamespace(run_dir=str(tmp_path))  # type: ignore[assignment]
    paths = asyncio.run(node.attach_images("ep/../x", [("target page", solid((1, 2, 3)))], caption="a/b"))
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == ["media/judge/ep_.._x/a_b-0-target_page.png"]
    (line,) = read_sets(tmp_path)
    assert (line["episode"], line["caption"], line["pictures"][0]["label"]) == ("ep/../x", "a/b", "target page")
    node._rt = SimpleNamespace(run_dir=None)  # type: ignore[assignment]
    assert asyncio.run(node.attach_images("ep00000", [("x", solid((0, 0, 0)))])) == []


# -- real runs -------------------------------------------------------------------------------------
def registered() -> dict[str, str]:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["framebus.nodes"]


def run_and_report(tmp_path: Path, launch_file: str, edit: Any, episodes: int) -> tuple[Path, str]:
    config = yaml.safe_load((ROOT / "launch" / launch_file).read_text())
    names = registered()
    for node in config["nodes"]:
        node["uses"] = names[node["uses"]]
    edit(config)
    config["run"]["episodes"] = episodes
    path = tmp_path / launch_file
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    shot = tmp_path / "report.png"
    result = launch("report", str(out), "--screenshot", str(shot), timeout=120)
    assert result.returncode == 0, result.stderr
    image = np.asarray(Image.open(shot).convert("RGB"))
    assert image.shape[1] == 1280 and len(np.unique(image.reshape(-1, 3)[::97], axis=0)) > 50  # not blank
    return out, (out / "report.html").read_text()


def side_by_side(browser, report: Path) -> list[list[dict[str, float]]]:
    """The boxes of each row's pictures as Chromium lays the report out."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(report.resolve().as_uri(), wait_until="load")
        return page.evaluate("""() => [...document.querySelectorAll('section.pics .pictures')].map(
            row => [...row.querySelectorAll('img')].map(img => {
                const b = img.getBoundingClientRect(); return {x: b.x, y: b.y, w: b.width, h: b.height}; }))""")
    finally:
        page.context.close()


def assert_beside(boxes: list[dict[str, float]], count: int) -> None:
    assert len(boxes) == count, boxes
    for left, right in zip(boxes, boxes[1:]):
        assert right["x"] >= left["x"] + left["w"] and abs(right["y"] - left["y"]) < 1 and left["w"] > 200, boxes


def alike(a: np.ndarray, b: np.ndarray) -> float:
    h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    return float(np.abs(a[:h, :w].astype(int) - b[:h, :w].astype(int)).mean())


@pytest.mark.skipif(chromium() is None, reason="no Chromium on this machine")
@pytest.mark.timeout(480)
def test_webui_gold_report_shows_each_generated_page_beside_its_target(tmp_path: Path, sync_chromium) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(ROOT / "nodes" / "browser" / "webui" / "tasks" / "form_login", tasks / "a_form_login")
    shutil.copytree(ROOT / "tests" / "data" / "webui" / "tea_counter", tasks / "b_tea_counter")  # no shots shipped

    def edit(config: dict[str, Any]) -> None:
        next(n for n in config["nodes"] if n["id"] == "env")["params"]["tasks"] = str(tasks)

    out, html = run_and_report(tmp_path, "webui_gold.yaml", edit, 2)
    shown = cards(html)
    assert list(shown) == ["ep00000", "ep00001"]
    for eid, stages in (("ep00000", 2), ("ep00001", 3)):  # as loaded, then after each interaction
        card = shown[eid]
        assert "aes <b>100</b>" in card
        assert len(re.findall(r"stage score 100\.0/100", card)) == stages, card[:2000]
        pictures = rows(card)
        assert len(pictures) == stages
        for (_, target_alt, target), (_, mine_alt, mine) in pictures:
            assert (target_alt, mine_alt) == (f"{eid}: target (ground truth)", f"{eid}: generated (the reply)")
            assert alike(target, mine) < 3  # the gold page looks like its target
        assert alike(pictures[0][0][2], pictures[-1][0][2]) > 0  # the interactions change the page
    boxes = side_by_side(sync_chromium, out / "report.html")
    assert len(boxes) == 5
    for row in boxes:
        assert_beside(row, 2)


@pytest.mark.skipif(chromium() is None, reason="no Chromium on this machine")
@pytest.mark.timeout(480)
def test_css_scripted_report_shows_target_initial_and_final_side_by_side(tmp_path: Path, sync_chromium) -> None:
    out, html = run_and_report(tmp_path, "css_scripted.yaml", lambda config: None, 2)
    shown = cards(html)
    assert list(shown) == ["ep00000", "ep00001"]
    records = {r["episode_id"]: r for r in map(json.loads, (out / "episodes.jsonl").read_text().splitlines())}
    for eid, card in shown.items():
        m = records[eid]["metrics"]
        assert "success <b>1</b>" in card and f"final_distance <b>{fmt(m['final_distance'])}</b>" in card
        (row,) = rows(card)
        labels = [alt.split(": ", 1)[1] for _, alt, _ in row]
        assert labels[0] == "target" and labels[1].startswith("initial (distance ") and labels[2].startswith("final")
        target, initial, final = (image for _, _, image in row)
        assert alike(final, target) < alike(initial, target)  # the fix shows
    for row in side_by_side(sync_chromium, out / "report.html"):
        assert_beside(row, 3)
