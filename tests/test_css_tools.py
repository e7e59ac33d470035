"""VAB-CSS without a browser: the Action line and its refusals, rule edits and revert on a working
copy, the SSIM rule on synthetic images, and the scripted solver's replies through the tools."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from skimage.metrics import structural_similarity
from skimage.transform import resize

from nodes.browser.css import PROJECTS_DIR
from nodes.browser.css.generate import CATEGORICAL, Instance, candidates, describe, load, projects
from nodes.browser.css.rules import RuleError, Stylesheets, Workspace, normalize_selector, stylesheet_paths
from nodes.browser.css.scripted import solve
from nodes.browser.css.similarity import distance, gray, improved, similarity, succeeded
from nodes.browser.css.tools import NO_ACTION, CssTools, find_call, matchable_selector


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return Workspace.create(PROJECTS_DIR / "cinema", tmp_path / "cinema")


@pytest.fixture()
def tools(ws: Workspace) -> CssTools:
    return CssTools(ws)


# -- the projects -------------------------------------------------------------------------------------
def test_the_projects_are_self_contained_multi_file_pages():
    names = projects()
    assert len(names) >= 4
    for name in names:
        folder = PROJECTS_DIR / name
        sheets = stylesheet_paths(folder)
        assert 2 <= len(sheets) <= 3 and all((folder / s).is_file() for s in sheets), name
        text = (folder / "index.html").read_text() + "".join((folder / s).read_text() for s in sheets)
        for outside in ("url(", "@import", "http://", "https://", "//fonts", "<img", "<script"):
            assert outside not in text, (name, outside)
        assert len(candidates(name)) > 100  # enough categorical declarations to corrupt


# -- the Action line ----------------------------------------------------------------------------------
def test_the_first_action_of_a_reply_is_parsed_with_literal_arguments():
    call = find_call("edit_rule('.hero', 'display', 'flex') and then select_rule('.x')")
    assert (call.name, call.args, call.error) == ("edit_rule", (".hero", "display", "flex"), None)
    call = find_call("""get_selectors_by_html_elements("a", {'data-custom': 'v'}, string='haha', class_='xxx')""")
    assert call.args == ("a", {"data-custom": "v"}) and dict(call.kwargs) == {"string": "haha", "class_": "xxx"}
    assert find_call("select_rule('a:not(.b)') -- the one with (parens)").args == ("a:not(.b)",)
    assert find_call("revert_last_edit").name == "revert_last_edit"
    assert find_call("nothing to call here") is None
    assert find_call("select_rule('a')" + ")" * 200_000).args == ("a",)  # bounded work on a hostile reply
    assert find_call("select_rule(" + "(" * 5000).error is not None


def test_replies_without_an_action_get_vab_s_format_reminder(tools: CssTools):
    for reply in ["I think the header is wrong.", "Thought: hmm\nAction: I will now edit the rule",
                  "Action:", "", "Thought: edit_rule('.hero', 'display', 'block') would do"]:
        result = tools.step(reply)
        assert result.feedback == NO_ACTION and not result.ok and not result.changed, reply


def test_unknown_functions_and_injection_attempts_are_refused_and_never_run(tools: CssTools, ws: Workspace):
    before = _tree_digest(ws.folder)
    assert tools.step("Action: insert_rule('.x', 'color', 'red')").feedback == (
        "insert_rule is not a valid function. Please check the function name and try again.")
    for reply, fn in [("Action: __import__('os').system('touch /tmp/pwned_css')", "__import__('os').system"),
                      ("Action: os.system('ls')", "os.system"), ("Action: eval('1+1')", "eval"),
                      ("Action: CssTools.step(None, 'x')", "CssTools.step")]:
        result = tools.step(reply)
        assert result.feedback == f"{fn} is not a valid function. Please check the function name and try again."
    for reply in ["Action: edit_rule(__import__('os').system('touch /tmp/pwned_css'), 'display', 'none')",
                  "Action: get_selectors_by_html_elements(open('/etc/passwd').read())",
                  "Action: select_rule(*['.hero'])", "Action: select_rule(**{'selectorText': '.hero'})",
                  "Action: get_selectors_by_html_elements(lambda t: True)"]:
        result = tools.step(reply)
        assert " is not valid due to exception " in result.feedback, reply
        assert result.feedback.endswith("You may make a mistake and need to fix it.") and not result.ok
    assert not Path("/tmp/pwned_css").exists()
    assert _tree_digest(ws.folder) == before


def test_exceptions_quote_the_call_and_the_error(tools: CssTools):
    result = tools.step("Action: edit_rule('.hero', 'display')")
    assert result.feedback == ("edit_rule('.hero', 'display') is not valid due to exception missing a required "
                               "argument: 'value'. You may make a mistake and need to fix it.")
    assert "is not a single CSS value" in tools.step("Action: edit_rule('.hero', 'color', 'red; display: none')").feedback
    assert "is not a CSS property name" in tools.step("Action: edit_rule('.hero', 'a b', 'red')").feedback
    assert "not closed" in tools.step("Action: select_rule('.hero'").feedback
    assert "too many positional arguments" in tools.step("Action: revert_last_edit(3)").feedback


def test_the_four_tools_answer_as_vab_s_do(tools: CssTools, ws: Workspace):
    got = tools.step("Thought: the buttons\nAction: get_selectors_by_html_elements('a', class_='button')")
    assert got.ok and not got.changed
    listed = [line.split(". ", 1)[1] for line in got.feedback.splitlines()[1:]]
    assert listed == ["'*'", "'a'", "'.button'", "'.button.primary'", "'.button.ghost'"]
    assert "no HTML element" in tools.step("Action: get_selectors_by_html_elements('blink')").feedback
    # pseudo-classes do not hide a rule from the lookup
    assert normalize_selector(":hover") == ":hover" and matchable_selector(".nav a:hover, ::before") == ".nav a, *"
    shown = tools.step("Action: select_rule('.main-nav  ul')").feedback
    assert "{'display': 'flex', 'flex-direction': 'row'}" in shown and "css/layout.css" in shown
    assert "no rule" in tools.step("Action: select_rule('.nope')").feedback.lower()
    edit = tools.step("Action: edit_rule('.main-nav ul', 'flex-direction', 'column')")
    assert edit.ok and edit.screenshot and edit.changed
    assert "flex-direction: column;" in (ws.folder / "css/layout.css").read_text()
    assert not tools.step("Action: edit_rule('.nope', 'color', 'red')").changed
    revert = tools.step("Action: revert_last_edit()")
    assert revert.ok and revert.changed and not revert.screenshot
    assert "flex-direction: row;" in (ws.folder / "css/layout.css").read_text()
    assert "no edit" in tools.step("Action: revert_last_edit()").feedback.lower()
    end = tools.step("Thought: done.\nI have fixed the css style")
    assert end.finished and end.ok


# -- rule edits ---------------------------------------------------------------------------------------
def test_edits_go_to_the_working_copy_and_revert_byte_for_byte(ws: Workspace):
    shipped = _tree_digest(PROJECTS_DIR / "cinema")
    original = {f: (ws.folder / f).read_text() for f in ws.files}
    hero = ws.find(".hero")[0]
    assert ws.read(hero)["justify-content"] == "space-between"
    ws.set_property(".hero", "justify-content", "center")  # replaced in place
    ws.set_property(".hero", "float", "left")  # inserted
    assert ws.remove_property(".hero", "display") is not None
    assert ws.remove_property(".hero", "display") is None  # nothing left to remove
    assert ws.set_property(".missing", "display", "none") is None
    after = ws.read(hero)
    assert after["justify-content"] == "center" and after["float"] == "left" and "display" not in after
    assert list(after)[:3] == ["flex-direction", "align-items", "justify-content"]  # order kept
    assert Stylesheets(ws.folder).read(ws.find(".hero")[0]) == after  # saved to disk
    with pytest.raises(RuleError):
        ws.set_property(".hero", "color", "red } body { display: none")
    assert ws.edits == 3
    while ws.revert() is not None:
        pass
    assert {f: (ws.folder / f).read_text() for f in ws.files} == original
    assert _tree_digest(PROJECTS_DIR / "cinema") == shipped  # the shipped project is never touched


def test_selectors_are_matched_in_their_normal_spelling(ws: Workspace):
    assert normalize_selector(".a>b ,  .c\n+d") == ".a > b, .c + d"
    assert ws.find("h1,h2,  h3, h4") and ws.find(".times-table   th")
    assert ws.read(ws.find("h1, h2, h3, h4")[0]) == {"margin": "0 0 12px", "font-weight": "bold"}


# -- SSIM ---------------------------------------------------------------------------------------------
def _page(h: int, w: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_ssim_is_grayscale_and_resizes_as_vab_does():
    a = _page(200)
    assert similarity(a, a) == 1.0 and distance(a, a) == 0.0
    assert similarity(a, _page(200, seed=1)) < 0.1
    gray_same = a.copy()
    gray_same[..., 2] = a[..., 2] // 4 * 4  # a blue-only change of a few levels hardly shows in luminance
    assert similarity(a, gray_same) > 0.99
    # a page 5% taller: resized and remapped to 0.5 + ssim/2, which lifts the score
    taller = np.concatenate([a, _page(10, seed=2)])
    raw = structural_similarity((gray(a) * 255).astype(np.uint8),
                                (resize(gray(taller), (200, 64)) * 255).astype(np.uint8))
    assert similarity(a, taller) == pytest.approx(0.5 + raw / 2)
    # 20% taller: resized, not remapped
    much = np.concatenate([a, _page(50, seed=3)])
    raw = structural_similarity((gray(a) * 255).astype(np.uint8),
                                (resize(gray(much), (200, 64)) * 255).astype(np.uint8))
    assert similarity(a, much) == pytest.approx(raw)
    assert succeeded(0.099) and not succeeded(0.1)
    assert improved(0.3, 0.36) and not improved(0.31, 0.36)


# -- descriptions and the scripted solver -------------------------------------------------------------
def test_descriptions_name_the_elements_and_both_values():
    html = (PROJECTS_DIR / "cinema" / "index.html").read_text()
    inst = Instance("x", "cinema", "css/layout.css", ".main-nav ul", "flex-direction", "row", "column", "change",
                    0.3, "")
    text = describe(inst, html)
    assert 'the <ul> element styled by ".main-nav ul"' in text
    assert "side by side" in text and "stacked top to bottom" in text
    gone = describe(Instance("x", "cinema", "css/layout.css", ".hero", "display", "flex", None, "remove", 0.3, ""),
                    html)
    assert "lost its display setting" in gone and "a flex container" in gone
    assert set(CATEGORICAL) >= {"display", "text-align", "flex-direction", "position", "float", "visibility",
                                "font-weight", "text-transform", "justify-content", "border-style"}


def test_the_scripted_solver_restores_every_shipped_instance_through_the_tools(tmp_path: Path):
    """Every shipped instance: corrupt a working copy, replay the solver's replies through the tools,
    and the stylesheets come back byte for byte (the rendered check runs on a sample in
    test_css_render)."""
    instances = load()
    assert len(instances) >= 150
    for inst in instances:
        ws = Workspace.create(PROJECTS_DIR / inst.project, tmp_path / inst.id)
        original = {f: (ws.folder / f).read_text() for f in ws.files}
        if inst.corrupted is None:
            assert ws.remove_property(inst.selector, inst.property)
        else:
            assert ws.set_property(inst.selector, inst.property, inst.corrupted)
        tools = CssTools(Stylesheets(ws.folder))
        replies = solve(inst, ws.html)
        results = [tools.step(r) for r in replies]
        assert all(r.ok for r in results), (inst.id, [r.feedback for r in results])
        assert any(line.endswith(f". '{inst.selector}'") for line in results[0].feedback.splitlines()), inst.id
        assert results[2].screenshot and results[-1].finished
        fixed = Stylesheets(ws.folder)
        assert fixed.read(fixed.find(inst.selector)[0]) == Stylesheets(PROJECTS_DIR / inst.project).read(
            Stylesheets(PROJECTS_DIR / inst.project).find(inst.selector)[0]), inst.id
        if inst.corrupted is not None:  # a value put back in place: the very same file
            assert {f: (ws.folder / f).read_text() for f in ws.files} == original
