"""Launch files: the YAML that says which processes exist and how they are wired.

A launch file is the one place where a user describes a whole agent system, so
it is also the place where most mistakes are made. This module therefore cares
as much about *where* a mistake is as about *what* it is: every problem is
reported as a :class:`LaunchError` that points at the file, line and column of
the offending key or value, names the key path, lists what would have been
accepted and suggests the closest valid spelling.

Loading happens in stages, all on a position-carrying tree (``_Y``) so that
positions survive includes, overrides, replica expansion and ``--set``:

1. parse each file with PyYAML's composer, keeping marks for keys and values;
2. substitute ``${VAR}`` references, normalise the short forms, check ids;
3. load includes recursively and deep-merge them under the including file;
4. expand replica groups and rewrite the wiring that crosses group borders;
5. apply ``--set`` overrides;
6. validate with pydantic and translate its errors back to YAML positions;
7. check cross references (sources, ``wait_for``, ``uses``) that a schema
   cannot express.

The format itself is specified in ``docs/launch.md``.
"""

from __future__ import annotations

import copy
import difflib
import importlib.machinery
import importlib.util
import ipaddress
import os
import re
import shlex
import sys
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kernel.sdk.errors import FramebusError
from kernel.sdk.registry import ENTRY_POINT_GROUP, registered_nodes, resolve_uses

__all__ = [
    "BusSpec",
    "ClockSpec",
    "CurveSpec",
    "InputSpec",
    "LaunchError",
    "LaunchFile",
    "NodeSpec",
    "Policy",
    "ResourcesSpec",
    "RestartSpec",
    "RunSpec",
    "bundled_dir",
    "list_bundled",
    "load",
    "registered_nodes",
    "resolve_path",
    "resolve_uses",
]

LAUNCH_PATH_ENV = "FRAMEBUS_LAUNCH_PATH"
ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
_ID_RE = re.compile(ID_PATTERN)
_CLASS_REF_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_YAML_SUFFIXES = (".yaml", ".yml")


# --------------------------------------------------------------------------
# errors


class LaunchError(FramebusError):
    """A problem with a launch file, phrased for the person who wrote it.

    The fields are kept separately (not only in the message) so that a CLI or
    an editor integration can jump to the location or offer the suggestion.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
        key: str = "",
        allowed: Sequence[str] | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.file: Path | None = Path(file) if file is not None else None
        self.line = line
        self.column = column
        self.key = key
        self.message = message
        self.allowed: list[str] | None = list(allowed) if allowed is not None else None
        self.suggestion = suggestion
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [str(self.file)] if self.file is not None else []
        if self.line is not None:
            where.append(str(self.line))
            if self.column is not None:
                where.append(str(self.column))
        text = ":".join(where) + ": " if where else ""
        if self.key:
            text += f"{self.key}: "
        text += self.message
        if self.allowed:
            text += "; allowed: " + ", ".join(self.allowed)
        if self.suggestion is not None:
            text += f" (did you mean '{self.suggestion}'?)"
        return text


def _closest(word: Any, candidates: Iterable[str]) -> str | None:
    """Only strings get suggestions: a number is never a typo of a name."""
    if not isinstance(word, str):
        return None
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


# --------------------------------------------------------------------------
# resolved models


Policy = Literal["latest", "fifo", "block"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputSpec(_Strict):
    """One input port: where its messages come from and how they queue."""

    sources: list[str] = Field(min_length=1)
    policy: Policy = "fifo"
    size: int = Field(default=16, ge=1)

    @model_validator(mode="after")
    def _latest_keeps_one(self) -> InputSpec:
        # "latest" means only the newest message matters; a deeper queue
        # would only hold stale ones.
        if self.policy == "latest":
            self.size = 1
        return self


class RestartSpec(_Strict):
    policy: Literal["never", "on-failure"] = "never"
    max_restarts: int = Field(default=3, ge=0)
    backoff: float = Field(default=0.5, ge=0)


class ClockSpec(_Strict):
    mode: Literal["lockstep", "realtime"]
    fps: float | None = Field(default=None, gt=0)
    deadline: float | None = Field(default=None, gt=0)
    wait_for: list[str] | None = None
    default_action: Any = None

    @model_validator(mode="after")
    def _realtime_needs_rate(self) -> ClockSpec:
        if self.mode == "realtime" and self.fps is None:
            raise ValueError("a realtime clock needs 'fps' (frames per second, > 0)")
        return self


_MEMORY_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
                 "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MEMORY_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


class ResourcesSpec(_Strict):
    """What a node's process asks of a Ray cluster (``launch run --backend ray``); the local backend ignores it.

    The names follow Ray's actor options, so a request reads the same here and in Ray's docs.
    """

    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    memory: int | None = Field(default=None, ge=0)  # bytes; "4GiB" and "500MB" are accepted
    accelerator_type: str | None = Field(default=None, min_length=1)
    custom: dict[str, float] = Field(default_factory=dict)  # named Ray resources, e.g. {TPU: 4}

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_units(cls, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, str):
            return value
        match = _MEMORY_RE.match(value)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _MEMORY_UNITS:
            raise ValueError(f"memory {value!r} is not a size; write bytes (4000000000) or a number with a unit "
                             "(4GiB, 512MiB, 2GB)")
        return int(float(match.group(1)) * _MEMORY_UNITS[unit])

    @model_validator(mode="after")
    def _ray_quantities(self) -> ResourcesSpec:
        # Ray refuses fractions above 1 (a process gets half a GPU or whole GPUs, never 1.5).
        amounts = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, **self.custom}
        for name, amount in amounts.items():
            if amount is not None and amount > 1 and not float(amount).is_integer():
                raise ValueError(f"{name}: {amount} is not allowed; above 1 a resource must be a whole number "
                                 "(fractions only below 1, e.g. 0.5)")
            if amount is not None and amount < 0:
                raise ValueError(f"{name}: must be >= 0, got {amount}")
        return self

    def ray_demand(self) -> dict[str, float]:
        """The request as Ray's resource names, the way ``ray.nodes()`` lists a machine's capacity."""
        demand: dict[str, float] = {}
        if self.num_cpus:
            demand["CPU"] = self.num_cpus
        if self.num_gpus:
            demand["GPU"] = self.num_gpus
        if self.memory:
            demand["memory"] = float(self.memory)
        if self.accelerator_type:
            demand[f"accelerator_type:{self.accelerator_type}"] = 0.001
        demand.update({k: v for k, v in self.custom.items() if v})
        return demand


def is_loopback(host: str) -> bool:
    """True when ``host`` can only be reached from this machine; names other than localhost count as open."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class NodeSpec(_Strict):
    id: str = Field(pattern=ID_PATTERN)
    uses: str | None = None
    cmd: list[str] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    restart: RestartSpec = Field(default_factory=RestartSpec)
    env: dict[str, str] = Field(default_factory=dict)
    clock: ClockSpec | None = None
    resources: ResourcesSpec | None = None
    group: str | None = None
    replica: int | None = None


class CurveSpec(_Strict):
    """CurveZMQ with fixed keys instead of a fresh set per run (see docs/scale.md)."""

    keys: str = Field(min_length=1)  # a directory: server.key_secret, plus *.key client certificates to accept


class BusSpec(_Strict):
    transport: Literal["ipc", "tcp"] = "ipc"
    host: str = "127.0.0.1"
    max_message_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    heartbeat: float = Field(default=0.5, gt=0)
    curve: bool | CurveSpec | None = None  # None: on exactly when tcp leaves the machine
    insecure: bool = False

    @model_validator(mode="after")
    def _open_tcp_needs_consent(self) -> BusSpec:
        # A bus reachable from other machines without CURVE lets anyone who can reach the port
        # join the graph, read its data and stop it; that must be a written decision, not a default.
        if self.transport == "tcp" and self.curve is False and not is_loopback(self.host) and not self.insecure:
            raise ValueError(f"curve: false on host {self.host!r} (not loopback) leaves the bus open to anyone who "
                             "can reach it; remove 'curve: false' (CURVE is on by default off loopback) or add "
                             "'insecure: true' to accept that")
        return self


class RunSpec(_Strict):
    episodes: int | None = Field(default=None, ge=1)
    seed: int = 0
    out: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    metric: str | None = None  # the episode metric the progress display averages (default: score or success)


class LaunchFile(_Strict):
    """A launch file after includes, replicas, variables and overrides."""

    name: str
    description: str = ""
    source: Path
    bus: BusSpec = Field(default_factory=BusSpec)
    nodes: list[NodeSpec] = Field(min_length=1)
    run: RunSpec = Field(default_factory=RunSpec)

    def node(self, node_id: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.id == node_id:
                return spec
        ids = [n.id for n in self.nodes]
        raise LaunchError(
            f"unknown node '{node_id}'", file=self.source, allowed=ids,
            suggestion=_closest(node_id, ids),
        )

    def edges(self) -> list[tuple[str, str, str, str]]:
        out: list[tuple[str, str, str, str]] = []
        for spec in self.nodes:
            for port, inp in spec.inputs.items():
                for src in inp.sources:
                    src_node, _, src_output = src.partition("/")
                    out.append((src_node, src_output, spec.id, port))
        return out

    def to_yaml(self) -> str:
        """Write the resolved file so a run can be reproduced without its includes."""
        doc: dict[str, Any] = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        doc["bus"] = self.bus.model_dump()
        doc["nodes"] = [_node_doc(n) for n in self.nodes]
        doc["run"] = self.run.model_dump()
        return yaml.safe_dump(_escape_vars(doc), sort_keys=False, allow_unicode=True,
                              default_flow_style=False)


def _node_doc(spec: NodeSpec) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": spec.id}
    if spec.group is not None:
        doc["group"] = spec.group
        doc["replica"] = spec.replica
    if spec.uses is not None:
        doc["uses"] = spec.uses
    if spec.cmd is not None:
        doc["cmd"] = list(spec.cmd)
    if spec.params:
        doc["params"] = spec.params
    if spec.inputs:
        doc["inputs"] = {
            port: {
                "from": inp.sources[0] if len(inp.sources) == 1 else list(inp.sources),
                "policy": inp.policy,
                "size": inp.size,
            }
            for port, inp in spec.inputs.items()
        }
    if spec.restart != RestartSpec():
        doc["restart"] = spec.restart.model_dump()
    if spec.env:
        doc["env"] = dict(spec.env)
    if spec.clock is not None:
        doc["clock"] = spec.clock.model_dump(exclude_none=True)
    if spec.resources is not None:
        doc["resources"] = spec.resources.model_dump(exclude_none=True, exclude_defaults=True)
    return doc


def _escape_vars(value: Any) -> Any:
    """Keep literal '${' literal when the resolved file is loaded again."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, dict):
        return {k: _escape_vars(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape_vars(v) for v in value]
    return value


# --------------------------------------------------------------------------
# the position-carrying tree


class _Mark(NamedTuple):
    file: Path | None
    line: int | None
    column: int | None


_NOWHERE = _Mark(None, None, None)


@dataclass
class _Y:
    """A YAML value plus where it was written.

    Mappings hold ``dict[key, _Y]`` and sequences ``list[_Y]``; each child
    also knows where its key was (for "unknown key" errors) and its dotted
    path *in the file it came from*, which is what the user can find.
    """

    value: Any
    mark: _Mark
    path: str
    key_mark: _Mark | None = None
    plain: bool = False  # an unquoted scalar: '${N}' may become a number

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def get(self, key: str) -> _Y | None:
        return self.value.get(key) if self.is_map else None


def _err(y: _Y | None, message: str, *, key: bool = False, path: str | None = None,
         allowed: Sequence[str] | None = None, suggestion: str | None = None) -> LaunchError:
    mark = _NOWHERE
    if y is not None:
        mark = (y.key_mark or y.mark) if key else y.mark
    return LaunchError(
        message, file=mark.file, line=mark.line, column=mark.column,
        key=path if path is not None else (y.path if y is not None else ""),
        allowed=allowed, suggestion=suggestion,
    )


def _child_path(parent: str, key: Any) -> str:
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _mark_of(mark: yaml.Mark | None, file: Path) -> _Mark:
    if mark is None:
        return _Mark(file, None, None)
    return _Mark(file, mark.line + 1, mark.column + 1)


def _compose(text: str, file: Path) -> _Y:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise LaunchError("the file is empty; expected a mapping with 'nodes'", file=file)
        return _from_node(loader, node, file, "", None)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        m = _mark_of(mark, file)
        raise LaunchError(f"YAML syntax error: {problem}", file=file, line=m.line,
                          column=m.column) from None
    except yaml.YAMLError as exc:
        raise LaunchError(f"YAML error: {exc}", file=file) from None
    finally:
        loader.dispose()


def _from_node(loader: yaml.SafeLoader, node: yaml.Node, file: Path, path: str,
               key_mark: _Mark | None) -> _Y:
    mark = _mark_of(node.start_mark, file)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves '<<' merge keys
        items: dict[Any, _Y] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            kmark = _mark_of(key_node.start_mark, file)
            try:
                duplicate = key in items
            except TypeError:
                raise LaunchError("a mapping key must be a plain value", file=file,
                                  line=kmark.line, column=kmark.column, key=path) from None
            if duplicate:
                raise LaunchError(f"duplicate key '{key}'", file=file, line=kmark.line,
                                  column=kmark.column, key=_child_path(path, key))
            items[key] = _from_node(loader, value_node, file, _child_path(path, key), kmark)
        return _Y(items, mark, path, key_mark)
    if isinstance(node, yaml.SequenceNode):
        return _Y([_from_node(loader, child, file, _child_path(path, i), None)
                   for i, child in enumerate(node.value)], mark, path, key_mark)
    value = loader.construct_object(node, deep=True)
    plain = isinstance(node, yaml.ScalarNode) and node.style is None
    return _Y(value, mark, path, key_mark, plain)


def _wrap(value: Any, mark: _Mark, path: str, key_mark: _Mark | None = None) -> _Y:
    """Turn a plain value (from --set or code) into a tree that points at ``mark``."""
    if isinstance(value, dict):
        return _Y({k: _wrap(v, mark, _child_path(path, k), mark) for k, v in value.items()},
                  mark, path, key_mark)
    if isinstance(value, list):
        return _Y([_wrap(v, mark, _child_path(path, i)) for i, v in enumerate(value)],
                  mark, path, key_mark)
    return _Y(value, mark, path, key_mark)


def _plain(y: _Y) -> Any:
    if y.is_map:
        return {k: _plain(v) for k, v in y.value.items()}
    if y.is_list:
        return [_plain(v) for v in y.value]
    return y.value


def _walk(y: _Y) -> Iterable[_Y]:
    yield y
    if y.is_map:
        for child in y.value.values():
            yield from _walk(child)
    elif y.is_list:
        for child in y.value:
            yield from _walk(child)


# --------------------------------------------------------------------------
# ${VAR} substitution

_VAR_RE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{")


def _substitute(tree: _Y, environ: Mapping[str, str]) -> None:
    for y in _walk(tree):
        if isinstance(y.value, str) and "${" in y.value:
            _substitute_scalar(y, environ)


def _substitute_scalar(y: _Y, environ: Mapping[str, str]) -> None:
    text: str = y.value
    whole = False

    def replace(match: re.Match[str]) -> str:
        nonlocal whole
        token = match.group(0)
        if token == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        if name is None:
            raise _err(y, f"malformed variable reference in {text!r}; write ${{NAME}} or "
                          f"${{NAME:-default}}, or $${{ for a literal '${{'")
        whole = match.span() == (0, len(text))
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise _err(y, f"environment variable '{name}' is not set "
                      f"(use ${{{name}:-default}} to give a default)",
                   suggestion=_closest(name, environ.keys()))

    result = _VAR_RE.sub(replace, text)
    if whole and y.plain and result.strip():
        # 'episodes: ${N:-5}' should be the number 5, as if 5 had been written.
        try:
            parsed = yaml.safe_load(result)
        except yaml.YAMLError:
            parsed = result
        y.value = parsed if isinstance(parsed, (str, int, float, bool)) or parsed is None \
            else result
    else:
        y.value = result


# --------------------------------------------------------------------------
# finding files


def bundled_dir() -> Path:
    """The launch files shipped with the project, found by bare name."""
    return Path(__file__).resolve().parents[2] / "launch"


def _search_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    extra = [Path(d) for d in env.get(LAUNCH_PATH_ENV, "").split(os.pathsep) if d]
    return [*extra, bundled_dir()]


def _yaml_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir()
                      if p.suffix in _YAML_SUFFIXES and p.is_file())
    except OSError:
        return []


def _is_bare(name: str) -> bool:
    return "/" not in name and os.sep not in name and (os.altsep or "/") not in name


def _search(name: str, environ: Mapping[str, str] | None) -> Path | None:
    if not _is_bare(name):
        return None
    candidates = [name]
    if not name.endswith(_YAML_SUFFIXES):
        candidates += [name + suffix for suffix in _YAML_SUFFIXES]
    for directory in _search_dirs(environ):
        for candidate in candidates:
            path = directory / candidate
            if path.is_file():
                return path
    return None


def _known_names(environ: Mapping[str, str] | None) -> list[str]:
    names: list[str] = []
    for directory in _search_dirs(environ):
        for path in _yaml_files(directory):
            if path.stem not in names:
                names.append(path.stem)
    return names


def resolve_path(name: str | Path, cwd: Path | None = None, *,
                 environ: Mapping[str, str] | None = None) -> Path:
    """Find a launch file the way a user would expect from the command line.

    An existing path always wins so that a local file can shadow a bundled
    one; otherwise a bare name is looked up on ``FRAMEBUS_LAUNCH_PATH`` and
    then among the bundled files.
    """
    given = Path(name)
    here = given if given.is_absolute() else (given if cwd is None else cwd / given)
    if here.is_file():
        return here
    found = _search(str(name), environ)
    if found is not None:
        return found
    known = _known_names(environ)
    stem = given.name
    for suffix in _YAML_SUFFIXES:
        stem = stem.removesuffix(suffix)
    raise LaunchError(f"launch file '{name}' not found", file=None, allowed=known,
                      suggestion=_closest(stem, known))


def list_bundled() -> list[tuple[str, str]]:
    """(file name, description) of every bundled launch file, for ``launch ls``."""
    out: list[tuple[str, str]] = []
    for path in _yaml_files(bundled_dir()):
        description = ""
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            text = doc.get("description") if isinstance(doc, dict) else None
            if isinstance(text, str) and text.strip():
                description = text.strip().splitlines()[0]
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            description = "(unreadable)"
        out.append((path.name, description))
    return out


# --------------------------------------------------------------------------
# node registry


def _module_exists(name: str) -> bool:
    """Like importlib.util.find_spec, but never runs a package's __init__.

    find_spec on a dotted name imports the parent packages; a launch file check
    must not have side effects, so submodules are searched on disk instead.
    """
    if name in sys.modules:
        return True
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


# --------------------------------------------------------------------------
# reading one file (with its includes)

_TOP_KEYS = ["name", "description", "bus", "include", "nodes", "run"]
_GROUP_KEYS = ["group", "replicas", "nodes"]
_INPUT_KEYS = ["from", "policy", "size"]
_INCLUDE_KEYS = ["file", "set"]


@dataclass
class _Context:
    environ: Mapping[str, str]
    stack: list[Path] = field(default_factory=list)


def _read(path: Path, ctx: _Context, via: _Y | None) -> _Y:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if via is not None:
            raise _err(via, f"included file '{path}' does not exist") from None
        raise LaunchError("launch file does not exist", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise LaunchError(f"cannot read launch file: {reason}", file=path) from None

    root = _compose(text, path)
    if not root.is_map:
        raise _err(root, "expected a mapping at the top level (with 'nodes', 'run', ...)",
                   path="")
    for key, child in root.value.items():
        if key not in _TOP_KEYS:
            raise _err(child, f"unknown key '{key}'", key=True, allowed=_TOP_KEYS,
                       suggestion=_closest(key, _TOP_KEYS))
    _substitute(root, ctx.environ)
    nodes = root.get("nodes")
    if nodes is not None:
        _normalise_entries(nodes)
        _check_unique(_index(nodes.value))

    include = root.value.pop("include", None)
    if include is None:
        return root
    if not include.is_list:
        raise _err(include, "expected a list of included files")
    merged_nodes: list[_Y] = []
    sections: dict[str, _Y] = {}
    for item in include.value:
        included = _read_include(item, path, ctx)
        inc_nodes = included.get("nodes")
        if inc_nodes is not None:
            merged_nodes = _merge_entries(merged_nodes, inc_nodes.value)
        for section in ("bus", "run"):
            if section in included.value:
                old = sections.get(section)
                sections[section] = included.value[section] if old is None \
                    else _merge(old, included.value[section])
    for section, value in sections.items():
        own = root.value.get(section)
        root.value[section] = value if own is None else _merge(value, own)
    own_nodes = nodes.value if nodes is not None else []
    root.value["nodes"] = _Y(_merge_entries(merged_nodes, own_nodes),
                             nodes.mark if nodes else root.mark,
                             "nodes", nodes.key_mark if nodes else None)
    return root


def _read_include(item: _Y, parent: Path, ctx: _Context) -> _Y:
    if isinstance(item.value, str):
        file_y, set_y = item, None
    elif item.is_map:
        for key, child in item.value.items():
            if key not in _INCLUDE_KEYS:
                raise _err(child, f"unknown key '{key}'", key=True, allowed=_INCLUDE_KEYS,
                           suggestion=_closest(key, _INCLUDE_KEYS))
        file_y, set_y = item.get("file"), item.get("set")
        if file_y is None:
            raise _err(item, "an include needs 'file'", path=_child_path(item.path, "file"))
    else:
        raise _err(item, "expected a file name or a mapping with 'file' and 'set'")
    if not isinstance(file_y.value, str) or not file_y.value:
        raise _err(file_y, "expected a file name")

    name = file_y.value
    target = parent.parent / name
    if not target.is_file():
        found = _search(name, ctx.environ)
        if found is None:
            siblings = [p.name for p in _yaml_files(parent.parent)]
            known = siblings + _known_names(ctx.environ)
            raise _err(file_y, f"included file '{name}' not found (looked next to "
                               f"{parent.name} and among bundled launch files)",
                       suggestion=_closest(name, known))
        target = found
    key = target.resolve()
    if key in ctx.stack:
        chain = [p.name for p in ctx.stack[ctx.stack.index(key):]]
        raise _err(file_y, "include cycle: " + " -> ".join([*chain, target.name]))

    ctx.stack.append(key)
    try:
        included = _read(target, ctx, file_y)
    finally:
        ctx.stack.pop()
    if set_y is not None:
        for set_key, value in _include_sets(set_y):
            _apply_set(included, set_key, value)
    return included


def _include_sets(set_y: _Y) -> list[tuple[_Y, _Y]]:
    """An include's ``set:`` as (key, value) pairs that still know their lines."""
    if set_y.is_map:
        pairs = []
        for key, value in set_y.value.items():
            key_y = _Y(str(key), value.key_mark or value.mark, value.path)
            pairs.append((key_y, value))
        return pairs
    if set_y.is_list:
        pairs = []
        for item in set_y.value:
            if not isinstance(item.value, str):
                raise _err(item, "expected KEY=VALUE")
            pairs.append(_parse_set(item.value, item.mark, item.path))
        return pairs
    raise _err(set_y, "expected a mapping of KEY: VALUE overrides")


# --------------------------------------------------------------------------
# node entries: normalising, indexing, merging, expanding


def _is_group(entry: _Y) -> bool:
    return entry.is_map and "group" in entry.value and "id" not in entry.value


def _normalise_entries(nodes: _Y) -> None:
    if not nodes.is_list:
        raise _err(nodes, "expected a list of nodes")
    for entry in nodes.value:
        if _is_group(entry):
            _normalise_group(entry)
        else:
            _normalise_node(entry)


def _normalise_group(entry: _Y) -> None:
    for key, child in entry.value.items():
        if key not in _GROUP_KEYS:
            raise _err(child, f"unknown key '{key}' in a replica group", key=True,
                       allowed=_GROUP_KEYS, suggestion=_closest(key, _GROUP_KEYS))
    name = entry.value["group"]
    if not isinstance(name.value, str) or not _ID_RE.match(name.value):
        raise _err(name, f"invalid group name {name.value!r}; names match {ID_PATTERN}")
    replicas = entry.get("replicas")
    if replicas is not None and (not isinstance(replicas.value, int)
                                 or isinstance(replicas.value, bool) or replicas.value < 1):
        raise _err(replicas, f"expected a whole number >= 1, got {_describe(replicas.value)}")
    members = entry.get("nodes")
    if members is None or not members.is_list or not members.value:
        raise _err(members or entry, "a replica group needs a non-empty 'nodes' list",
                   path=_child_path(entry.path, "nodes"))
    for member in members.value:
        if _is_group(member):
            raise _err(member, "replica groups cannot be nested")
        _normalise_node(member)


def _normalise_node(entry: _Y) -> None:
    """Bring short forms into the resolved shape, so merging works field by field."""
    if not entry.is_map:
        raise _err(entry, "expected a mapping describing a node (with 'id') "
                          "or a replica group (with 'group')")
    node_id = entry.get("id")
    if node_id is None:
        raise _err(entry, "a node needs an 'id'", path=_child_path(entry.path, "id"))
    if not isinstance(node_id.value, str) or not _ID_RE.match(node_id.value):
        raise _err(node_id, f"invalid node id {node_id.value!r}; ids match {ID_PATTERN}")

    cmd = entry.get("cmd")
    if cmd is not None and isinstance(cmd.value, str):
        try:
            words = shlex.split(cmd.value)
        except ValueError as exc:
            raise _err(cmd, f"cannot split command: {exc}") from None
        cmd.value = [_Y(w, cmd.mark, _child_path(cmd.path, i)) for i, w in enumerate(words)]
    if cmd is not None and cmd.is_list:
        for item in cmd.value:
            if isinstance(item.value, (int, float)) and not isinstance(item.value, bool):
                item.value = str(item.value)

    restart = entry.get("restart")
    if restart is not None and isinstance(restart.value, str):
        restart.value = {"policy": _Y(restart.value, restart.mark, restart.path, restart.mark)}

    env = entry.get("env")
    if env is not None and env.is_map:
        for item in env.value.values():
            if isinstance(item.value, bool):
                item.value = "true" if item.value else "false"
            elif isinstance(item.value, (int, float)):
                item.value = str(item.value)

    inputs = entry.get("inputs")
    if inputs is not None and inputs.is_map:
        for port, spec in inputs.value.items():
            inputs.value[port] = _normalise_input(spec)


def _normalise_input(spec: _Y) -> _Y:
    if isinstance(spec.value, str) or spec.is_list:
        sources = spec if spec.is_list else _Y([_Y(spec.value, spec.mark, spec.path)],
                                               spec.mark, spec.path)
        return _Y({"sources": sources}, spec.mark, spec.path, spec.key_mark)
    if not spec.is_map:
        raise _err(spec, "expected 'node/output' or a mapping with 'from', 'policy', 'size'")
    for key, child in spec.value.items():
        if key not in _INPUT_KEYS:
            raise _err(child, f"unknown key '{key}'", key=True, allowed=_INPUT_KEYS,
                       suggestion=_closest(key, _INPUT_KEYS))
    src = spec.value.pop("from", None)
    if src is None:
        # Allowed here so an including file can change only the policy; the
        # schema reports it if nothing ever supplies the sources.
        return spec
    if not src.is_list:
        src = _Y([_Y(src.value, src.mark, src.path)], src.mark, src.path, src.key_mark)
    spec.value = {"sources": src, **spec.value}
    return spec


class _Entry(NamedTuple):
    id: str
    base: str  # the id written in the file; copies of a replica share it
    node: _Y


def _index(entries: list[_Y]) -> list[_Entry]:
    """Every node definition, looking inside groups; works before and after expansion."""
    out: list[_Entry] = []
    for entry in entries:
        if _is_group(entry):
            for member in entry.value["nodes"].value:
                node_id = member.value["id"].value
                out.append(_Entry(node_id, node_id, member))
        elif entry.is_map and "id" in entry.value:
            node_id = entry.value["id"].value
            base = node_id
            replica = entry.get("replica")
            if replica is not None and isinstance(replica.value, int) \
                    and node_id.endswith(f"-{replica.value}"):
                base = node_id[: -len(f"-{replica.value}")]
            out.append(_Entry(node_id, base, entry))
    return out


def _check_unique(entries: list[_Entry]) -> None:
    seen: dict[str, _Y] = {}
    for entry in entries:
        id_y = entry.node.value["id"]
        if entry.id in seen:
            first = seen[entry.id].mark
            where = f" (first defined at line {first.line})" if first.line else ""
            if first.file is not None and first.file != id_y.mark.file:
                where = f" (first defined at {first.file}:{first.line})"
            raise _err(id_y, f"duplicate node id '{entry.id}'{where}")
        seen[entry.id] = id_y


def _merge(base: _Y, over: _Y) -> _Y:
    """Deep merge: mappings merge key by key, anything else is replaced."""
    if base.is_map and over.is_map:
        merged = dict(base.value)
        for key, value in over.value.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return _Y(merged, over.mark, over.path, over.key_mark)
    return over


def _merge_node(base: _Y, over: _Y) -> _Y:
    # Overriding 'uses' with 'cmd' (or back) swaps what runs; keeping both
    # would only produce a confusing "not both" error.
    base = _Y(dict(base.value), base.mark, base.path, base.key_mark)
    if "uses" in over.value and "cmd" not in over.value:
        base.value.pop("cmd", None)
    if "cmd" in over.value and "uses" not in over.value:
        base.value.pop("uses", None)
    return _merge(base, over)


def _merge_entries(base: list[_Y], over: list[_Y]) -> list[_Y]:
    result = list(base)
    for entry in over:
        if _is_group(entry):
            name = entry.value["group"].value
            at = next((i for i, e in enumerate(result)
                       if _is_group(e) and e.value["group"].value == name), None)
            if at is None:
                result.append(entry)
                continue
            old = result[at]
            merged = _merge(_Y({k: v for k, v in old.value.items() if k != "nodes"},
                               old.mark, old.path, old.key_mark),
                            _Y({k: v for k, v in entry.value.items() if k != "nodes"},
                               entry.mark, entry.path, entry.key_mark))
            members = _merge_entries(old.value["nodes"].value, entry.value["nodes"].value)
            merged.value["nodes"] = _Y(members, entry.value["nodes"].mark,
                                       entry.value["nodes"].path, entry.value["nodes"].key_mark)
            result[at] = merged
            continue
        node_id = entry.value["id"].value
        placed = False
        for i, existing in enumerate(result):
            if _is_group(existing):
                members = existing.value["nodes"].value
                for j, member in enumerate(members):
                    if member.value["id"].value == node_id:
                        members[j] = _merge_node(member, entry)
                        placed = True
            elif existing.value["id"].value == node_id:
                result[i] = _merge_node(existing, entry)
                placed = True
            if placed:
                break
        if not placed:
            result.append(entry)
    return result


def _parse_source(src: _Y) -> tuple[str, str]:
    text = src.value
    node, sep, output = text.partition("/")
    if not sep or not node or not output or "/" in output or not _ID_RE.match(node):
        raise _err(src, f"source {text!r} is not of the form 'node/output'")
    return node, output


def _expand(entries: list[_Y]) -> list[_Y]:
    """Replace each replica group by its copies and rewire across the group border."""
    out: list[_Y] = []
    grouped: dict[str, tuple[str, int]] = {}  # member id -> (group, replicas)
    for entry in entries:
        if not _is_group(entry):
            out.append(entry)
            continue
        name_y = entry.value["group"]
        replicas_y = entry.get("replicas")
        count = replicas_y.value if replicas_y is not None else 1
        members = entry.value["nodes"].value
        for member in members:
            grouped[member.value["id"].value] = (name_y.value, count)
        for i in range(count):
            for member in members:
                copy_y = copy.deepcopy(member)
                id_y = copy_y.value["id"]
                copy_y.value["id"] = _Y(f"{id_y.value}-{i}", id_y.mark, id_y.path, id_y.key_mark)
                copy_y.value["group"] = _Y(name_y.value, name_y.mark, name_y.path, name_y.key_mark)
                copy_y.value["replica"] = _Y(i, copy_y.mark, _child_path(copy_y.path, "replica"),
                                             copy_y.mark)
                params = copy_y.get("params")
                if params is None:
                    params = _Y({}, copy_y.mark, _child_path(copy_y.path, "params"), copy_y.mark)
                    copy_y.value["params"] = params
                if params.is_map and "replica" not in params.value:
                    params.value["replica"] = _Y(i, params.mark,
                                                 _child_path(params.path, "replica"), params.mark)
                out.append(copy_y)

    for node in out:
        group = node.get("group")
        replica = node.get("replica")
        own = (group.value, replica.value) if group is not None and replica is not None else None

        def rename(name: str, y: _Y, own: tuple[Any, Any] | None = own) -> list[_Y]:
            if name not in grouped:
                return [y]
            g, count = grouped[name]
            if own is not None and own[0] == g:
                return [_Y(f"{name}-{own[1]}{y.value[len(name):]}", y.mark, y.path, y.key_mark)]
            return [_Y(f"{name}-{i}{y.value[len(name):]}", y.mark, y.path, y.key_mark)
                    for i in range(count)]

        inputs = node.get("inputs")
        if inputs is not None and inputs.is_map:
            for spec in inputs.value.values():
                sources = spec.get("sources")
                if sources is None or not sources.is_list:
                    continue
                rewired: list[_Y] = []
                for src in sources.value:
                    if not isinstance(src.value, str):
                        rewired.append(src)
                        continue
                    src_node, _ = _parse_source(src)
                    rewired.extend(rename(src_node, src))
                sources.value = rewired
        clock = node.get("clock")
        wait_for = clock.get("wait_for") if clock is not None else None
        if wait_for is not None and wait_for.is_list:
            waited: list[_Y] = []
            for item in wait_for.value:
                waited.extend(rename(item.value, item) if isinstance(item.value, str) else [item])
            wait_for.value = waited
    return out


# --------------------------------------------------------------------------
# --set


def _parse_set(text: str, mark: _Mark = _NOWHERE, path: str | None = None) -> tuple[_Y, _Y]:
    key, sep, raw = text.partition("=")
    key = key.strip()
    label = path if path is not None else f"--set {key}"
    if not sep or not key:
        raise LaunchError(f"expected KEY=VALUE, got {text!r}", file=mark.file, line=mark.line,
                          column=mark.column, key=label)
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise LaunchError(f"cannot parse value {raw!r}: {problem}", file=mark.file,
                          line=mark.line, column=mark.column, key=label) from None
    return _Y(key, mark, label), _wrap(value, mark, label)


def _apply_set(root: _Y, key_y: _Y, value: _Y) -> None:
    key: str = key_y.value
    parts = key.split(".")
    if len(parts) < 2 or not all(parts):
        raise _err(key_y, f"cannot set {key!r}; expected <node>.<param>, run.<field> "
                          "or bus.<field>")
    head, rest = parts[0], parts[1:]
    if head in ("run", "bus"):
        section = root.get(head)
        if section is None:
            section = _Y({}, key_y.mark, head, key_y.mark)
            root.value[head] = section
        _set_in(section, rest, value, key_y)
        return
    nodes = root.get("nodes")
    entries = _index(nodes.value) if nodes is not None and nodes.is_list else []
    targets = [e.node for e in entries if e.id == head] or \
              [e.node for e in entries if e.base == head]
    if not targets:
        ids = list(dict.fromkeys([e.id for e in entries] + [e.base for e in entries]))
        raise _err(key_y, f"unknown node '{head}'", allowed=[*ids, "run", "bus"],
                   suggestion=_closest(head, [*ids, "run", "bus"]))
    for node in targets:
        params = node.get("params")
        if params is None:
            params = _Y({}, key_y.mark, _child_path(node.path, "params"), key_y.mark)
            node.value["params"] = params
        _set_in(params, rest, copy.deepcopy(value), key_y)


def _set_in(target: _Y, parts: list[str], value: _Y, key_y: _Y) -> None:
    for part in parts[:-1]:
        if not target.is_map:
            raise _err(key_y, f"cannot set {key_y.value!r}: {target.path or 'value'} "
                              "is not a mapping")
        child = target.get(part)
        if child is None:
            child = _Y({}, key_y.mark, _child_path(target.path, part), key_y.mark)
            target.value[part] = child
        target = child
    if not target.is_map:
        raise _err(key_y, f"cannot set {key_y.value!r}: {target.path or 'value'} "
                          "is not a mapping")
    value.key_mark = key_y.mark
    target.value[parts[-1]] = value


# --------------------------------------------------------------------------
# pydantic errors -> positions

_TYPE_WORDS = {
    "int": "an integer", "float": "a number", "string": "a string", "str": "a string",
    "bool": "true or false", "dict": "a mapping", "model": "a mapping",
    "model_attributes": "a mapping", "list": "a list",
}


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return repr(value)


def _unwrap(tp: Any) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def _annotation_at(loc: Sequence[Any]) -> Any:
    tp: Any = LaunchFile
    for part in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if not isinstance(part, str) or part not in tp.model_fields:
                return None
            tp = tp.model_fields[part].annotation
        elif get_origin(tp) is list and isinstance(part, int):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            return None
    return _unwrap(tp)


def _locate(tree: _Y, loc: Sequence[Any]) -> tuple[_Y, list[Any]]:
    y = tree
    for n, part in enumerate(loc):
        if y.is_map and not isinstance(part, bool) and part in y.value:
            y = y.value[part]
        elif y.is_list and isinstance(part, int) and 0 <= part < len(y.value):
            y = y.value[part]
        else:
            return y, list(loc[n:])
    return y, []


def _translate(exc: ValidationError, tree: _Y) -> LaunchError:
    errors = exc.errors(include_url=False)
    # An unknown key is usually the cause of the other errors (a typo'd
    # 'usse' also makes 'uses' missing), so report it first.
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc = tuple(err["loc"])
    kind: str = err["type"]
    y, rest = _locate(tree, loc)
    path = y.path
    for part in rest:
        part = "from" if part == "sources" else part  # the file spells it 'from'
        if isinstance(part, int) and not isinstance(part, bool):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path = _child_path(path, part)
    value = err.get("input")

    if kind == "extra_forbidden":
        model = _annotation_at(loc[:-1])
        allowed = [f for f in model.model_fields if f != "source"] \
            if isinstance(model, type) and issubclass(model, BaseModel) else None
        return _err(y, f"unknown key '{loc[-1]}'", key=True, path=path, allowed=allowed,
                    suggestion=_closest(loc[-1], allowed or []))
    if kind == "literal_error":
        tp = _annotation_at(loc)
        allowed = [str(a) for a in get_args(tp)] if get_origin(tp) is Literal else None
        return _err(y, f"unknown value {_describe(value)}", path=path, allowed=allowed,
                    suggestion=_closest(value, allowed or []))
    if kind == "missing":
        missing = "from" if loc[-1] == "sources" else loc[-1]
        # Point at the mapping that lacks the key; the key itself has no position.
        return _err(y, f"missing required key '{missing}'", path=y.path)
    if kind == "too_short":
        least = (err.get("ctx") or {}).get("min_length", 1)
        what = "node" if loc == ("nodes",) else "item"
        return _err(y, f"needs at least {least} {what}{'s' if least != 1 else ''}", path=path)
    if kind == "string_pattern_mismatch":
        return _err(y, f"invalid id {_describe(value)}; ids match {ID_PATTERN}", path=path)
    for prefix, words in _TYPE_WORDS.items():
        if kind.startswith(prefix + "_") and kind.endswith(("_type", "_parsing", "_from_float",
                                                            "_attributes_type")):
            return _err(y, f"expected {words}, got {_describe(value)}", path=path)
    message = err["msg"]
    message = message.removeprefix("Value error, ")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        message = message.replace("Input should be", "must be") + f", got {_describe(value)}"
    return _err(y, message, path=path)


# --------------------------------------------------------------------------
# cross-reference checks


def _check_references(lf: LaunchFile, nodes_y: list[_Y]) -> None:
    ids = [n.id for n in lf.nodes]
    known = set(ids)
    registry: dict[str, str] | None = None
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        if spec.uses is None and spec.cmd is None:
            raise _err(y, f"node '{spec.id}' needs either 'uses' (a node type) or 'cmd' "
                          "(a program to run)", path=y.path)
        if spec.uses is not None and spec.cmd is not None:
            raise _err(y.value["cmd"], f"node '{spec.id}' has both 'uses' and 'cmd'; "
                                       "keep exactly one", key=True)
        if spec.cmd is not None and not spec.cmd:
            raise _err(y.value["cmd"], "'cmd' is empty")
        if spec.uses is not None:
            uses_y = y.value["uses"]
            if ":" in spec.uses:
                if not _CLASS_REF_RE.match(spec.uses):
                    raise _err(uses_y, f"{spec.uses!r} is not of the form 'package.module:Class'")
                module = spec.uses.partition(":")[0]
                if not _module_exists(module):
                    raise _err(uses_y, f"module '{module}' cannot be found "
                                       "(is it installed, and on the Python path?)")
            else:
                if registry is None:
                    registry = registered_nodes()
                if spec.uses not in registry:
                    names = sorted(registry)
                    raise _err(uses_y, f"unknown node type '{spec.uses}' (not registered under "
                                       f"the '{ENTRY_POINT_GROUP}' entry points)",
                               allowed=names, suggestion=_closest(spec.uses, names))
        for port, inp in spec.inputs.items():
            sources_y = y.value["inputs"].value[port].value["sources"].value
            for src, src_y in zip(inp.sources, sources_y, strict=True):
                node, _ = _parse_source(src_y)
                if node not in known:
                    raise _err(src_y, f"source {src!r} names unknown node '{node}'",
                               allowed=ids, suggestion=_closest(node, ids))
        if spec.clock is not None and spec.clock.wait_for is not None:
            wait_y = y.value["clock"].value["wait_for"].value
            for name, name_y in zip(spec.clock.wait_for, wait_y, strict=True):
                if name not in known:
                    raise _err(name_y, f"wait_for names unknown node '{name}'", allowed=ids,
                               suggestion=_closest(name, ids))


# --------------------------------------------------------------------------
# entry point


def load(path: str | Path, *, sets: Sequence[str] = (), episodes: int | None = None,
         environ: Mapping[str, str] | None = None) -> LaunchFile:
    """Read, resolve and check a launch file; the only exception is LaunchError."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    try:
        return _load(path, sets, episodes, env)
    except LaunchError:
        raise
    except RecursionError:
        raise LaunchError("the file nests too deeply (recursive YAML anchors?)",
                          file=Path(path)) from None
    except Exception as exc:  # a bug here must still not show the user a traceback
        raise LaunchError(f"internal error while loading: {type(exc).__name__}: {exc}",
                          file=Path(path)) from exc


def _load(path: str | Path, sets: Sequence[str], episodes: int | None,
          environ: Mapping[str, str]) -> LaunchFile:
    source = resolve_path(path, environ=environ)
    ctx = _Context(environ, [source.resolve()])
    root = _read(source, ctx, None)

    nodes = root.get("nodes")
    if nodes is not None and nodes.is_list:
        nodes.value = _expand(nodes.value)
    for text in sets:
        key_y, value_y = _parse_set(text)
        _apply_set(root, key_y, value_y)
    if episodes is not None:
        run = root.get("run")
        if run is None or not run.is_map:
            run = _Y({}, _NOWHERE, "run")
            root.value["run"] = run
        run.value["episodes"] = _Y(episodes, _NOWHERE, "episodes=", _NOWHERE)
    if nodes is not None and nodes.is_list:
        _check_unique(_index(nodes.value))

    data = _plain(root)
    data.setdefault("name", source.stem)
    data["source"] = source
    try:
        lf = LaunchFile.model_validate(data)
    except ValidationError as exc:
        raise _translate(exc, root) from None
    _check_references(lf, root.value["nodes"].value)
    return lf
