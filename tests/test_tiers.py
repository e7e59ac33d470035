"""The suite's tiers (tests/tiers.py): what puts a test in which tier, and the guard that fails a
`unit` test that starts a process, shown on a suite of its own run by a real pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.helpers import ROOT, launch_env
from tests.tiers import Classifier, SpawnGuard, TierViolation, uses


def _pure(x: int) -> int:
    return x + 1


def _spawns() -> None:
    subprocess.run(["true"], check=True)


def _calls_a_spawner() -> None:
    _pure(1)
    _spawns()


@uses("browser")
def _declared() -> None:
    pass


def _names_a_model_file() -> None:
    _spawns()
    print("hello_local.yaml")


def _names_a_model_file_only() -> None:
    print("hello_local.yaml")


@pytest.mark.unit  # it reads the helpers' code, never runs them: a claim the guard holds it to
def test_a_helper_chain_is_followed_to_what_starts_a_process() -> None:
    c = Classifier()
    assert c.found(_pure) == ("unit", ())
    assert c.found(_spawns)[0] == "process"
    tier, why = c.found(_calls_a_spawner)
    assert tier == "process" and why[:2] == ("_spawns", "subprocess"), why


def _imports_the_harness_inside() -> None:
    from kernel.testing import Harness

    Harness()


@pytest.mark.unit  # it reads the helper's code, never runs it: a claim the guard holds it to
def test_an_import_inside_a_test_is_followed_whether_or_not_its_module_was_loaded(monkeypatch) -> None:
    """Run alone, a file whose test imports the harness inside its body was classified `unit` (its
    module was not in sys.modules yet) and failed at the guard; in the whole suite another file had
    imported it, and the same test was `process`."""
    monkeypatch.delitem(sys.modules, "kernel.testing", raising=False)
    assert Classifier().found(_imports_the_harness_inside)[0] == "process"


@pytest.mark.unit  # it reads the helpers' code, never runs them: a claim the guard holds it to
def test_a_declared_helper_and_a_model_launch_file_raise_the_tier() -> None:
    c = Classifier()
    assert c.found(_declared) == ("browser", ("@uses",))
    assert c.found(_names_a_model_file)[0] == "model"
    # naming a launch file starts nothing: only a test that also runs something is a model test
    assert c.found(_names_a_model_file_only)[0] == "unit"


@pytest.mark.unit  # it reads the helpers' code, never runs them: a claim the guard holds it to
def test_the_projects_own_code_is_followed_to_the_browser_it_starts() -> None:
    from nodes.browser.css.render import Renderer

    def renders() -> None:
        Renderer()

    tier, why = Classifier().found(renders)
    assert tier == "browser" and why[0] == "Renderer", why


def test_uses_refuses_an_unknown_tier() -> None:
    with pytest.raises(ValueError, match="the tiers are unit, process, browser, model, cluster, soak"):
        uses("gpu")


def test_the_guard_refuses_each_way_of_starting_a_process_and_lets_go_when_off() -> None:
    before = (subprocess.Popen._execute_child, os.system, os.fork, os.posix_spawn)
    guard = SpawnGuard()  # over the suite's own guard, which lets this test's starts through to it
    guard.install()
    try:
        guard.active = True
        for start in (lambda: subprocess.run(["true"]), lambda: os.system("true"),
                      lambda: os.posix_spawn("/bin/true", ["true"], {})):
            with pytest.raises(TierViolation, match="a test of the unit tier started a process"):
                start()
        assert len(guard.refused) == 3
        guard.active = False
        guard.refused.clear()
        assert guard.take_seen()  # the audit saw all three
    finally:
        guard.uninstall()
    assert (subprocess.Popen._execute_child, os.system, os.fork, os.posix_spawn) == before


SUITE = '''
import importlib
import subprocess

import pytest


def test_pure():
    assert sum(range(4)) == 6


def test_hides_its_process():
    # nothing in the code names subprocess, so the test lands in unit; the guard catches the start
    importlib.import_module("sub" + "process").run(["true"])


@pytest.mark.unit
def test_claims_unit_and_starts_a_process():
    subprocess.run(["true"])


def test_starts_a_process_openly():
    subprocess.run(["true"], check=True)
'''


def test_a_unit_test_that_starts_a_process_fails_the_run(tmp_path: Path) -> None:
    """A suite of four tests with this project's tier plugin (tests/conftest.py), run by a real pytest:
    the one that hides its process and the one that claims `unit` fail, naming the command; the pure
    one and the one that starts its process openly (so it lands in `process`) pass."""
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n" + "".join(f"    {m}\n" for m in markers))
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(SUITE))
    report = tmp_path / "report.jsonl"
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                          "-rf", "--tiers", "test_suite.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={**launch_env(), "FRAMEBUS_TIERS_AUDIT": str(report)})
    assert res.returncode == 1, res.stdout + res.stderr
    outcomes = {json.loads(line)["test"].split("::")[1]: json.loads(line) for line in report.read_text().splitlines()}
    assert {name: (r["tier"], r["outcome"]) for name, r in outcomes.items()} == {
        "test_pure": ("unit", "passed"),
        "test_hides_its_process": ("unit", "failed"),
        "test_claims_unit_and_starts_a_process": ("unit", "failed"),
        "test_starts_a_process_openly": ("process", "passed"),
    }, res.stdout
    assert "test_hides_its_process was classified `unit` but started a process (subprocess ['true'])" in res.stdout
    assert "process  test_suite.py::test_starts_a_process_openly  <- subprocess" in res.stdout
    assert "2 failed, 2 passed" in res.stdout
