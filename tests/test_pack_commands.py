"""`launch` subcommands from packs (kernel.tools.commands): loaded only when chosen, refused with
their entry point named when broken, never shadowing a built-in command. The entry points are
given explicitly here, so the tests do not depend on what the venv has installed."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from kernel.tools import cli, commands

GROUP = commands.COMMAND_GROUP


def _with(monkeypatch: pytest.MonkeyPatch, **eps: str) -> None:
    monkeypatch.setattr(commands, "pack_commands",
                        lambda: {name: EntryPoint(name, value, GROUP) for name, value in eps.items()})


def _fake_vmage_run(path: Path, scores: list[float]) -> Path:
    path.mkdir()
    (path / "launch.yaml").write_text(json.dumps({"nodes": [{"id": "agent", "uses": "agent.random"}]}))
    with (path / "episodes.jsonl").open("w") as fh:
        for r, score in enumerate(scores):
            m = {"score": score, "valid_rate": 1.0, "game": "pong", "level": 1, "round": r, "decisions": 4,
                 "frames": 12, "reply_runs": 2}
            fh.write(json.dumps({"episode_id": f"ep{r:05d}", "status": "completed", "metrics": m}) + "\n")
    return path


def test_a_chosen_pack_command_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _with(monkeypatch, elo="nodes.judge.vmage_elo:add_parser")
    strong = _fake_vmage_run(tmp_path / "strong", [3.0, 2.0, 4.0])
    weak = _fake_vmage_run(tmp_path / "weak", [0.0, 1.0, 0.0])
    assert cli.main(["elo", str(weak), str(strong), "--json", "--permutations", "50", "--no-paper",
                     "--name", f"{weak}=random"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["avg_elo"]) == ["strong", "random"] and set(out["per_game"]["pong"]) == {"strong", "random"}
    assert out["unit_test"]["overall"]["strong"] == 1.0 and out["anchoring"]["rounds"]["strong"] == {"pong": 2.0}
    assert cli.main(["elo", str(strong), str(tmp_path / "nope")]) == 2  # the command's own refusal


def test_pack_commands_not_chosen_are_not_imported(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _with(monkeypatch, ghost="no_such_pack.commands:add_parser", validate="no_such_pack.commands:add_parser")
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    listing = capsys.readouterr().out
    assert "ghost" in listing and "from a pack (no_such_pack.commands)" in listing
    assert cli.main(["ls"]) == 0  # a broken pack command costs the others nothing
    assert cli.main(["validate", "hello.yaml"]) == 0  # a built-in name keeps its meaning
    assert cli.main(["ghost"]) == 2  # chosen: now it is loaded, and fails


def test_a_broken_pack_command_is_refused_with_its_entry_point_named() -> None:
    sub = argparse.ArgumentParser().add_subparsers(dest="command")
    ghost = EntryPoint("ghost", "no_such_pack.commands:add_parser", GROUP)
    with pytest.raises(commands.PackCommandError, match=r"'ghost' \(no_such_pack.commands:add_parser\) cannot be "
                                                        r"loaded: No module named 'no_such_pack'"):
        commands.add_pack_parsers(sub, ["ghost", "x"], (), {"ghost": ghost})
    sub = argparse.ArgumentParser().add_subparsers(dest="command")
    ep = EntryPoint("scores", "nodes.judge.vmage_elo:add_parser", GROUP)  # it adds "elo", not "scores"
    with pytest.raises(commands.PackCommandError, match="must add exactly the subcommand 'scores'"):
        commands.add_pack_parsers(sub, ["scores"], (), {"scores": ep})


def test_elo_is_registered_in_pyproject() -> None:
    import tomllib

    data = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert data["project"]["entry-points"][GROUP] == {"elo": "nodes.judge.vmage_elo:add_parser"}
