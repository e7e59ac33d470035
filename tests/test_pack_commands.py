"""`launch` subcommands from packs (kernel.tools.commands): loaded only when chosen, refused with
their entry point named when broken, never shadowing a built-in command. The entry points are
given explicitly here, so the tests do not depend on what the venv has installed."""

from __future__ import annotations

import argparse
import json
import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from kernel.sdk.pages import Page, PageFile, StripEpisode, Strips, Table
from kernel.tools import cli, commands

GROUP = commands.COMMAND_GROUP
NO_FRAMES_NOTE = "no frames recorded (the run&#39;s environment drew none)"


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


def _run_with_steps(path: Path, steps: dict[str, list[str]]) -> Path:
    """A run folder whose episodes have step records (the agent's actions) but no recording: the
    report draws their strips as text."""
    (path / "steps").mkdir(parents=True)
    with (path / "episodes.jsonl").open("w") as eps, (path / "steps" / "agent.jsonl").open("w") as recs:
        for eid, actions in steps.items():
            eps.write(json.dumps({"episode_id": eid, "status": "completed", "metrics": {"score": len(actions)}}) + "\n")
            for t, action in enumerate(actions):
                recs.write(json.dumps({"episode": eid, "t": t, "sent": action}) + "\n")
    return path


def add_page_parser(sub: argparse._SubParsersAction) -> None:
    """A pack command with a page: it prints its own output and returns the page for `launch` to
    write, as `launch elo --report` does."""
    p = sub.add_parser("pagedemo")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--report", type=Path, required=True)
    p.set_defaults(handler=_page_command)


def _page_command(args: argparse.Namespace) -> PageFile:
    print("the command's own table")
    a, b = args.a, args.b
    mixed = Strips("two runs", [StripEpisode(b, "ep1", "b first"), StripEpisode(a, "ep0", "a only"),
                                StripEpisode(b, "ep0", "b second")], subtitle="b, a, b", max_steps=4)
    missing = Strips("a run without steps", [StripEpisode(a, "ep9")], no_strips="nothing recorded for ep9")
    table = Table("scores", ["entrant", "score"], [["ours", 1.5], ["the paper", 2.0]], paper_rows={1})
    page = Page("A pack page", facts=[("runs", "2")], headline=[("best", "ours")], sections=[("scores", [table])],
                notes=["a note from the pack"], strips=[mixed, missing], source=f"{a}, {b}")
    return PageFile(page, args.report)


def test_a_pack_commands_page_is_drawn_by_launch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _with(monkeypatch, pagedemo="tests.test_pack_commands:add_page_parser")
    a = _run_with_steps(tmp_path / "a", {"ep0": ["LEFT", "RIGHT"]})
    b = _run_with_steps(tmp_path / "b", {"ep0": ["UP"], "ep1": ["DOWN", "DOWN", "FIRE"]})
    out = tmp_path / "pages" / "page.html"
    assert cli.main(["pagedemo", str(a), str(b), "--report", str(out)]) == 0
    std = capsys.readouterr()
    assert std.out == "the command's own table\n" and std.err.strip() == f"report: {out}"
    html = out.read_text()
    assert "<title>A pack page</title>" in html and "a note from the pack" in html
    assert re.search(r'<tr class="paper">\s*<td class="[^"]*">the paper</td>', html)
    two = html[html.index("Episode strips: two runs"):html.index("Episode strips: a run without steps")]
    assert re.findall(r"· ([^<]+)</span>", two) == ["b first", "a only", "b second"]  # the pack's order
    assert re.findall(r">(LEFT|RIGHT|UP|DOWN|FIRE)<", two) == ["DOWN", "DOWN", "FIRE", "LEFT", "RIGHT", "UP"]
    assert NO_FRAMES_NOTE in two  # text strips only: the generic note, the pack gave no words of its own
    missing = html[html.index("Episode strips: a run without steps"):]
    assert "nothing recorded for ep9" in missing and "<section class=\"episode\">" not in missing


def test_a_page_that_cannot_be_written_is_refused_as_bad_input(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    _with(monkeypatch, pagedemo="tests.test_pack_commands:add_page_parser")
    a = _run_with_steps(tmp_path / "a", {"ep0": ["LEFT"]})
    assert cli.main(["pagedemo", str(a), str(a), "--report", str(tmp_path)]) == 2  # a folder: an error line, 2
    assert not list(tmp_path.glob("**/*.html"))
