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
  screenshot: the tools read the Action line and edit the working copy, Chromium renders the full
  page and it is decoded to the pixels the agent is sent (target <= 300 ms on 2 cores). The edits
  alternate between an instance's fix and its corruption, so every step really changes the page;
  one instance per project. ``css_render_p50_ms`` is the edit and the rendering without the
  decoding. ``css_ssim_p50_ms`` is the distance to the target with VAB's SSIM rule (in a worker
  thread), which ``css.env`` computes once per episode, on the last rendering.

The parts: ``aes_render_collect_s`` is the browser's share of a scoring (loading both pages,
running the interactions, collecting the elements), ``aes_scoring_s`` the Python matching and
scoring (``score_page``). With ``--compare`` (the default) the previous paths run in the same
process, interleaved with the current ones so both see the same load, and are printed beside them
under ``baseline``: AES with a fresh browser context per page (``reuse_pages=False``), the CSS step
with a fresh context and ``page.screenshot`` per render and scikit-image's SSIM on the whole pair at every step
(``similarity``). The two CSS paths must give the same distances (``css_same_distances``).

The machine's load averages are recorded at the start and the end: these are wall-clock times on a
shared machine. So the current paths' CPU time is recorded too, which a loaded machine does not
inflate the way it inflates wall-clock time: ``css_step_cpu_ms`` this process's and (``browser``)
Chromium's and Playwright's driver's, read from /proc (the kept page's processes live on, so the
difference is the step's); ``aes_cpu_s`` only this process's, since AES's renderer processes come
and go with their contexts and take their CPU time with them.

    python bench/webui.py [--json] [--pages 7] [--css-steps 24] [--no-compare]
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
from nodes.browser.css.render import ORIGIN as CSS_ORIGIN  # noqa: E402
from nodes.browser.css.render import Renderer as CssRenderer  # noqa: E402
from nodes.browser.css.render import decode  # noqa: E402
from nodes.browser.css.rules import Workspace  # noqa: E402
from nodes.browser.css.similarity import Target, distance  # noqa: E402
from nodes.browser.css.tools import CssTools  # noqa: E402
from nodes.browser.webui import scoring  # noqa: E402
from nodes.browser.webui.env import task_folders  # noqa: E402
from nodes.browser.webui.render import Renderer as WebUIRenderer  # noqa: E402
from nodes.browser.webui.reply import FILES  # noqa: E402
from nodes.browser.webui.task import load_task  # noqa: E402


def _p50(values: list[float]) -> float:
    return statistics.median(values)


class _ScoreClock:
    """Sums the time spent in ``scoring.score_page`` (the Python part of a scoring) while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._real = scoring.score_page

    def __enter__(self) -> _ScoreClock:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return self._real(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        scoring.score_page = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        scoring.score_page = self._real  # type: ignore[assignment]


def _children_cpu() -> float:
    """CPU seconds used so far by this process's descendants (Chromium and Playwright's driver), from
    /proc; 0 where there is no /proc. Read outside the timed windows."""
    me, parent, used = os.getpid(), {}, {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)], used[int(entry)] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
    total = 0.0
    for pid, cpu in used.items():
        up = parent.get(pid, 0)
        while up > 1 and up != me:
            up = parent.get(up, 0)
        total += cpu if up == me else 0.0
    return total


def _page_folders(task: Any, tmp: Path) -> tuple[Path, Path]:
    """The task's ground truth copied as a generated page, and the same page with a broken style sheet."""
    good_dir, bad_dir = tmp / "good", tmp / "bad"
    for folder in (good_dir, bad_dir):
        folder.mkdir()
        for name in FILES:
            if (task.root / name).is_file():
                shutil.copy(task.root / name, folder / name)
        if (task.root / "_images").is_dir():
            shutil.copytree(task.root / "_images", folder / "_images")
    (bad_dir / "style.css").write_text("body { display: flex; flex-direction: column-reverse } * { float: right",
                                       encoding="utf-8")
    return good_dir, bad_dir


async def aes_times(pages: int, compare: bool) -> dict[str, Any]:
    """Seconds per AES scoring of the gold page and of a broken one, after one warm-up each, and the
    Python scoring's share; with ``compare`` the fresh-context path too, interleaved."""
    task = load_task(task_folders("")[0])
    paths = {"current": WebUIRenderer()}
    if compare:
        paths["baseline"] = WebUIRenderer(reuse_pages=False)
    out: dict[str, dict[str, Any]] = {k: {"gold": [], "broken": [], "scoring": [], "cpu_py": []}
                                      for k in paths}
    with tempfile.TemporaryDirectory() as tmp:
        good_dir, bad_dir = _page_folders(task, Path(tmp))
        try:
            for kind, folder in (("gold", good_dir), ("broken", bad_dir)):
                for i in range(pages + 1):
                    for name, renderer in paths.items():
                        py_cpu = time.process_time()
                        with _ScoreClock() as clock:
                            start = time.perf_counter()
                            report = await scoring.score_folder(renderer, task, folder)
                            elapsed = time.perf_counter() - start
                        py_cpu = time.process_time() - py_cpu
                        if i:  # the first one warms the browser up
                            out[name][kind].append(elapsed)
                            if kind == "gold":
                                out[name]["scoring"].append(clock.seconds)
                                if renderer.reuse_pages:
                                    out[name]["cpu_py"].append(py_cpu)
                        if kind == "gold":
                            out[name]["aes"] = report.aes
        finally:
            for renderer in paths.values():
                await renderer.close()
    return {"task": task.name, **out}


async def _fresh_screenshot(renderer: CssRenderer, folder: Path) -> bytes:
    """The previous CSS rendering path: a fresh context per render and Playwright's page.screenshot."""
    await renderer.start()
    assert renderer._browser is not None
    root = folder.resolve()
    context = await renderer._browser.new_context(
        viewport={"width": renderer.viewport[0], "height": renderer.viewport[1]}, device_scale_factor=1,
        service_workers="block", java_script_enabled=False)
    try:
        await context.route("**/*", lambda route: renderer._serve(route, root))
        tab = await context.new_page()
        await tab.goto(f"{CSS_ORIGIN}/index.html", wait_until="load")
        return await tab.screenshot(full_page=True, animations="disabled", caret="hide")
    finally:
        await context.close()


def _baseline_distance(target_gray: np.ndarray, png: bytes) -> float:
    """The previous scoring path: PIL decoding, then scikit-image's SSIM on the whole pair."""
    with Image.open(io.BytesIO(png)) as image:
        current = np.asarray(image.convert("RGB"))
    return distance(target_gray, current)


async def css_times(steps: int, compare: bool) -> dict[str, Any]:
    """Milliseconds per CSS step (edit -> screenshot -> pixels), its rendering, and the scoring of its
    page; with ``compare`` the previous path (which scored every step) renders and scores every same
    state too."""
    instances = load(INSTANCES_PATH)
    picks = [next(i for i in instances if i.project == p) for p in sorted({i.project for i in instances})]
    renderer = CssRenderer()
    times: dict[str, dict[str, list[float]]] = {k: {"step": [], "render": [], "ssim": [], "cpu_py": [],
                                                    "cpu_browser": []} for k in ("current", "baseline")}
    same = True
    try:
        with tempfile.TemporaryDirectory() as tmp:
            setups = []
            for inst in picks:
                png = await renderer.screenshot(PROJECTS_DIR / inst.project)
                target = await asyncio.to_thread(Target, png)
                folder = Path(tmp) / inst.id
                apply(Workspace.create(PROJECTS_DIR / inst.project, folder), inst)
                setups.append((inst, target, folder, CssTools(Workspace(folder, PROJECTS_DIR / inst.project))))
                await renderer.screenshot(folder)  # warm-up
            for k in range(steps):
                inst, target, folder, tools = setups[k % len(setups)]
                value = inst.original if (k // len(setups)) % 2 == 0 else (inst.corrupted or "initial")
                reply = f"Thought: try it.\nAction: edit_rule({inst.selector!r}, {inst.property!r}, {value!r})"
                browser_cpu, py_cpu = _children_cpu(), time.process_time()
                start = time.perf_counter()
                result = tools.step(reply)
                assert result.changed, result.feedback
                edited = time.perf_counter()
                png = await renderer.screenshot(folder)
                shot = time.perf_counter()
                pixels = await asyncio.to_thread(decode, png)
                stepped = time.perf_counter()
                py_cpu, browser_cpu = time.process_time() - py_cpu, _children_cpu() - browser_cpu
                now = await asyncio.to_thread(target.distance, pixels)  # css.env: once, at the episode's end
                end = time.perf_counter()
                mine = times["current"]
                mine["cpu_py"].append(py_cpu * 1e3)
                mine["cpu_browser"].append(browser_cpu * 1e3)
                mine["step"].append((stepped - start) * 1e3)
                mine["render"].append((shot - start) * 1e3)
                mine["ssim"].append((end - stepped) * 1e3)
                if compare:
                    before = time.perf_counter()
                    png = await _fresh_screenshot(renderer, folder)
                    shot = time.perf_counter()
                    then = await asyncio.to_thread(_baseline_distance, target.gray, png)
                    end = time.perf_counter()
                    base = times["baseline"]
                    base["step"].append((edited - start + end - before) * 1e3)  # the same edit, then its path
                    base["render"].append((edited - start + shot - before) * 1e3)
                    base["ssim"].append((end - shot) * 1e3)
                    same = same and now == then
    finally:
        await renderer.close()
    return {**times, "instances": [i.id for i in picks], "same": same}


def _summary(aes: dict[str, Any], css: dict[str, list[float]]) -> dict[str, Any]:
    gold = aes["gold"]
    cpu = {}
    if aes["cpu_py"]:  # Chromium's processes come and go with contexts there: only this process's is measured
        cpu["aes_cpu_s"] = {"python": round(_p50(aes["cpu_py"]), 3)}
    if css["cpu_py"]:
        cpu["css_step_cpu_ms"] = {"python": round(_p50(css["cpu_py"]), 1), "browser": round(_p50(css["cpu_browser"]), 1)}
    return {**cpu,
        "aes_page_s": round(_p50(gold), 3),
        "aes_page_max_s": round(max(gold), 3),
        "aes_broken_page_s": round(_p50(aes["broken"]), 3),
        "aes_render_collect_s": round(_p50([g - s for g, s in zip(gold, aes["scoring"])]), 3),
        "aes_scoring_s": round(_p50(aes["scoring"]), 4),
        "aes_gold_score": round(aes["aes"], 2),
        "css_step_p50_ms": round(_p50(css["step"]), 1),
        "css_step_p90_ms": round(statistics.quantiles(css["step"], n=10)[-1], 1),
        "css_render_p50_ms": round(_p50(css["render"]), 1),
        "css_ssim_p50_ms": round(_p50(css["ssim"]), 1),
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--pages", type=int, default=7, help="AES scorings timed per page kind (after a warm-up)")
    parser.add_argument("--css-steps", type=int, default=24, help="CSS steps timed (after one warm-up per project)")
    parser.add_argument("--no-compare", dest="compare", action="store_false",
                        help="skip the previous paths (baseline), which otherwise run interleaved")
    args = parser.parse_args()
    started = time.monotonic()
    load_start = _load()
    aes = asyncio.run(aes_times(args.pages, args.compare))
    css = asyncio.run(css_times(args.css_steps, args.compare))
    out: dict[str, Any] = {
        **_summary(aes["current"], css["current"]),
        "aes_task": aes["task"],
        "css_instances": css["instances"],
        "targets": {"aes_page_s": 1.0, "css_step_p50_ms": 300.0},
        "samples": {"aes_pages": len(aes["current"]["gold"]), "css_steps": len(css["current"]["step"])},
        "load_average": {"start": load_start, "end": _load(), "of": "1, 5, 15 min"},
        "load_average_1m": {"start": load_start[0], "end": _load()[0]},
        "cpus": os.cpu_count(),
    }
    if args.compare:
        out["baseline"] = _summary(aes["baseline"], css["baseline"])
        out["css_same_distances"] = css["same"]
    out["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"load average (1, 5, 15 min): start {out['load_average']['start']}, end {out['load_average']['end']}; "
          f"{out['cpus']} cpus; AES task {out['aes_task']}; {out['seconds']} s")
    keys = [k for k in _summary(aes["current"], css["current"]) if k != "aes_gold_score"] + ["aes_gold_score"]
    print(f"{'':24} {'now':>10} {'baseline':>10}")
    for key in keys:
        base = out.get("baseline", {}).get(key, "")
        print(f"{key:24} {str(out[key]):>10} {str(base):>10}")
    if args.compare:
        print(f"same CSS distances on both paths: {out['css_same_distances']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
