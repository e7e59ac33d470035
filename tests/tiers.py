"""The suite's tiers, worked out from what a test uses, and the guard that keeps the `unit` tier honest.

A test's tier is the heaviest thing it reaches: its own code and the helpers and fixtures it calls,
read from their code objects and followed through the tests' and the project's own functions and
classes down to a root (``ROOTS``: subprocess, Playwright, Ray, ...); a test that runs processes and
names a launch file serving the model is a model test. Nobody tags a test by hand; a helper or
fixture that starts something the code does not name says so once, with ``@uses(...)``. A test that
lands in `unit` and still starts a process fails (``SpawnGuard``), so a missed root shows up as a red
test naming the command it started, never as a slow fast tier.

It reads code, it does not run it, so it errs heavy: a name reached in a branch never taken still
counts. `--tiers` shows each test's chain of names.

`soak` is the one tier that is chosen, not found: a long run is a decision (``@pytest.mark.soak``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import multiprocessing.util
import os
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]

#: lightest first; a test gets the heaviest it reaches
TIERS = ("unit", "process", "browser", "model", "cluster", "soak")
RANK = {t: i for i, t in enumerate(TIERS)}

#: what starts something, by dotted name (a module, or a module's function or class): a use of the
#: name, or of anything under it, puts a test in that tier
ROOTS: dict[str, str] = {
    "subprocess": "process",
    "multiprocessing": "process",
    "os.fork": "process",
    "os.forkpty": "process",
    "os.system": "process",
    "os.popen": "process",
    "os.posix_spawn": "process",
    "os.posix_spawnp": "process",
    "os.spawnv": "process",
    "asyncio.create_subprocess_exec": "process",
    "asyncio.create_subprocess_shell": "process",
    "kernel.testing.Harness": "process",  # the nodes under test are processes
    "kernel.graph.runner": "process",  # a graph's nodes
    "kernel.gym.GraphEnv": "process",
    "nodes.game.mqtt.broker": "process",  # mosquitto
    "nodes.model.server.ManagedServer": "model",
    "playwright.async_api.async_playwright": "browser",
    "playwright.sync_api.sync_playwright": "browser",
    "kernel.tools.report.shot.screenshot": "browser",
    "ray": "cluster",
}

F = TypeVar("F", bound=Callable[..., Any])


def uses(tier: str) -> Callable[[F], F]:
    """Say that a helper or fixture starts what ``tier`` stands for, so every test that reaches it
    lands there (put it under ``@pytest.fixture``)."""
    if tier not in RANK:
        raise ValueError(f"unknown tier {tier!r}; the tiers are {', '.join(TIERS)}")

    def mark(fn: F) -> F:
        fn.__framebus_tier__ = tier  # type: ignore[attr-defined]
        return fn

    return mark


def heaviest(tiers: Iterable[str]) -> str:
    return max(tiers, key=RANK.__getitem__, default="unit")


def _root_tier(dotted: str) -> str | None:
    found = [t for name, t in ROOTS.items() if dotted == name or dotted.startswith(name + ".")]
    return heaviest(found) if found else None


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """A code object and those nested in it (inner functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _strings(code: types.CodeType) -> Iterator[str]:
    for c in _codes(code):
        for const in c.co_consts:
            if isinstance(const, str):
                yield const
            elif isinstance(const, tuple):
                yield from (s for s in const if isinstance(s, str))


_LAUNCH_NAME = re.compile(r"^[\w.-]+?(\.yaml)?$")


@functools.cache
def _serves_model(name: str) -> bool:
    """Whether a bundled launch file (or one it includes) serves the embedded model."""
    path = ROOT / "launch" / f"{name.removesuffix('.yaml')}.yaml"
    return path.is_file() and _text_serves_model(path.read_text())


def _text_serves_model(text: str) -> bool:
    if re.search(r"kind:\s*vllm", text):
        return True
    return any(_serves_model(n.strip().strip("'\"")) for inc in re.findall(r"include:\s*\[([^\]]*)\]", text)
               for n in inc.split(","))


def _names_a_model(s: str) -> bool:
    """A string of a test that is, or names, a launch file serving the model."""
    if "\n" in s or len(s) > 200:  # a launch file written inline by the test
        return _text_serves_model(s)
    return bool(_LAUNCH_NAME.match(s)) and _serves_model(s)


#: whose code is read in turn: the tests' helpers and the project's own (a node class that starts
#: Chromium in its setup takes its tests with it); libraries are roots or nothing
FOLLOWED = ("tests", "kernel", "nodes", "bench")


def is_followed(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in FOLLOWED or module.startswith("test_") or module == "conftest"


def _dotted(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qual, str):
        return f"{module}.{qual}"
    return None


Found = tuple[str, tuple[str, ...]]  # a tier, and the names that lead to it ("launch", "subprocess")
UNIT: Found = ("unit", ())


def pick(found: Iterable[Found]) -> Found:
    return max(found, key=lambda f: RANK[f[0]], default=UNIT)


def _via(name: str, found: Found) -> Found:
    return (found[0], (name, *found[1]))


class Classifier:
    """Works out tiers, and the chain of names behind each (``explain``); memoised, since every test
    of a module shares most of its helpers."""

    def __init__(self) -> None:
        self._seen: dict[int, Found] = {}

    def of_callable(self, fn: Any) -> str:
        return self.found(fn)[0]

    def found(self, fn: Any) -> Found:
        fn = inspect.unwrap(fn)
        key = id(fn)
        if key in self._seen:
            return self._seen[key]
        self._seen[key] = UNIT  # a helper that reaches itself
        result = self._compute(fn)
        self._seen[key] = result
        return result

    def _compute(self, obj: Any) -> Found:
        found: list[Found] = []
        declared = getattr(obj, "__framebus_tier__", None)
        if isinstance(declared, str):
            found.append((declared, ("@uses",)))
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    found.append(_via(attr, self.found(member)))
            return pick(found)
        code = getattr(obj, "__code__", None)
        if not isinstance(code, types.CodeType):
            return pick(found)
        names = {n for c in _codes(code) for n in c.co_names}
        scope = dict(getattr(obj, "__globals__", {}))
        if getattr(obj, "__closure__", None):
            scope.update({n: cell.cell_contents for n, cell in zip(code.co_freevars, obj.__closure__)
                          if _has(cell)})
            names |= set(code.co_freevars)
        # an import inside the function names its module here ("playwright.sync_api"), and what it
        # takes from it beside it ("kernel.testing", "Harness")
        found += [(t, (name,)) for name in names if (t := _root_tier(name))]
        found += [(t, (name, n)) for name in names if "." in name for n in names
                  if (t := _root_tier(f"{name}.{n}"))]
        for name in names:
            module = _module(name) if "." in name or name in FOLLOWED else None
            if module is not None:
                found.append(_via(name, self.of_object(module, names)))
        for name in names:
            if name in scope:
                found.append(_via(name, self.of_object(scope[name], names)))
        result = pick(found)
        # naming a launch file starts nothing, but running one that serves the model starts vLLM
        if RANK[result[0]] >= RANK["process"] and RANK[result[0]] < RANK["model"]:
            serving = next((s for s in _strings(code) if _names_a_model(s)), None)
            if serving is not None:
                result = ("model", (repr(serving[:60]), *result[1]))
        return result

    def of_object(self, value: Any, names: set[str]) -> Found:
        """What a name in a test's code brings: a root, something under one (``subprocess.run``
        through its module), or a helper of the tests or the project's code, read in turn."""
        if isinstance(value, types.ModuleType):
            found = [(t, ()) for t in [_root_tier(value.__name__)] if t]
            found += [(t, (n,)) for n in names if (t := _root_tier(f"{value.__name__}.{n}"))]
            if value.__name__.split(".")[0] in FOLLOWED:  # floor.loop_rtt(...): read what it names
                found += [_via(n, self.of_object(getattr(value, n), names)) for n in names
                          if n in vars(value) and not isinstance(vars(value)[n], types.ModuleType)]
            return pick(found)
        dotted = _dotted(value)
        if dotted and (t := _root_tier(dotted)):
            return (t, ())
        declared = getattr(value, "__framebus_tier__", None)
        if is_followed(value) and (inspect.isfunction(value) or inspect.isclass(value)):
            return self.found(value)
        if isinstance(declared, str):
            return (declared, ("@uses",))
        if isinstance(value, functools.partial):
            return self.of_object(value.func, names)
        return UNIT


def _module(name: str) -> types.ModuleType | None:
    """The module a name in a test's code stands for. One of the project's own that nothing has
    imported yet (a test imports it inside its body, and its file was collected alone) is imported
    here: otherwise a test's tier would depend on which other files were collected with it."""
    module = sys.modules.get(name)
    if module is None and name.split(".")[0] in FOLLOWED:
        try:
            module = importlib.import_module(name)
        except Exception:  # a name that only looks like a module (an attribute chain), or a broken one
            return None
    return module


def _has(cell: types.CellType) -> bool:
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:  # a free variable not bound yet
        return False


_EMPTY = object()


class TierViolation(RuntimeError):
    """A test of the `unit` tier tried to start a process."""


#: programs a library runs once for itself, not a process the test is about: matplotlib asks fc-list
#: for the fonts when it builds its font cache (the first use on a machine), and the platform module
#: asks uname for the processor (once per process; whichever test comes first pays)
INCIDENTAL = frozenset({"fc-list", "uname"})


class SpawnGuard:
    """Stops a `unit` test from starting a child process, and remembers what it tried.

    Every way Python starts one passes through one of these: ``subprocess.Popen`` (and so asyncio's
    own subprocesses, ``os.popen`` and Playwright's driver), uvloop's subprocesses (libuv spawns them
    past Popen), ``os.fork`` (``multiprocessing``'s fork, the
    ``os.spawn*`` family), ``os.posix_spawn``, ``os.system``, and ``multiprocessing``'s spawn."""

    def __init__(self) -> None:
        self.active = False  # refusing: a `unit` test is being set up or run
        self.refused: list[str] = []  # what the current unit test tried
        self._seen: list[str] = []  # what anything started since the last take_seen (the audit)
        self._saved: list[tuple[Any, str, Any]] = []

    def _refuse(self, what: str) -> None:
        if len(self._seen) < 1000:
            self._seen.append(what)
        if self.active:
            self.refused.append(what)
            raise TierViolation(f"a test of the unit tier started a process: {what}")

    def take_seen(self) -> list[str]:
        seen, self._seen = self._seen, []
        return seen

    def install(self) -> None:
        guard = self
        popen_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def execute_child(self: subprocess.Popen, args: Any, *rest: Any, **kw: Any) -> Any:
            if _program(args) not in INCIDENTAL:
                guard._refuse(f"subprocess {_argv(args)}")
            return popen_child(self, args, *rest, **kw)

        self._patch(subprocess.Popen, "_execute_child", execute_child)
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            if hasattr(os, name):
                self._patch(os, name, self._wrap(getattr(os, name), f"os.{name}"))
        self._patch(multiprocessing.util, "spawnv_passfds",
                    self._wrap(multiprocessing.util.spawnv_passfds, "multiprocessing spawn"))
        try:  # uvloop spawns through libuv, past subprocess.Popen
            import uvloop
        except ImportError:
            return
        for name in ("subprocess_exec", "subprocess_shell"):
            self._patch(uvloop.Loop, name, self._wrap_method(getattr(uvloop.Loop, name), f"uvloop {name}"))

    def _wrap_method(self, fn: Callable[..., Any], what: str) -> Callable[..., Any]:
        async def method(loop: Any, protocol_factory: Any, *args: Any, **kw: Any) -> Any:
            self._refuse(f"{what} {_argv(args)}")
            return await fn(loop, protocol_factory, *args, **kw)

        return method

    def _wrap(self, fn: Callable[..., Any], what: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kw: Any) -> Any:
            self._refuse(f"{what} {_argv(args[:2]) if args else ''}".strip())
            return fn(*args, **kw)

        return wrapper

    def _patch(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def uninstall(self) -> None:
        for owner, name, value in reversed(self._saved):
            setattr(owner, name, value)
        self._saved.clear()


def _program(args: Any) -> str:
    first = args if isinstance(args, (str, bytes, os.PathLike)) else next(iter(args), "")
    return os.path.basename(os.fsdecode(first)).split()[0] if first else ""


def _argv(args: Any) -> str:
    if isinstance(args, (str, bytes, os.PathLike)):
        return repr(os.fsdecode(args))[:200]
    try:
        return repr([os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else a for a in args][:4])[:200]
    except TypeError:
        return repr(args)[:200]
