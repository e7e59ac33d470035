"""The catalogue behind ``launch ls``: the bundled launch files grouped by pack, each with what it
needs beyond the core install (extras, Chromium, a model key, variables without a default).

Packs describe themselves (kernel.sdk.catalogue); this module only reads their records and the
launch files' YAML. It does not load the files through the launch-file pipeline: a file whose
variables are unset here (WebArena's site addresses) must still be listed, with those variables as
what it needs. Nothing of a pack but its record is imported, so listing stays quick without extras.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kernel.launchfile import bundled_dir
from kernel.launchfile.finding import yaml_files
from kernel.launchfile.variables import required
from kernel.sdk.catalogue import PACKS_GROUP, Pack

OTHER = Pack(name="other", title="Other launch files", source="claimed by no installed pack")
_MAX_INCLUDES = 16


@dataclass
class Listed:
    """One bundled launch file as the catalogue shows it."""

    file: str
    pack: str
    description: str
    needs: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Catalogue:
    packs: list[Pack]
    files: list[Listed]
    broken: list[str]  # pack records that could not be loaded, with why

    def by_pack(self) -> list[tuple[Pack, list[Listed]]]:
        """The packs that bundle files, in the order of their names, ``other`` last."""
        known = {p.name: p for p in self.packs}
        groups: dict[str, list[Listed]] = {}
        for item in self.files:
            groups.setdefault(item.pack, []).append(item)
        order = sorted(n for n in groups if n != OTHER.name) + ([OTHER.name] if OTHER.name in groups else [])
        return [(known.get(n, OTHER), groups[n]) for n in order]


def installed_packs() -> tuple[list[Pack], list[str]]:
    """Every pack record registered under ``framebus.packs``; a record that fails to load is named
    in the second list instead of hiding the others."""
    packs: list[Pack] = []
    broken: list[str] = []
    for ep in sorted(importlib.metadata.entry_points(group=PACKS_GROUP), key=lambda e: e.name):
        try:
            record = ep.load()
        except Exception as exc:  # a broken pack costs the listing only its own group
            broken.append(f"{ep.name} ({ep.value}): {type(exc).__name__}: {exc}")
            continue
        if not isinstance(record, Pack):
            broken.append(f"{ep.name} ({ep.value}): not a kernel.sdk.catalogue.Pack but {type(record).__name__}")
            continue
        packs.append(record)
    return packs, broken


def build(directory: Path | None = None, packs: list[Pack] | None = None) -> Catalogue:
    """The catalogue of ``directory`` (the bundled launch files by default)."""
    broken: list[str] = []
    if packs is None:
        packs, broken = installed_packs()
    directory = bundled_dir() if directory is None else directory
    files = [_listed(path, packs) for path in yaml_files(directory)]
    return Catalogue(packs, files, broken)


def _listed(path: Path, packs: list[Pack]) -> Listed:
    owner = max(packs, key=lambda p: p.claims(path.stem), default=None)
    pack = owner.name if owner is not None and owner.claims(path.stem) else OTHER.name
    try:
        docs = _read_with_includes(path)
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        return Listed(path.name, pack, f"(unreadable: {type(exc).__name__})")
    head = docs[0] if docs and isinstance(docs[0], dict) else {}
    text = head.get("description")
    description = text.strip().splitlines()[0] if isinstance(text, str) and text.strip() else ""
    return Listed(path.name, pack, description, _needs(docs, packs))


def _read_with_includes(path: Path) -> list[Any]:
    """The file's YAML, then that of what it includes (by name, beside it or bundled)."""
    seen: list[Any] = []
    todo, done = [path], set()
    while todo and len(done) < _MAX_INCLUDES:
        current = todo.pop(0)
        if current.resolve() in done:
            continue
        done.add(current.resolve())
        doc = yaml.safe_load(current.read_text(encoding="utf-8"))
        seen.append(doc)
        includes = doc.get("include") if isinstance(doc, dict) else None
        for item in includes if isinstance(includes, list) else []:
            name = item.get("file") if isinstance(item, dict) else item
            if isinstance(name, str):
                for where in (current.parent / name, bundled_dir() / name):
                    if where.is_file():
                        todo.append(where)
                        break
    return seen


def _nodes(entries: Any) -> list[dict[str, Any]]:
    """The node entries of a ``nodes:`` list, groups' members included."""
    out: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and "group" in entry:
            out.extend(_nodes(entry.get("nodes")))
        elif isinstance(entry, dict):
            out.append(entry)
    return out


def _needs(docs: list[Any], packs: list[Pack]) -> list[str]:
    by_node = {uses: p for p in packs for uses in p.nodes}
    needs: list[str] = []

    def add(text: str) -> None:
        if text not in needs:
            needs.append(text)

    for doc in docs:
        for node in _nodes(doc.get("nodes") if isinstance(doc, dict) else None):
            pack = by_node.get(node.get("uses"))
            if pack is None:
                continue
            for need in pack.needs:
                add(need)
            params = node.get("params") if isinstance(node.get("params"), dict) else {}
            for param, says in pack.param_needs.items():
                value = params.get(param)
                if value is not None and value != "none" and value is not False:
                    add(says.replace("{value}", str(value)))
        for value in _strings(doc):
            for name in required(value):
                add(f"${name} set")
    return needs


def _strings(tree: Any) -> list[str]:
    """Every string value in a YAML tree (not its comments: they may show ``${NAME}`` in prose)."""
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, dict):
        return [s for v in tree.values() for s in _strings(v)]
    if isinstance(tree, list):
        return [s for v in tree for s in _strings(v)]
    return []
