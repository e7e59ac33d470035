"""The shipped VWA task set (nodes/browser/vwa/data/local_tasks.json, written by
nodes/browser/vwa/make_local_tasks.py) and the gold locators of nodes/browser/gold.py.

Fast checks: every task validates, every gold action parses, the file is what the generator writes.
Graph checks: launch/vwa_gold.yaml on a subset (every evaluator kind, an input image, several tabs, an
unachievable task, state changes, and two checkouts in a row that both expect the same new order number,
which only holds when require_reset restored the shop between them) scores 1 with the gold sequences, and 0
with each sequence perturbed (a wrong answer, a wrong click, a step dropped)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nodes.browser.actions import parse_action
from nodes.browser.gold import GoldLocatorError, parse_gold
from nodes.browser.vwa.make_local_tasks import build
from nodes.browser.vwa.tasks import load_task_file
from tests.helpers import ROOT
from tests.vwa_runs import run_tasks

GOLD = ROOT / "launch" / "vwa_gold.yaml"
FILE = ROOT / "nodes/browser/vwa/data/local_tasks.json"
TASKS: list[dict[str, Any]] = json.loads(FILE.read_text())


# ---- fast: the file and the notation -------------------------------------------------------------

def test_every_shipped_task_validates_and_each_site_has_forty() -> None:
    tasks = load_task_file(FILE)
    assert [t.problems() for t in tasks if t.problems()] == []
    for site in ("classifieds", "shopping", "reddit"):
        assert sum(site in t.sites for t in tasks) >= 40, site
    kinds = {k for t in tasks for k in t.eval.eval_types}
    assert kinds == {"string_match", "url_match", "program_html", "page_image_query"}
    assert any(t.images for t in tasks) and any(len(t.start_urls) > 1 for t in tasks)
    assert any(t.unachievable for t in tasks) and any(t.require_reset for t in tasks)
    for t in tasks:
        assert t.intent_template and t.intent_template_id is not None and t.instantiation_dict is not None
        assert all(t.difficulty(axis) in ("easy", "medium", "hard") for axis in ("reasoning", "visual", "overall"))


def test_every_gold_action_parses_and_ends_with_stop() -> None:
    for task in TASKS:
        gold = task["gold_actions"]
        assert gold and gold[-1].startswith("stop"), task["task_id"]
        for action in gold:
            located = parse_gold(action)
            plain = located.with_id(1) if located.locator is not None else action
            parse_action(re.sub(r"__[A-Z]+__", "http://127.0.0.1:1", plain))  # VWA's grammar once resolved


def test_the_file_is_what_the_generator_writes() -> None:
    assert build(0) == TASKS


def test_gold_locator_notation() -> None:
    located = parse_gold("type [css=input[name=q]] [red [big] mug] [1]")
    assert located.locator == "css=input[name=q]" and located.with_id(7) == "type [7] [red [big] mug] [1]"
    assert parse_gold("click [12]").locator is None
    assert parse_gold("stop [N/A]").locator is None
    with pytest.raises(GoldLocatorError, match="kinds: css, text"):
        parse_gold("click [Bicycles]")
    with pytest.raises(GoldLocatorError, match="never closed"):
        parse_gold("click [css=a[href]")


# ---- graph: gold scores 1, perturbed 0 ------------------------------------------------------------

def _first(pred: Any) -> dict[str, Any]:
    return next(t for t in TASKS if pred(t))


def _subset() -> list[dict[str, Any]]:
    """One task per kind, and two checkouts in a row (each expects the same new order number)."""
    kinds = [
        lambda t: t["eval"]["eval_types"] == ["string_match"] and "exact_match" in (t["eval"]["reference_answers"] or {})
        and not t["image"] and "|AND|" not in t["start_url"],
        lambda t: t["eval"]["eval_types"] == ["url_match"],
        lambda t: "page_image_query" in t["eval"]["eval_types"],
        lambda t: bool(t["image"]),
        lambda t: "|AND|" in t["start_url"],
        lambda t: (t["eval"]["reference_answers"] or {}).get("fuzzy_match") == "N/A",
        lambda t: t["require_reset"] and "reddit" in t["sites"] and "vote__up" in json.dumps(t["eval"]),
    ]
    chosen = [_first(k) for k in kinds]
    checkouts = [t for t in TASKS if "click [css=#place-order]" in t["gold_actions"]][:2]
    assert len(checkouts) == 2 and checkouts[0]["eval"]["program_html"][0]["url"] == \
        checkouts[1]["eval"]["program_html"][0]["url"]
    return [*chosen, *checkouts]


def _perturb(task: dict[str, Any]) -> dict[str, Any]:
    """The same task with a gold sequence that goes wrong once."""
    gold = list(task["gold_actions"])
    types = task["eval"]["eval_types"]
    if types == ["url_match"]:
        gold = [re.sub(r"(\d+)'\]\]$", lambda m: f"{int(m.group(1)) % 7 + 1}']]", gold[0]) if "sCategory" in gold[0]
                else "scroll [down]", *gold[1:]]  # a wrong click (another category), or none
    elif "page_image_query" in types:
        gold = [a for a in gold if not a.startswith("click")]  # the listing never opened: the answer alone
    elif "program_html" in types:
        gold = [a for a in gold if not (a.startswith("click") and a == gold[-2])]  # the final click dropped
    else:
        gold[-1] = "stop [N/A]" if gold[-1] != "stop [N/A]" else "stop [There is one.]"  # a wrong answer
    assert gold != task["gold_actions"], task["task_id"]
    return {**task, "gold_actions": gold}


def _run(tmp_path: Path, tasks: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Runs launch/vwa_gold.yaml on ``tasks`` (renumbered in order); the episodes' metrics in order."""
    return run_tasks(GOLD, tmp_path, tasks, name)


@pytest.mark.timeout(300)  # a whole graph with Chromium: 1-2 minutes on one core under a full suite
def test_gold_sequences_score_one(tmp_path: Path) -> None:
    subset = _subset()
    gold = _run(tmp_path, subset, "gold")
    for task, m in zip(subset, gold):
        assert m["status"] == "completed" and m["success"] == 1.0 and m["failed_checks"] == [], (task["task_id"], m)
        assert m["steps"] == len(task["gold_actions"]), (task["task_id"], m)


@pytest.mark.timeout(300)  # a whole graph with Chromium: 1-2 minutes on one core under a full suite
def test_perturbed_sequences_score_zero(tmp_path: Path) -> None:
    subset = _subset()
    wrong = _run(tmp_path, [_perturb(t) for t in subset], "perturbed")
    for task, m in zip(subset, wrong):
        if (task["eval"]["reference_answers"] or {}).get("fuzzy_match") == "N/A":
            # VWA: an answer other than "N/A" goes to the LLM's unachievable-match; vwa_gold has no
            # model node, so the judge refuses to score it and says why, rather than guessing
            assert m["status"] == "unscored" and "needs an LLM judge" in m["reason"], (task["task_id"], m)
            continue
        assert m["status"] == "completed" and m["success"] == 0.0 and m["failed_checks"], (task["task_id"], m)
