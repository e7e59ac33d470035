"""The two browser-rendered benchmarks' judges and steps: how long MageBench WebUI's AES judge takes
per page and how long a VAB-CSS step takes, measured in one run.

- ``aes_page_s``: the AES scorer (``nodes.browser.webui.scoring.score_folder``, what ``judge.webui``
  runs per page) on one generated page, p50 over ``--pages`` scorings in one warm browser
  (target <= 1 s on 2 cores). The page is the task's ground truth written to a fresh folder, as
  webui_gold's agent writes it, so every stage of the score (initial page and each scripted
  interaction, both pages driven) runs in full; a page with a broken style sheet is timed too
  (``aes_broken_page_s``), since a bad page must not cost more than a good one. The task is the
  pack's first bundled task if shipped, else tests/data/webui/tea_counter.
- ``css_step_p50_ms``: one ``css.env`` step that changes the page, from the reply to the new
  screenshot and its distance to the target: the tools read the Action line and edit the working
  copy, Chromium renders the full page, it is decoded and scored with VAB's SSIM rule (target
  <= 300 ms on 2 cores). The edits alternate between an instance's fix and its corruption, so
  every step really changes the page; one instance per project. ``css_render_p50_ms`` is the
  rendering alone, ``css_ssim_p50_ms`` the decoding and scoring alone.

The machine's 1-minute load average is printed beside them: these are wall-clock times on a
shared machine.

    python bench/webui.py [--json] [--pages 7] [--css-steps 24]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from nodes.browser.css import INSTANCES_PATH, PROJECTS_DIR  # noqa: E402
from nodes.browser.css.generate import apply, load  # noqa: E402
from nodes.browser.css.render import Renderer as CssRenderer  # noqa: E402
from nodes.browser.css.rules import Workspace  # noqa: E402
from nodes.browser.css.similarity import distance, gray  # noqa: E402
from nodes.browser.css.tools import CssTools  # noqa: E402
from nodes.browser.webui.env import task_folders  # noqa: E402
from nodes.browser.webui.reply import FILES  # noqa: E402
from nodes.browser.webui.render import Renderer as WebUIRenderer  # noqa: E402
from nodes.browser.webui.scoring import score_folder  # noqa: E402
from nodes.browser.webui.task import load_task  # noqa: E402


def _p50(values: list[float]) -> float:
    return statistics.median(values)


async def aes_times(pages: int) -> dict[str, Any]:
    """Seconds per AES scoring of the gold page and of a broken one, after one warm-up each."""
    task = load_task(task_folders("")[0])
    renderer = WebUIRenderer()
    gold, broken, aes = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        good_dir, bad_dir = Path(tmp) / "good", Path(tmp) / "bad"
        for folder in (good_dir, bad_dir):
            folder.mkdir()
            for name in FILES:
                if (task.root / name).is_file():
                    shutil.copy(task.root / name, folder / name)
            if (task.root / "_images").is_dir():
                shutil.copytree(task.root / "_images", folder / "_images")
        (bad_dir / "style.css").write_text("body { display: flex; flex-direction: column-reverse } * { float: right",
                                           encoding="utf-8")
        try:
            for times, folder in ((gold, good_dir), (broken, bad_dir)):
                for i in range(pages + 1):
                    start = time.perf_counter()
                    report = await score_folder(renderer, task, folder)
                    if i:  # the first one warms the browser up
                        times.append(time.perf_counter() - start)
                    if folder is good_dir:
                        aes.append(report.aes)
        finally:
            await renderer.close()
    return {"task": task.name, "gold": gold, "broken": broken, "gold_aes": aes[-1]}


async def css_times(steps: int) -> dict[str, Any]:
    """Milliseconds per CSS step (edit -> screenshot -> distance), and its rendering and scoring parts."""
    instances = load(INSTANCES_PATH)
    picks = [next(i for i in instances if i.project == p) for p in sorted({i.project for i in instances})]
    renderer = CssRenderer()
    step_ms, render_ms, ssim_ms = [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            setups = []
            for inst in picks:
                target = gray(await renderer.screenshot(PROJECTS_DIR / inst.project))
                folder = Path(tmp) / inst.id
                apply(Workspace.create(PROJECTS_DIR / inst.project, folder), inst)
                setups.append((inst, target, folder, CssTools(Workspace(folder, PROJECTS_DIR / inst.project))))
                await renderer.screenshot(folder)  # warm-up
            for k in range(steps):
                inst, target, folder, tools = setups[k % len(setups)]
                value = inst.original if (k // len(setups)) % 2 == 0 else (inst.corrupted or "initial")
                reply = f"Thought: try it.\nAction: edit_rule({inst.selector!r}, {inst.property!r}, {value!r})"
                start = time.perf_counter()
                result = tools.step(reply)
                assert result.changed, result.feedback
                png = await renderer.screenshot(folder)
                shot = time.perf_counter()
                with Image.open(io.BytesIO(png)) as image:
                    current = np.asarray(image.convert("RGB"))
                distance(target, current)
                end = time.perf_counter()
                step_ms.append((end - start) * 1e3)
                render_ms.append((shot - start) * 1e3)
                ssim_ms.append((end - shot) * 1e3)
    finally:
        await renderer.close()
    return {"step": step_ms, "render": render_ms, "ssim": ssim_ms, "instances": [i.id for i in picks]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--pages", type=int, default=7, help="AES scorings timed per page kind (after a warm-up)")
    parser.add_argument("--css-steps", type=int, default=24, help="CSS steps timed (after one warm-up per project)")
    args = parser.parse_args()
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    aes = asyncio.run(aes_times(args.pages))
    css = asyncio.run(css_times(args.css_steps))
    out = {
        "aes_page_s": round(_p50(aes["gold"]), 3),
        "aes_page_max_s": round(max(aes["gold"]), 3),
        "aes_broken_page_s": round(_p50(aes["broken"]), 3),
        "aes_gold_score": round(aes["gold_aes"], 2),
        "aes_task": aes["task"],
        "css_step_p50_ms": round(_p50(css["step"]), 1),
        "css_step_p90_ms": round(statistics.quantiles(css["step"], n=10)[-1], 1),
        "css_render_p50_ms": round(_p50(css["render"]), 1),
        "css_ssim_p50_ms": round(_p50(css["ssim"]), 1),
        "css_instances": css["instances"],
        "samples": {"aes_pages": len(aes["gold"]), "css_steps": len(css["step"])},
        "load_average_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
        "cpus": os.cpu_count(),
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"AES judge per page: p50 {out['aes_page_s']} s (broken page {out['aes_broken_page_s']} s) on "
              f"{out['aes_task']}; CSS step (edit -> screenshot -> SSIM): p50 {out['css_step_p50_ms']} ms "
              f"(render {out['css_render_p50_ms']} ms, SSIM {out['css_ssim_p50_ms']} ms); load average "
              f"{out['load_average_1m']}; {out['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
