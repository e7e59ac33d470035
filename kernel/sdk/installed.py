"""Where framebus's own files are, the same way for a wheel in site-packages and for a checkout.

A wheel has no repository root to climb to from ``__file__``: the kernel asks importlib.resources
for a package's folder and looks inside it. The bundled launch files are package data of
``kernel.launchfile`` (in a checkout, ``kernel/launchfile/bundled`` links to the top-level
``launch/`` folder, so they stay where users find them and ship in the wheel all the same).
"""

from __future__ import annotations

import importlib.metadata
import re
from importlib.resources import files
from pathlib import Path

#: import names whose distribution is named otherwise (the rest match once normalised: ale_py, ale-py)
DISTRIBUTION_OF = {"PIL": "pillow", "skimage": "scikit-image", "bs4": "beautifulsoup4",
                   "multipart": "python-multipart", "gfootball_engine": "gfootball"}


def package_folder(package: str) -> Path:
    """The folder holding ``package``'s files. framebus hands paths to node processes and to
    YAML includes, so it must be installed as files (as pip does), never imported from a zip."""
    found = files(package)
    if not isinstance(found, Path):
        raise RuntimeError(f"{package} is imported from {found}, which is not a folder: install framebus with pip")
    return found.resolve()


def import_root() -> Path:
    """The folder on ``sys.path`` that holds this ``kernel``: a child process given it on
    ``PYTHONPATH`` imports the same framebus, installed or a checkout run in place."""
    return package_folder("kernel").parent


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras_for(module: str) -> list[str]:
    """The optional dependency groups of the installed framebus (``games`` for ``framebus[games]``)
    that install the top-level module of ``module``: a pack's import that fails in a smaller
    install can say what to add. None for a checkout that was never installed."""
    top = module.split(".")[0]
    wanted = _normal(DISTRIBUTION_OF.get(top, top))
    try:
        requirements = importlib.metadata.requires("framebus") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    found: list[str] = []
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        if name and extra and _normal(name.group()) == wanted and extra.group(1) not in found:
            found.append(extra.group(1))
    return found


def install_hint(module: str) -> str | None:
    """What to run to get ``module`` (``pip install 'framebus[games]'``), or None if no extra brings it."""
    extras = [f"'framebus[{extra}]'" for extra in extras_for(module)]
    if not extras:
        return None
    return f"pip install {extras[0]}" if len(extras) == 1 else f"pip install one of {', '.join(extras)}"
