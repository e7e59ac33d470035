"""The login state a task starts in: WebArena's ``storage_state`` files, found or made.

WebArena and VWA tasks name a Playwright storage-state file, ``./.auth/<sites>_state.json``, which
their ``auto_login`` script writes by filling in each site's login form with the site's known
account; the name says which sites it logs in to (``gitlab.reddit_state.json``: GitLab and the
forum). Against the benchmark's own sites (``hosts:``) the user runs that script and gives the
folder it wrote (the env's ``auth_dir``); against our local sites the env asks each site node for
its ``site.login`` state instead, which needs no file (nodes/browser/sites/framework.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

STATE_SUFFIX = "_state.json"
AUTH_FOLDER = ".auth"  # where WebArena's auto_login writes, and where its tasks look


class MissingLoginState(FileNotFoundError):
    """A task's storage_state file is not there: the message names the task, the file and the places looked in."""


def state_sites(storage_state: str, task_sites: Iterable[str] = ()) -> list[str]:
    """The sites a state file logs in to, read from its name as WebArena names them
    (``gitlab.reddit_state.json`` -> gitlab, reddit); a file named otherwise stands for the task's sites."""
    name = PurePosixPath(storage_state.replace("\\", "/")).name
    if name.endswith(STATE_SUFFIX) and len(name) > len(STATE_SUFFIX):
        return [site for site in name[: -len(STATE_SUFFIX)].split(".") if site]
    return list(task_sites)


def state_file_candidates(storage_state: str, auth_dir: str | Path | None) -> list[Path]:
    """Where a task's storage_state may be: as given when absolute; else under ``auth_dir`` (or the
    working folder without one), and, when the path starts with WebArena's ``.auth/`` and
    ``auth_dir`` is that folder itself, its file name there."""
    given = Path(storage_state)
    if given.is_absolute():
        return [given]
    base = Path(auth_dir) if auth_dir is not None else Path.cwd()
    found = [base / given]
    parts = PurePosixPath(storage_state.replace("\\", "/")).parts
    if parts and parts[0] == "." and len(parts) > 1:
        parts = parts[1:]
    if auth_dir is not None and len(parts) > 1 and parts[0] == AUTH_FOLDER:
        found.append(base.joinpath(*parts[1:]))
    return found


def find_state_file(storage_state: str, auth_dir: str | Path | None, task: str) -> Path:
    """The state file of ``task`` (a label like "task 12"), or MissingLoginState saying what was looked for."""
    candidates = state_file_candidates(storage_state, auth_dir)
    for path in candidates:
        if path.is_file():
            return path
    sites = ", ".join(state_sites(storage_state)) or "its sites"
    where = " or ".join(str(p) for p in candidates)
    hint = ("give the env's auth_dir: the folder WebArena's auto_login script wrote (it logs in to "
            f"{sites} with their known accounts)" if auth_dir is None else
            f"run WebArena's auto_login script for {sites} with --auth_folder {auth_dir}")
    raise MissingLoginState(f"{task}: storage_state {storage_state} not found (looked for {where}); {hint}, "
                            "or serve those sites with site_nodes")


def merge_states(states: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One storage state from several sites' (their cookies and origins side by side)."""
    cookies: list[Any] = []
    origins: list[Any] = []
    for state in states:
        cookies += list(state.get("cookies") or [])
        origins += list(state.get("origins") or [])
    return {"cookies": cookies, "origins": origins}
