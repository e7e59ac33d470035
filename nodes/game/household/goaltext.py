"""The task goal in words, written from the activity's BDDL goal and the objects' identifiers.

VAB hands the agent a goal text written by people for each task; here the text is generated from the
same goal conditions the evaluator checks, so any BDDL activity (not only VAB's 45) gets one, and the
words can never drift from what is scored. Objects are named as the picture names them
(``9.tupperware``); a quantified variable lists the objects it ranges over, so the agent knows which
identifiers to look for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .activities import Problem
from .model import Household

RELATIONS = {"ontop": "on top of", "inside": "inside", "under": "under", "nextto": "next to",
             "attached": "attached to", "overlaid": "spread over", "draped": "draped over",
             "touching": "touching", "contains": "holding some", "filled": "filled with",
             "covered": "covered with", "saturated": "soaked with"}
STATES = {"cooked": ("cooked", "not cooked"), "frozen": ("frozen", "not frozen"), "open": ("open", "closed"),
          "toggled_on": ("switched on", "switched off"), "hot": ("hot", "not hot"), "burnt": ("burnt", "not burnt"),
          "folded": ("folded", "unfolded"), "unfolded": ("unfolded", "folded"), "on_fire": ("on fire", "not on fire"),
          "broken": ("broken", "not broken")}
QUANTIFIERS = ("forall", "exists", "forn", "forpairs", "fornpairs")


def goal_text(problem: Problem, hh: Household) -> str:
    """One sentence per goal condition, in the order the problem lists them."""
    namer = _Namer(problem, hh)
    sentences = [_sentence(namer.say(cond, {})) for cond in problem.goal]
    return " ".join(sentences) if sentences else "Nothing needs to change."


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _word(synset: str) -> str:
    """``wicker_basket.n.01`` -> ``wicker basket``."""
    return synset.split(".", 1)[0].replace("__", " ").replace("_", " ")


class _Namer:
    def __init__(self, problem: Problem, hh: Household) -> None:
        self.hh = hh
        self.instances: dict[str, list[str]] = {}
        for inst, synset in problem.objects:
            self.instances.setdefault(synset, []).append(inst)

    def name(self, inst: str) -> str:
        thing = self.hh.things.get(inst)
        if thing is None or thing.id is None:
            return f"a {_word(inst.rsplit('_', 1)[0] if '.' in inst else inst)}"
        if thing.category == "floor":
            return f"{thing.label} (the floor of {thing.room})"
        return thing.label

    def members(self, synset: str) -> str:
        """``(3.kabob, 4.kabob)``: the objects a variable of this category ranges over."""
        named = [self.name(i) for i in self.instances.get(synset, ()) if i in self.hh.things]
        return f" ({', '.join(named)})" if named else ""

    def term(self, arg: str, bound: Mapping[str, str]) -> str:
        arg = arg.lstrip("?")
        return bound.get(arg) or self.name(arg)

    def say(self, form: Any, bound: Mapping[str, str]) -> str:
        head = form[0]
        if head == "and":
            return "; ".join(self.say(f, bound) for f in form[1:])
        if head == "or":
            return "either " + ", or ".join(self.say(f, bound) for f in _flat_or(form))
        if head == "imply":
            return f"if {self.say(form[1], bound)}, then {self.say(form[2], bound)}"
        if head == "not":
            return self.negate(form[1], bound)
        if head in QUANTIFIERS:
            return self.quantified(form, bound)
        return self.atom(form, bound, positive=True)

    def negate(self, form: Any, bound: Mapping[str, str]) -> str:
        if form[0] in RELATIONS or (form[0] in STATES and len(form) == 2) or form[0] not in (
                "and", "or", "imply", "not", *QUANTIFIERS):
            return self.atom(form, bound, positive=False)
        if form[0] == "not":
            return self.say(form[1], bound)
        return f"it is not so that {self.say(form, bound)}"

    def atom(self, form: Any, bound: Mapping[str, str], positive: bool) -> str:
        pred, args = form[0], [self.term(a, bound) for a in form[1:]]
        if pred in RELATIONS and len(args) == 2:
            return f"{args[0]} is {'' if positive else 'not '}{RELATIONS[pred]} {args[1]}"
        if pred in STATES and len(args) == 1:
            return f"{args[0]} is {STATES[pred][0 if positive else 1]}"
        said = pred.replace("_", " ")
        return f"{args[0]} is {'' if positive else 'not '}{said}" + (f" {' '.join(args[1:])}" if args[1:] else "")

    def quantified(self, form: Any, bound: Mapping[str, str]) -> str:
        head = form[0]
        if head in ("forall", "exists"):
            var, synset = _binding(form[1])
            phrase = (f"each {_word(synset)}" if head == "forall" else f"one of the {_word(synset)}s") \
                + self.members(synset)
            return self.say(form[2], {**bound, var: phrase})
        if head == "forn":
            count, (var, synset) = form[1][0], _binding(form[2])
            phrase = f"each of {count} {_word(synset)}s chosen from{self.members(synset)}"
            return self.say(form[3], {**bound, var: phrase})
        # forpairs / fornpairs: two variables matched one to one; the one the condition is about comes first
        count = f"{form[1][0]} " if head == "fornpairs" else ""
        first, second, body = (form[2], form[3], form[4]) if head == "fornpairs" else (form[1], form[2], form[3])
        (va, sa), (vb, sb) = _binding(first), _binding(second)
        if _first_variable(body, (va, vb)) == va:
            (va, sa), (vb, sb) = (vb, sb), (va, sa)
        each = f"each of {count}{_word(sb)}s chosen from" if count else f"each {_word(sb)}"
        said = self.say(body, {**bound, va: f"its own {_word(sa)}", vb: f"{each}{self.members(sb)}"})
        return f"{said}, one {_word(sb)} per {_word(sa)}{self.members(sa)}"

def _binding(form: Any) -> tuple[str, str]:
    """``(?kabob.n.01 - kabob.n.01)`` -> (``kabob.n.01``, ``kabob.n.01``)."""
    return str(form[0]).lstrip("?"), str(form[-1])


def _first_variable(form: Any, names: tuple[str, ...]) -> str | None:
    """Which of ``names`` the condition mentions first (its subject, in a BDDL atom)."""
    if isinstance(form, list):
        for part in form:
            if (found := _first_variable(part, names)) is not None:
                return found
        return None
    name = str(form).lstrip("?")
    return name if str(form).startswith("?") and name in names else None


def _flat_or(form: Any) -> list[Any]:
    """The alternatives of an ``or``, with nested ``or``s lifted into it."""
    out: list[Any] = []
    for part in form[1:]:
        out.extend(_flat_or(part) if isinstance(part, list) and part and part[0] == "or" else [part])
    return out
