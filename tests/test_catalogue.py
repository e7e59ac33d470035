"""The catalogue behind ``launch ls``: every bundled file and node belongs to a pack, and a file's
needs are read from what it uses."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

from kernel.launchfile import bundled_dir
from kernel.sdk.catalogue import PACKS_GROUP, Pack
from kernel.tools import catalogue
from kernel.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_every_bundled_launch_file_is_claimed_by_one_pack() -> None:
    cat = catalogue.build()
    assert cat.broken == []
    assert [f.file for f in cat.files if f.pack == catalogue.OTHER.name] == []
    assert sorted(f.file for f in cat.files) == sorted(p.name for p in bundled_dir().glob("*.yaml"))
    for listed in cat.files:  # and only one claims it at the longest length (no tie to break silently)
        stem = listed.file.removesuffix(".yaml")
        lengths = sorted((p.claims(stem) for p in cat.packs if p.claims(stem)), reverse=True)
        assert lengths[:2].count(lengths[0]) == 1, listed.file


def test_every_registered_node_type_belongs_to_one_pack() -> None:
    packs, broken = catalogue.installed_packs()
    assert broken == []
    owners: dict[str, list[str]] = {}
    for pack in packs:
        for uses in pack.nodes:
            owners.setdefault(uses, []).append(pack.name)
    registered = {ep.name for ep in importlib.metadata.entry_points(group="framebus.nodes")}
    assert sorted(registered - owners.keys()) == []
    assert sorted(owners.keys() - registered) == []  # a pack names no node that is not there
    assert {u: o for u, o in owners.items() if len(o) > 1} == {}


def test_docs_worlds_lists_every_pack_that_bundles_files() -> None:
    page = (ROOT / "docs" / "worlds.md").read_text()
    headings = set(re.findall(r"^## (.+)$", page, re.M))
    for pack, _files in catalogue.build().by_pack():
        assert pack.title in headings, f"docs/worlds.md has no section '## {pack.title}'"


PACKS = [
    Pack(name="toy", title="Toy", nodes=("toy.env",), launch_prefixes=("toy",), needs=("[games]",)),
    Pack(name="toy_web", title="Toy web", nodes=("toy.browser",), launch_prefixes=("toy_web",),
         needs=("[browser]", "Chromium")),
    Pack(name="model", title="Models", nodes=("model.chat",), needs=("[model]",),
         param_needs={"api_key_env": "${value}", "serve": "embedded model"}),
]


def test_a_files_needs_come_from_its_nodes_packs_their_params_and_unset_variables(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("nodes:\n  - id: env\n    uses: toy.env\n")
    (tmp_path / "toy_web_gpt4o.yaml").write_text(
        "description: |\n  the web toy with a hosted model\n  (second line not shown)\n"
        "include: [base.yaml]\n"
        "nodes:\n"
        "  - id: model\n    uses: model.chat\n    params: {api_key_env: OPENAI_API_KEY}\n"
        "  - group: world\n    nodes:\n"
        "      - id: browser\n        uses: toy.browser\n"
        "        params: {url: '${SHOP}', port: '${PORT:-80}', literal: '$${NOT}'}\n"
        "# ${IN_A_COMMENT} is prose\n")
    (tmp_path / "toy_local.yaml").write_text(
        "nodes:\n  - id: model\n    uses: model.chat\n    params: {api_key_env: none, serve: {kind: vllm-cpu}}\n")
    (tmp_path / "stray.yaml").write_text("description: [\n")
    cat = catalogue.build(tmp_path, PACKS)
    listed = {f.file: f for f in cat.files}
    web = listed["toy_web_gpt4o.yaml"]
    assert web.pack == "toy_web"  # the longer claim wins over toy's
    assert web.description == "the web toy with a hosted model"
    assert web.needs == ["[model]", "$OPENAI_API_KEY", "[browser]", "Chromium", "$SHOP set", "[games]"]
    assert listed["toy_local.yaml"].needs == ["[model]", "embedded model"]
    assert listed["toy_local.yaml"].pack == "toy"
    assert listed["stray.yaml"].pack == "other" and listed["stray.yaml"].description.startswith("(unreadable")
    assert [p.name for p, _ in cat.by_pack()] == ["toy", "toy_web", "other"]


def test_a_broken_pack_record_is_named_and_costs_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.entry_points(group=PACKS_GROUP)
    extra = [importlib.metadata.EntryPoint("nope", "nodes.no_such_pack:PACK", PACKS_GROUP),
             importlib.metadata.EntryPoint("wrong", "kernel.sdk.catalogue:PACKS_GROUP", PACKS_GROUP)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [*real, *extra])
    packs, broken = catalogue.installed_packs()
    assert len(packs) == len(real)
    assert [b.split(" ")[0] for b in broken] == ["nope", "wrong"]
    assert "ModuleNotFoundError" in broken[0] and "not a kernel.sdk.catalogue.Pack but str" in broken[1]


def test_launch_ls_by_pack_as_json_and_a_wrong_pack_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "sokoban", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [pack] = out["packs"]
    assert pack["name"] == "sokoban" and pack["needs"] == ["[games]"]
    files = {f["file"]: f for f in pack["files"]}
    assert files["sokoban_gpt4o.yaml"]["needs"] == ["[games]", "[model]", "$OPENAI_API_KEY"]
    assert files["sokoban_local.yaml"]["needs"] == ["[games]", "[model]", "embedded model"]
    assert main(["ls", "sokobn"]) == 2
    err = capsys.readouterr().err
    assert "no pack 'sokobn'" in err and "did you mean 'sokoban'" in err


def test_launch_ls_shows_each_pack_once_with_its_files_under_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = {line.split()[0]: i for i, line in enumerate(lines) if line.strip()}
    assert at["Sokoban"] < at["sokoban_random.yaml"] < at["sokoban_scripted.yaml"]
    assert at["sokoban_scripted.yaml"] < at["V-MAGE"]
