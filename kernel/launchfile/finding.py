"""Finding launch files by path or bare name (``FRAMEBUS_LAUNCH_PATH``, then the bundled ones)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kernel.launchfile.errors import LaunchError, closest
from kernel.sdk.installed import package_folder

LAUNCH_PATH_ENV = "FRAMEBUS_LAUNCH_PATH"
YAML_SUFFIXES = (".yaml", ".yml")


def bundled_dir() -> Path:
    """The launch files shipped with framebus, found by bare name: package data of this package in
    a wheel; in a checkout the ``bundled`` link resolves to the repository's ``launch/`` folder, so
    a path shown to the user is the file to edit."""
    return (package_folder("kernel.launchfile") / "bundled").resolve()


def _search_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    extra = [Path(d) for d in env.get(LAUNCH_PATH_ENV, "").split(os.pathsep) if d]
    return [*extra, bundled_dir()]


def yaml_files(directory: Path) -> list[Path]:
    """The launch files in ``directory``; none when it does not exist (glob yields nothing then)."""
    return sorted(p for suffix in YAML_SUFFIXES for p in directory.glob("*" + suffix) if p.is_file())


def known_names(environ: Mapping[str, str] | None) -> list[str]:
    stems = [path.stem for directory in _search_dirs(environ) for path in yaml_files(directory)]
    return list(dict.fromkeys(stems))  # each name once, where it is found first


def find(name: str | Path, cwd: Path | None, environ: Mapping[str, str] | None) -> Path | None:
    """An existing path (relative to ``cwd``) first, so that a local file can shadow a bundled one;
    otherwise a bare name looked up on ``FRAMEBUS_LAUNCH_PATH`` and then among the bundled files."""
    here = Path(name) if cwd is None else cwd / name  # an absolute name stays itself
    if here.is_file():
        return here
    if Path(name).name != str(name):  # a path, not a bare name
        return None
    suffixes = ("",) if str(name).endswith(YAML_SUFFIXES) else ("", *YAML_SUFFIXES)
    for directory in _search_dirs(environ):
        for suffix in suffixes:
            path = directory / f"{name}{suffix}"
            if path.is_file():
                return path
    return None


def resolve_path(name: str | Path, cwd: Path | None = None, *,
                 environ: Mapping[str, str] | None = None) -> Path:
    """Find a launch file the way a user would expect from the command line (see :func:`find`)."""
    found = find(name, cwd, environ)
    if found is not None:
        return found
    known = known_names(environ)
    given = Path(name)
    stem = given.stem if given.suffix in YAML_SUFFIXES else given.name
    raise LaunchError(f"launch file '{name}' not found", file=None, allowed=known,
                      suggestion=closest(stem, known))
