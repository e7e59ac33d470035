"""The Minecraft pack's first-person view: prismarine-viewer in headless Chromium, screenshotted.

One world for all checks (js/view_demo.js: a flying-squid 1.16.5 server with a superflat world, a
wall of coloured wool and a tree north of the bot's spawn): starting Node.js and Chromium is the
slow part, the frames after the first take a fraction of a second.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from skimage.metrics import structural_similarity

from kernel.tools.report.shot import chromium
from nodes.game.minecraft.view import FRAME_SIZE, View, ViewError

JS = Path(__file__).resolve().parents[1] / "nodes" / "game" / "minecraft" / "js"
NORTH, WEST = 0.0, 1.5  # mineflayer yaw, radians: 0 faces north (the wall), pi/2 west


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    return float(structural_similarity(a, b, channel_axis=2))


def needs_world() -> str:
    if shutil.which("node") is None:
        pytest.skip("no Node.js on this machine (Debian's nodejs; setup.sh installs it)")
    if not (JS / "node_modules" / "prismarine-viewer").is_dir():
        pytest.skip(f"{JS / 'node_modules'} is not installed (setup.sh runs npm ci there)")
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium on this machine (Debian's chromium; setup.sh installs it)")
    return exe


class Demo:
    """js/view_demo.js as a child process, driven line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls) -> tuple[Demo, dict]:
        proc = await asyncio.create_subprocess_exec("node", "view_demo.js", cwd=JS, stdin=subprocess.PIPE,
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        demo = cls(proc)
        try:
            return demo, await demo.reply(30)
        except BaseException:
            await demo.stop()
            raise

    async def reply(self, timeout_s: float = 10) -> dict:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout_s)
        if not line:
            err = await self.proc.stderr.read() if self.proc.stderr else b""
            raise AssertionError(f"view_demo.js ended: {err.decode(errors='replace')[-2000:]}")
        return json.loads(line)

    async def look(self, yaw: float, pitch: float = 0.0) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"look {yaw} {pitch}\n".encode())
        await self.proc.stdin.drain()
        answer = await self.reply()
        assert answer["ok"], answer
        return answer["pose"]

    async def place(self, x: int, y: int, z: int, name: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"place {x} {y} {z} {name}\n".encode())
        await self.proc.stdin.drain()
        answer = await self.reply()
        assert answer["ok"], answer

    async def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # the demo exits when its stdin closes
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()


async def test_first_person_frames_are_fixed_size_stable_and_follow_the_bot():
    exe = needs_world()
    demo, hello = await Demo.start()
    try:
        assert hello["view"].startswith("http://127.0.0.1:")
        async with View(hello["view"], executable=exe, timeout_s=40) as view:
            north = await view.frame()
            first = view.last
            assert north.shape == (FRAME_SIZE[1], FRAME_SIZE[0], 3) == (360, 640, 3)
            assert north.dtype == np.uint8
            # sky above, grass below: the top rows are blue-ish, the bottom rows green-ish, and the
            # picture is far from one colour
            sky, ground = north[:40].reshape(-1, 3).mean(0), north[-40:].reshape(-1, 3).mean(0)
            assert sky[2] > sky[0] + 20 and ground[1] > ground[2] + 20, (sky, ground)
            assert north.std() > 30
            assert len(np.unique(north.reshape(-1, 3), axis=0)) > 200

            again = await view.frame()
            assert ssim(north, again) > 0.99

            turned_pose = await demo.look(WEST)
            assert turned_pose["yaw"] == pytest.approx(WEST, abs=0.01)
            west = await view.frame()
            assert ssim(north, west) < 0.8

            await demo.look(NORTH)
            back = await view.frame()
            assert ssim(north, back) > 0.99
            per_frame = view.last

            # a block set in front of the bot's eyes (it stands at x 8.5, z 8.5, eyes at y 6.6) is in
            # the very next frame: the view waits for the block update to be meshed
            await demo.place(8, 6, 7, "red_wool")
            blocked = await view.frame()
            r, g, b = blocked[150:210, 280:360].reshape(-1, 3).mean(0)
            assert r > 100 and r > g + 50 and r > b + 50, (r, g, b)
            assert ssim(north, blocked) < 0.8
        # a browser window of another size than the view was served for gives no frame, and says why
        async with View(hello["view"], size=(320, 180), executable=exe, timeout_s=3) as small:
            with pytest.raises(ViewError, match="the window is 320x180, the view is served for 640x360"):
                await small.frame()
        print(f"first frame {first.total_ms:.0f} ms {first.phases} {first.meshing}; a later one {per_frame.total_ms:.0f} ms "
              f"(drawn {per_frame.draw_ms:.0f}, read back {per_frame.read_ms:.0f})")
    finally:
        await demo.stop()
    assert demo.proc.returncode == 0


async def test_a_page_that_is_not_the_view_fails_clearly(tmp_path: Path):
    exe = needs_world()
    page = tmp_path / "plain.html"
    page.write_text("<!DOCTYPE html><p>not a view</p>")
    with pytest.raises(ViewError, match="not a framebus view page"):
        async with View(page.as_uri(), executable=exe, timeout_s=10):
            pass
    with pytest.raises(FileNotFoundError, match="Chromium not found at /nonexistent/chromium"):
        await View(page.as_uri(), executable="/nonexistent/chromium").start()
    with pytest.raises(ValueError, match="positive integers"):
        View("http://127.0.0.1:1/", size=(640, 0))
