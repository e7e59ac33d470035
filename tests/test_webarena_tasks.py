"""WebArena's and WebArena-Lite's task files on the VWA loader and evaluators, without a browser: the
new site placeholders, a one-task file as WebArena's generate_test_data.py writes it, lenient
readings, the `tasks` command's report, WebArena's URL rule and string cleaning, and a fuzzy_match
with no LLM judge wired ending the episode `unscored` through the real judge node.

The task files are small hand-made ones in WebArena's shapes (tests/data/webarena)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernel.testing import FakeRuntime
from nodes.browser.login import MissingLoginState, find_state_file, state_file_candidates, state_sites
from nodes.browser.vwa.tasks import SITES, TaskFileError, load_task_file, parse_task
from nodes.judge import vwa_strings as s
from nodes.judge.vwa import VwaJudge
from nodes.judge.vwa_eval import CannotScore, evaluate, url_matches
from nodes.judge.vwa_graders import GRADER_SAMPLING

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "webarena"
LITE = DATA / "lite_sample.raw.json"
ONE = DATA / "177.json"  # one task, as WebArena's scripts/generate_test_data.py writes config_files/<i>.json
BASES = {"shopping": "http://127.0.0.1:7770", "shopping_admin": "http://127.0.0.1:7780/admin",
         "reddit": "http://127.0.0.1:9999", "gitlab": "http://127.0.0.1:8023", "map": "http://127.0.0.1:3000",
         "wikipedia": "http://127.0.0.1:8888", "homepage": "http://127.0.0.1:4399"}


# ---- the loader -----------------------------------------------------------------------------------

def test_every_webarena_site_placeholder_resolves_and_the_extras_stay():
    tasks = {t.task_id: t for t in load_task_file(LITE, BASES)}
    assert tasks[0].start_url == "http://127.0.0.1:7780/admin"  # __SHOPPING_ADMIN__, not __SHOPPING__ + "_ADMIN__"
    assert tasks[1].start_urls == ["http://127.0.0.1:8023", "http://127.0.0.1:9999"]
    assert tasks[1].eval.reference_url == "http://127.0.0.1:9999/f/technology |OR| http://127.0.0.1:9999/f/Technology"
    assert tasks[1].eval.program_html[0].required_contents.must_include == [
        "http://127.0.0.1:8023/a11yproject/a11yproject.com/-/issues"]
    assert tasks[2].start_url == "http://127.0.0.1:3000"
    assert tasks[2].eval.reference_url == "http://127.0.0.1:8888/wiki/Carnegie_Mellon_University"
    assert tasks[4].start_url == "http://127.0.0.1:4399" and tasks[4].geolocation == {"latitude": 40.4433,
                                                                                       "longitude": -79.9436}
    assert tasks[0].model_extra == {"old_task_id": 0} and tasks[1].model_extra["old_task_id"] == 681
    assert tasks[0].eval.model_extra["reference_answer_raw_annotation"] == "Quest Lumaflex\u2122 Band"
    assert tasks[3].eval.string_note == "There is no review of a tent" and tasks[3].unachievable
    assert tasks[1].storage_state == "./.auth/gitlab.reddit_state.json" and all(t.require_login for t in tasks.values()
                                                                                 if t.task_id != 4)
    assert {t.origin for t in tasks.values()} == {"webarena-lite"}
    assert [f"__{site.upper()}__" for site in SITES][:3] == ["__CLASSIFIEDS__", "__SHOPPING__", "__SHOPPING_ADMIN__"]


def test_a_bare_string_where_a_list_belongs_is_read_as_one_item_and_noted():
    task = load_task_file(LITE, BASES)[2]  # WebArena-Lite task 81 writes must_include this way
    assert task.eval.reference_answers.must_include == ["1.2km"]
    assert task.notes == ["eval.reference_answers.must_include: a string where a list belongs, read as the "
                          "one-item list ['1.2km']"]
    assert task.problems() == [] and load_task_file(LITE, BASES)[0].notes == []
    raw = json.loads(LITE.read_text())[0]
    raw["eval"] = {"eval_types": ["program_html"], "program_html": [
        {"url": "last", "locator": "", "required_contents": {"must_exclude": "refund"}}]}
    target = parse_task(raw).eval.program_html[0]
    assert target.required_contents.must_exclude == ["refund"]
    with pytest.raises(TaskFileError, match=r"task 0: eval.reference_answers.must_include: Input should be a valid list"):
        parse_task({**json.loads(LITE.read_text())[0], "eval": {"eval_types": ["string_match"],
                                                                "reference_answers": {"must_include": 5}}})


def test_an_unachievable_task_without_its_reason_is_reported():
    task = load_task_file(LITE, BASES)[4]
    assert task.problems() == ["eval.string_note: fuzzy_match 'N/A' needs the reason the task cannot be done in "
                               "string_note (an answer other than 'N/A' is graded against it)"]


def test_a_one_task_file_as_webarena_generates_it():
    (task,) = load_task_file(ONE)  # no placeholders left: the URLs are real
    assert task.task_id == 177 and task.start_url == "http://localhost:8023" and task.origin == "webarena"
    assert task.eval.model_extra == {"annotation_note": "a key no evaluator reads"}
    assert task.eval.url_note is None and task.problems() == []
    (again,) = load_task_file(ONE, BASES)  # base URLs given anyway change nothing
    assert again.eval.reference_url == task.eval.reference_url


def test_a_missing_base_url_names_the_whole_placeholder():
    with pytest.raises(TaskFileError, match=r"task 0: start_url: no base URL for __SHOPPING_ADMIN__ \(given: shopping\)"):
        load_task_file(LITE, {"shopping": "http://x"})


# ---- the `tasks` and `score` commands ---------------------------------------------------------------------

def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {site.upper() for site in SITES}}
    return subprocess.run([sys.executable, "-m", "nodes.browser.vwa", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**clean, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=60)


def test_the_tasks_command_counts_webarena_files_and_reports_what_blocks_them_by_reason():
    from nodes.browser.vwa.__main__ import local_sites

    run = cli("tasks", str(LITE), str(ONE))
    assert run.returncode == 1, run.stdout + run.stderr
    out = run.stdout
    assert out.startswith("6 tasks in 2 files\n")
    for line in ("  webarena-lite 5", "  webarena 1", "  shopping_admin 1", "  gitlab 2", "  map 1",
                 "  string_match 4", "  url_match 2", "  program_html 1", "  string_match.exact_match 1",
                 "  string_match.must_include 1", "  string_match.fuzzy_match(N/A) 2", "  url_match.GOLD in PRED 1",
                 "  url_match.no url_note 1", "  program_html.must_include 1"):
        assert f"\n{line}\n" in out, (line, out)
    assert "several tabs 1, unachievable 3, require_reset 0, require_login 5, storage_state 4" in out
    assert "need a model to be scored: an LLM judge (fuzzy_match, or an N/A task's reason; judge.vwa's grader) 2, " \
           "a vision model or the attribute oracle (eval_vqa) 0\n" in out
    remote = sorted({"shopping_admin", "gitlab", "map", "reddit", "wikipedia", "shopping", "homepage"} - local_sites())
    if remote:
        assert "sites with no local site here (give their base URLs, hosts: in the env): " in out
        for site in remote:
            assert f"{site} (" in out
    assert "lite_sample.raw.json: task 2: eval.reference_answers.must_include: a string where a list belongs" in out
    assert ("cannot run (1 tasks), by reason:\n  1 tasks: fuzzy_match 'N/A' needs the reason the task cannot be done "
            "in string_note") in out
    assert "lite_sample.raw.json: task 4: eval.string_note: fuzzy_match 'N/A' needs" in out


def test_the_score_command_reads_webarena_s_site_variables(tmp_path):
    ref = "__SHOPPING_ADMIN__/sales/order/view/order_id/302"
    task = {"sites": ["shopping_admin"], "task_id": 9, "start_url": "__SHOPPING_ADMIN__", "intent": "Open order 302",
            "eval": {"eval_types": ["url_match"], "reference_url": ref, "reference_answers": None}}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    env = {"SHOPPING_ADMIN": "http://127.0.0.1:7780/admin", "SHOPPING": "http://127.0.0.1:7770"}
    run = cli("score", str(path), "--url", "http://localhost:7780/admin/sales/order/view/order_id/302/key/ab12/", env=env)
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "1", run.stdout + run.stderr
    assert "pass url_match: GOLD in PRED" in run.stdout  # no url_note: WebArena's rule
    run = cli("score", str(path), "--url", "http://127.0.0.1:7780/admin/sales/order/view/order_id/301/", env=env)
    assert run.stdout.splitlines()[-1] == "0"
    run = cli("score", str(path), "--url", "http://x/", "--base-url", "shopping_admin=http://h:1/admin")
    assert run.stdout.splitlines()[-1] == "0" and "http://h:1/admin/sales/order" in run.stdout


# ---- WebArena's URL rule ----------------------------------------------------------------------------

GITLAB = "http://127.0.0.1:8023"


@pytest.mark.parametrize("ref, pred, expected", [
    # the base path of the reference is part of the final URL's; the scheme and trailing '/' do not count
    (f"{GITLAB}/a11yproject/a11yproject.com/-/issues/719", f"{GITLAB}/a11yproject/a11yproject.com/-/issues/719/", True),
    (f"{GITLAB}/a11yproject/a11yproject.com/-/issues/719", f"{GITLAB}/a11yproject/a11yproject.com/-/issues/720", False),
    ("http://localhost:9999/f/deeplearning", "https://127.0.0.1:9999/f/deeplearning/new?p=2", True),
    ("http://127.0.0.1:9999/f/deeplearning", "http://127.0.0.1:9998/f/deeplearning", False),
    # every query parameter of the reference has its value among the final URL's; extra ones are free
    (f"{GITLAB}/dashboard/issues?scope=all&state=opened&assignee_username=byteblaze",
     f"{GITLAB}/dashboard/issues?assignee_username=byteblaze&sort=created_date&state=opened&scope=all", True),
    (f"{GITLAB}/dashboard/issues?scope=all&state=opened", f"{GITLAB}/dashboard/issues?scope=all&state=closed", False),
    (f"{GITLAB}/dashboard/issues?scope=all&state=opened", f"{GITLAB}/dashboard/issues?scope=all", False),
    (f"{GITLAB}/x/-/issues/?label_name%5B%5D=bug", f"{GITLAB}/x/-/issues?label_name[]=bug&label_name[]=ui", True),
    (f"{GITLAB}/search?search=a%20b", f"{GITLAB}/search?search=a+b", True),
    # VWA's copy matched text, so id=4 was found in id=42; WebArena's compares the values
    ("http://127.0.0.1:9980/index.php?page=item&id=4", "http://127.0.0.1:9980/index.php?page=item&id=42", False),
    ("http://127.0.0.1:9980/index.php?page=item&id=42", "http://127.0.0.1:9980/index.php?page=item&id=42&x=1", True),
])
def test_gold_in_pred_is_webarena_s_base_path_and_query_rule(ref, pred, expected):
    assert url_matches(ref, pred, "GOLD in PRED") is expected


async def test_url_match_takes_any_or_alternative_and_webarena_s_rule_by_default():
    raw = json.loads(LITE.read_text())[1]
    raw["eval"] = {"eval_types": ["url_match"], "reference_url": raw["eval"]["reference_url"], "url_note": "GOLD in PRED"}
    task = parse_task(raw, base_urls=BASES)
    assert (await evaluate(task, answer=None, url="http://127.0.0.1:9999/f/Technology/new")).reward == 1
    assert (await evaluate(task, answer=None, url="http://127.0.0.1:9999/f/technology")).reward == 1
    assert (await evaluate(task, answer=None, url="http://127.0.0.1:9999/f/science")).reward == 0
    (one,) = load_task_file(ONE)  # no url_note: WebArena's default, GOLD in PRED
    assert (await evaluate(one, answer=None, url="http://127.0.0.1:8023/a11yproject/a11yproject.com/-/issues/719"
                                                 "#note_12")).reward == 1
    exact = parse_task({**raw, "eval": {**raw["eval"], "url_note": "EXACT"}}, base_urls=BASES)
    assert (await evaluate(exact, answer=None, url="http://127.0.0.1:9999/f/Technology/new")).reward == 0


# ---- WebArena's string cleaning and checks -------------------------------------------------------------------

def test_clean_answer_and_the_token_rules():
    assert s.clean("  'Quest Lumaflex\u2122 Band'\n") == "quest lumaflex\u2122 band"
    assert s.exact_match("Quest Lumaflex\u2122 Band", ' "quest lumaflex\u2122 band" ')
    assert not s.exact_match("Quest Lumaflex Band", "Quest Lumaflex Band, I think")
    # one character: a whole token, as WebArena (and VWA) ask
    assert s.must_include("0", "I have 0 orders") and not s.must_include("0", "I have 10 orders")
    # one longer token: a whole token (VWA's and WebArena-Lite's rule; WebArena took a substring)
    assert s.must_include("14", "14 reviews.") and not s.must_include("14", "114 reviews")
    assert s.must_include("pittsburgh", "Pittsburgh's airport") and not s.must_include("blue", "bluetooth")
    # several tokens: a substring
    assert s.must_include("Rhode Island", "It is in rhode island, USA") and s.must_include("$25.99", "costs $25.99!")
    # VAB's rule: a token with '/' offers its parts
    assert s.must_include("01", "01/11, 02/16") and s.must_include("16", "01/11, 02/16")
    assert not s.must_include("1", "01/11")
    assert s.must_include("yes |OR| true", "True, it is") and s.must_exclude("no", "not now")


async def test_unachievable_and_fuzzy_answers_without_a_grader_cannot_be_scored():
    tasks = {t.task_id: t for t in load_task_file(LITE, BASES)}
    assert (await evaluate(tasks[3], answer=" n/a ")).reward == 1  # N/A itself needs no grader
    with pytest.raises(CannotScore, match="task 3: fuzzy_match 'N/A' \\(ua_match\\) needs an LLM judge"):
        await evaluate(tasks[3], answer="There are no tents")
    raw = json.loads(LITE.read_text())[0]
    raw["eval"]["reference_answers"] = {"fuzzy_match": ["driving: 13min", "walking: 1h 45min"]}
    with pytest.raises(CannotScore, match="needs an LLM judge"):
        await evaluate(parse_task(raw), answer="13 minutes by car")
    with pytest.raises(CannotScore, match="needs the reason the task cannot be done"):  # built in code, unchecked
        await evaluate(tasks[4], answer="I cannot see where I am")


# ---- the judge node: unscored, never a silent 0 or 1 -------------------------------------------------------

FUZZY_TASK = {"sites": ["map"], "task_id": 7, "start_url": "http://127.0.0.1:3000", "intent": "How long is the walk?",
              "eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["1h 45min"]}}}


async def judged(task: dict[str, Any], answer: str, **params: Any) -> tuple[dict[str, Any], FakeRuntime]:
    """The real VWA judge on the in-memory runtime; ``chat`` replies stand where a model node would."""
    judge = VwaJudge()
    replies: dict[str, Any] = {"vwa.task": {"task": task, "base_urls": {}}, "page.release": True,
                               "chat": {"text": "correct"}}
    rt = FakeRuntime(judge, "judge", params=params, sources={"step": ["env"]}, replies=replies)
    await judge.setup()
    for t, done in ((0, False), (1, True)):
        await rt.deliver("step", {"episode": "ep00000", "t": t, "action": "stop", "valid": True, "reward": 0.0,
                                  "done": done, "info": {"answer": answer, "url": "http://127.0.0.1:3000/"}}, src="env")
    (end,) = rt.requested("episode.end")
    return end, rt


async def test_a_fuzzy_match_with_no_judge_model_ends_unscored_with_the_reason():
    end, rt = await judged(FUZZY_TASK, "about an hour and three quarters")
    assert end["status"] == "unscored" and "success" not in end["metrics"]
    assert end["metrics"]["reason"] == "task 7: fuzzy_match '1h 45min' needs an LLM judge (a model node); none was given"
    assert end["metrics"]["task_id"] == "7" and rt.requested("chat") == []
    assert rt.requested("run.error")[0]["kind"] == "vwa.unscored"
    assert rt.summary_sections["vwa"]["unscored"] == 1 and rt.summary_sections["vwa"]["episodes"] == 0


async def test_with_a_judge_model_wired_the_fuzzy_match_is_graded_at_temperature_zero():
    end, rt = await judged(FUZZY_TASK, "about an hour and three quarters", grader="model")
    assert end["status"] == "completed" and end["metrics"]["success"] == 1.0
    (chat,) = rt.requested("chat")
    assert chat["sampling"] == GRADER_SAMPLING and chat["sampling"]["temperature"] == 0
    prompt = chat["messages"][-1]["content"]
    assert "Reference answer: 1h 45min\n" in prompt and "Agent's answer: about an hour and three quarters\n" in prompt


# ---- where a task's login state comes from ------------------------------------------------------------------

def test_state_files_are_named_for_their_sites_and_looked_for_under_the_auth_folder(tmp_path):
    assert state_sites("./.auth/gitlab.reddit_state.json") == ["gitlab", "reddit"]
    assert state_sites("./.auth/shopping_admin_state.json") == ["shopping_admin"]
    assert state_sites("cookies.json", ["map"]) == ["map"]
    assert state_file_candidates("./.auth/x_state.json", tmp_path) == [tmp_path / ".auth/x_state.json",
                                                                        tmp_path / "x_state.json"]
    (tmp_path / "x_state.json").write_text('{"cookies": [], "origins": []}')
    assert find_state_file("./.auth/x_state.json", tmp_path, "task 3") == tmp_path / "x_state.json"
    with pytest.raises(MissingLoginState) as missing:
        find_state_file("./.auth/gitlab.reddit_state.json", tmp_path, "tasks.json: task 12")
    text = str(missing.value)
    assert text.startswith("tasks.json: task 12: storage_state ./.auth/gitlab.reddit_state.json not found (looked "
                           f"for {tmp_path}/.auth/gitlab.reddit_state.json or {tmp_path}/gitlab.reddit_state.json)")
    assert "auto_login script for gitlab, reddit" in text
    with pytest.raises(MissingLoginState, match="give the env's auth_dir"):
        find_state_file("./.auth/nowhere_state.json", None, "task 1")


def test_site_login_logs_in_the_account_kept_for_the_benchmark_site():
    from nodes.browser.sites.forum import Forum
    from nodes.browser.sites.framework import login_state, session_cookie_value

    class Shop(Forum):  # a site whose admin panel is a benchmark site of its own
        accounts = (("emma", "emma@example.com", "pw", "Emma"), ("admin", "admin@example.com", "pw", "Admin"))
        login_accounts = {"shopping_admin": "admin"}

    def who(state: dict[str, Any]) -> str:
        (cookie,) = state["cookies"]
        assert cookie["name"] == "fb_session_forum" and cookie["domain"] == "127.0.0.1" and cookie["path"] == "/"
        assert cookie["value"] == session_cookie_value("forum", 3, cookie["value"].split("|")[0])
        return cookie["value"].split("|")[0]

    assert who(login_state(Shop, 3, "http://127.0.0.1:7770")) == "emma"
    assert who(login_state(Shop, 3, "http://127.0.0.1:7770", for_site="shopping_admin")) == "admin"
    assert who(login_state(Shop, 3, "http://127.0.0.1:7770", "emma", "shopping_admin")) == "emma"
    with pytest.raises(ValueError, match=r"site forum has no account 'bob' \(accounts: emma, admin\)"):
        login_state(Shop, 3, "http://127.0.0.1:7770", "bob")


# ---- WebArena-Lite's own file, from the installed wheel ----------------------------------------------

def test_webarena_lites_165_tasks_load_from_the_wheel_with_the_papers_counts():
    """The file VAB ships (read from browsergym-webarenalite, never a copy): 45 shopping, 35
    shopping_admin, 30 gitlab, 26 map, 19 reddit and 10 across two sites; every evaluator kind
    as the file has them (string_match 80, url_match 39, program_html 67 task-evaluator pairs)."""
    from collections import Counter

    from nodes.browser.vwa.webarena_lite import TASKS, WEBARENA_LITE

    tasks = load_task_file(WEBARENA_LITE)
    assert len(tasks) == TASKS == 165
    single = Counter(t.sites[0] for t in tasks if len(t.sites) == 1)
    assert single == {"shopping": 45, "shopping_admin": 35, "gitlab": 30, "map": 26, "reddit": 19}
    assert sum(len(t.sites) == 2 for t in tasks) == 10
    kinds = Counter(k for t in tasks for k in t.eval.eval_types)
    assert kinds == {"string_match": 80, "url_match": 39, "program_html": 67}
    assert all(t.require_login for t in tasks) and sum(t.unachievable for t in tasks) == 1
    assert [t.task_id for t in tasks] == list(range(165))


def test_a_missing_webarena_lite_wheel_is_named_with_how_to_install_it(monkeypatch):
    import importlib.metadata

    def absent(name: str):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(TaskFileError, match="browsergym-webarenalite.*pip install --no-deps"):
        load_task_file("webarena-lite")
