"""Render a report in headless Chromium and save a PNG: the check that the page really looks right.

Playwright drives the system's Chromium (``/usr/bin/chromium``, or ``FRAMEBUS_CHROMIUM``); it never
downloads a browser of its own. The flags keep Chromium off the network and quiet in containers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str | None:
    """The Chromium binary to use, or None when there is none on this machine."""
    wanted = os.environ.get("FRAMEBUS_CHROMIUM")
    if wanted:
        return wanted if Path(wanted).exists() else None
    for name in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if Path(name).exists():
            return name
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(html: Path, png: Path, *, width: int = 1280, full_page: bool = True) -> Path:
    """Open ``html`` from disk (no server: the page is self-contained) and save a screenshot."""
    from playwright.sync_api import sync_playwright

    exe = chromium()
    if exe is None:  # FileNotFoundError: `launch` reports it as an error line (rc 2), not a traceback
        wanted = os.environ.get("FRAMEBUS_CHROMIUM")
        where = f"FRAMEBUS_CHROMIUM={wanted} does not exist" if wanted else "none in /usr/bin or on PATH"
        raise FileNotFoundError(f"no Chromium for the screenshot ({where}): install the chromium package, "
                                f"or set FRAMEBUS_CHROMIUM to its path; the report itself was written")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(html.resolve().as_uri(), wait_until="load")
            page.screenshot(path=str(png), full_page=full_page)
        finally:
            browser.close()
    return png
