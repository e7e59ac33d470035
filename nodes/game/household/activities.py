"""BEHAVIOR activity problems, read through bddl's own parser.

The household's rules are whatever an activity's BDDL problem says, so the problem must be read the
way BEHAVIOR reads it (``bddl.activity.Conditions``): the object list, the initial literals and the
goal come out exactly as bddl's goal evaluator expects them later. bddl's parser reports mistakes
with bare ``Exception``s, ``IndexError``s and ``assert``s; this module checks a problem before and
after handing it over and turns every mistake into an ``ActivityError`` that names the file and the
offending form, so a user who writes a ``.bddl`` file sees what to fix instead of a traceback.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
VAB_ONLY = {"added_kitchen_task": DATA / "added_kitchen_task.bddl"}
CONNECTIVES = {"and", "or", "not", "imply", "forall", "exists", "forn", "forpairs", "fornpairs"}
DOMAIN = "omnigibson"


class ActivityError(ValueError):
    """An activity that cannot be loaded: unknown name, bad BDDL, or a predicate the domain lacks."""


@dataclass(eq=False)
class Problem:
    """One activity's BDDL problem as bddl parsed it (compared by identity: goal checkers cache on it)."""

    activity: str
    source: str  # the file it was read from
    conditions: Any  # bddl.activity.Conditions
    objects: list[tuple[str, str]]  # (instance, synset) in the order the problem lists them
    init: list[list] = field(default_factory=list)
    goal: list[list] = field(default_factory=list)

    def synset(self, instance: str) -> str:
        return dict(self.objects)[instance]


def sexpr(form: Any) -> str:
    """A parsed form written back as BDDL text, for messages and literal lists."""
    if isinstance(form, list):
        return "(" + " ".join(sexpr(f) for f in form) + ")"
    return str(form)


@lru_cache(maxsize=1)
def domain_predicates() -> dict[str, int]:
    """bddl's omnigibson domain: predicate name -> number of arguments."""
    from bddl.parsing import parse_domain

    *_, predicates = parse_domain(DOMAIN)
    return {name: len(args) for name, args in predicates.items()}


@lru_cache(maxsize=1)
def bddl_activities() -> tuple[str, ...]:
    from bddl.config import ACTIVITY_CONFIGS_PATH

    return tuple(sorted(d for d in os.listdir(ACTIVITY_CONFIGS_PATH)
                        if os.path.isdir(os.path.join(ACTIVITY_CONFIGS_PATH, d))))


def activity_names() -> list[str]:
    """Every activity loadable by name: bddl's definitions and VAB's own ``added_kitchen_task``."""
    return sorted(set(bddl_activities()) | set(VAB_ONLY))


def vab_instances() -> list[tuple[str, str]]:
    """VAB's 181 test instances, (activity, scene), in VAB's order."""
    pairs = ast.literal_eval((DATA / "vab_tasks.txt").read_text())
    return [(str(a), str(s)) for a, s in pairs]


def problem_path(activity: str) -> Path:
    """Where an activity's problem lives: a given ``.bddl`` path, VAB's own file, or bddl's problem0."""
    if activity.endswith(".bddl") or os.sep in activity:
        path = Path(activity)
        if not path.is_file():
            raise ActivityError(f"{activity}: no such BDDL file")
        return path
    if activity in VAB_ONLY:
        return VAB_ONLY[activity]
    if activity not in bddl_activities():
        close = difflib.get_close_matches(activity, activity_names(), n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ActivityError(f"unknown activity {activity!r}: not among bddl's {len(bddl_activities())} "
                            f"activities nor VAB's added_kitchen_task{hint}")
    from bddl.config import get_definition_filename

    return Path(get_definition_filename(activity, 0))


def load(activity: str) -> Problem:
    """Load an activity by name (bddl's or VAB's) or from a ``.bddl`` file path."""
    return _load(activity)


@lru_cache(maxsize=256)
def _load(activity: str) -> Problem:
    path = problem_path(activity)
    text = path.read_text()
    _check_parentheses(path, text)
    from bddl.activity import Conditions

    name = path.parent.name if path.name.startswith("problem") else path.stem
    try:
        conds = Conditions(name, 0, DOMAIN, predefined_problem=text)
    except Exception as exc:  # bddl's parser raises bare Exceptions and IndexErrors
        raise ActivityError(f"{path}: not a BDDL problem bddl can read ({exc or type(exc).__name__})") from None
    objects = [(inst, synset) for synset, insts in conds.parsed_objects.items() for inst in insts]
    if not objects:
        raise ActivityError(f"{path}: the problem declares no objects (:objects)")
    if not conds.parsed_goal_conditions:
        raise ActivityError(f"{path}: the problem has no goal (:goal)")
    problem = Problem(name, str(path), conds, objects, list(conds.parsed_initial_conditions),
                      list(conds.parsed_goal_conditions))
    names = {inst for inst, _ in objects}
    for form in problem.init:
        _check_form(path, form, names, set(), goal=False)
    for form in problem.goal:
        _check_form(path, form, names, set(), goal=True)
    _check_synsets(path, objects)
    return problem


HEADER = re.compile(r"^\((define|:[\w-]+|and|or|not|imply|forall|exists|forn|forpairs|fornpairs)\b[^()]*"
                    r"(\([^()]*\))?[^()]*$")


def _check_parentheses(path: Path, text: str) -> None:
    """bddl's tokenizer only says a parenthesis is missing; find the line that most likely lacks it."""
    opened: list[int] = []
    unbalanced: list[tuple[int, str]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(";", 1)[0]
        for ch in line:
            if ch == "(":
                opened.append(lineno)
            elif ch == ")":
                if not opened:
                    raise ActivityError(f"{path}:{lineno}: a ')' closes nothing: {line.strip()!r}")
                opened.pop()
        if line.count("(") != line.count(")"):
            unbalanced.append((lineno, line.strip()))
    if opened:
        suspects = [(n, s) for n, s in unbalanced if not HEADER.match(s)] or unbalanced
        n, line = suspects[0]
        raise ActivityError(f"{path}:{n}: a '(' is never closed, most likely in {line!r} "
                            f"({len(opened)} unclosed in all)")


def _check_form(path: Path, form: Any, names: set[str], bound: set[str], goal: bool) -> None:
    """Walk one condition: connectives recurse, atoms must be domain predicates over known objects."""
    where = f"{path}: in {'goal' if goal else 'init'} form {sexpr(form)}"
    if not isinstance(form, list) or not form or not isinstance(form[0], str):
        raise ActivityError(f"{where}: expected a (predicate args...) form")
    head, args = form[0], form[1:]
    if head in CONNECTIVES:
        try:
            if head in ("and", "or"):
                parts, decls = args, []
            elif head in ("not",):
                parts, decls = [args[0]], []
                if len(args) != 1:
                    raise IndexError
            elif head == "imply":
                parts, decls = [args[0], args[1]], []
            elif head in ("forall", "exists"):
                decls, parts = [args[0]], [args[1]]
            elif head == "forn":
                int(args[0][0])
                decls, parts = [args[1]], [args[2]]
            elif head == "forpairs":
                decls, parts = [args[0], args[1]], [args[2]]
            else:  # fornpairs
                int(args[0][0])
                decls, parts = [args[1], args[2]], [args[3]]
        except (IndexError, ValueError, TypeError):
            raise ActivityError(f"{where}: malformed {head!r}") from None
        inner = set(bound)
        for decl in decls:
            if not (isinstance(decl, list) and len(decl) == 3 and decl[1] == "-"):
                raise ActivityError(f"{where}: a quantifier needs (?var - category), got {sexpr(decl)}")
            inner.add(str(decl[0]).lstrip("?"))
        for part in parts:
            _check_form(path, part, names, inner, goal)
        return
    predicates = domain_predicates()
    if head not in predicates:
        close = difflib.get_close_matches(head, list(predicates), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ActivityError(f"{where}: unknown predicate {head!r} (the {DOMAIN} domain has "
                            f"{', '.join(sorted(predicates))}){hint}")
    if len(args) != predicates[head]:
        raise ActivityError(f"{where}: {head!r} takes {predicates[head]} argument(s), got {len(args)}")
    for i, arg in enumerate(args):
        if not isinstance(arg, str):
            raise ActivityError(f"{where}: argument {sexpr(arg)} is not an object name")
        term = arg.lstrip("?")
        if head == "inroom" and i == 1:
            continue  # a room type, not an object
        if term not in names and term not in bound:
            raise ActivityError(f"{where}: {term!r} is neither a declared object nor a quantified variable")


def _check_synsets(path: Path, objects: list[tuple[str, str]]) -> None:
    from .catalog import taxonomy

    tax = taxonomy()
    for inst, synset in objects:
        if not tax.is_valid_synset(synset):
            raise ActivityError(f"{path}: object {inst} has category {synset!r}, which bddl's "
                                f"object taxonomy does not know")
