"""The kernel's floors run one way (docs/architecture.md): one import-linter ``layers`` contract,
no contract that ignores an import, and a module that imports up a floor fails the check."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLOORS = ["kernel.gym | kernel.testing", "kernel.graph", "kernel.launchfile", "kernel.sdk", "kernel.bus"]
"""Under the tools (the CLI, which serves a graph as an OpenEnv env with kernel.gym): the in-process
graph users, then the core's four floors."""


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_one_layers_contract_orders_the_floors_and_nothing_is_ignored() -> None:
    layers = [c for c in contracts() if c["type"] == "layers"]
    assert len(layers) == 1
    below_tools = [layer for layer in layers[0]["layers"] if "kernel.tools" not in layer]
    assert below_tools == FLOORS
    assert "kernel.tools" in layers[0]["layers"][0]
    assert [c["name"] for c in contracts() if c.get("ignore_imports")] == []
    node_process = [c for c in contracts() if c.get("source_modules") == ["kernel.sdk", "kernel.bus"]]
    assert [c["forbidden_modules"] for c in node_process] == [["yaml"]]  # the floors say the rest


def test_an_upward_import_fails_the_contract(tmp_path: Path) -> None:
    """A copy of the kernel with one upward import (the bus reaching for the graph) is refused by
    the same contract, so a change like it cannot pass ``bash setup.sh test``."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail(f"lint-imports is not installed beside {sys.executable}: run bash setup.sh")
    shutil.copytree(ROOT / "kernel", tmp_path / "kernel", ignore=shutil.ignore_patterns("__pycache__"))
    layers = next(c for c in contracts() if c["type"] == "layers")
    config = tmp_path / ".importlinter"
    config.write_text("[importlinter]\nroot_package = kernel\n\n[importlinter:contract:floors]\n"
                      "name = floors\ntype = layers\nlayers =\n" + "".join(f"    {x}\n" for x in layers["layers"]))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}
    clean = subprocess.run([str(lint), "--no-cache", "--config", str(config)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    probe = tmp_path / "kernel" / "bus" / "protocol.py"
    probe.write_text(probe.read_text() + "\nfrom kernel.graph import core as _upward  # noqa\n")
    broken = subprocess.run([str(lint), "--no-cache", "--config", str(config)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "kernel.bus.protocol -> kernel.graph.core" in broken.stdout
