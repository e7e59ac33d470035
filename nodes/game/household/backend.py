"""BDDL predicates read off the household, and the goal check built on bddl's own evaluator.

BEHAVIOR scores a task with bddl: the goal is compiled against a simulator backend, evaluated, and
the reward is the best ground option's share of satisfied literals (``bddl.activity.get_reward``).
This module is that backend for the symbolic household, so success and the fraction mean what they
mean in BEHAVIOR and VAB. Every predicate is computed from the household's current state at each
call (nothing is cached), so the BDDL state is true to the world at every step.

Decisions where the physics is ours:
- ``ontop x y``: ``x`` rests directly on ``y``; for a floor, anything resting on the ground of that
  floor's room counts (directly on a floor, or laid under furniture). Not transitive.
- ``inside x y``: ``y`` is on ``x``'s chain of supports through ``inside``/``ontop`` links that
  starts or passes with an ``inside`` of ``y`` (an apple on a plate in the fridge is inside it).
- ``under x y``: ``x`` was laid beneath ``y``.
- ``nextto``: symmetric; true when either was put beside the other and neither has moved since.
  ``ontop`` does not imply it (bddl's trivial backend entails it; OmniGibson's geometric test does
  not), so a stacked thing is not "next to" its support.
- ``attached x y``: ``x`` rests directly on ``y`` and both are attachable in BEHAVIOR's taxonomy
  (the camera set on the tripod's mount).
- ``grasped agent x``: the robot holds ``x``. ``future``/``real``: whether the object exists.
- every other domain predicate (``covered``, ``filled``, ``folded``, ...) is False.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from bddl.backend_abc import BDDLBackend
from bddl.logic_base import BinaryAtomicFormula, UnaryAtomicFormula

from .activities import Problem, domain_predicates, sexpr
from .model import Household, Thing
from .placement import enclosing, is_floor


class HouseholdBackend(BDDLBackend):
    """Predicate classes bound to one household; ``hh`` may be swapped for another state."""

    def __init__(self, hh: Household | None = None) -> None:
        self.hh = hh
        self._classes: dict[str, type] = {}

    def get_predicate_class(self, predicate_name: str) -> type:
        if predicate_name not in domain_predicates():
            raise KeyError(predicate_name)
        if predicate_name not in self._classes:
            arity = domain_predicates()[predicate_name]
            test = TESTS.get(predicate_name, _false)
            base = UnaryAtomicFormula if arity == 1 else BinaryAtomicFormula
            backend = self

            def _evaluate(self, *names, _test=test):
                return bool(_test(backend.hh, *names))

            def _sample(self, *args, **kwargs):
                raise NotImplementedError("the household is built by world.build, not sampled by bddl")

            self._classes[predicate_name] = type(f"Household_{predicate_name}", (base,),
                                                 {"STATE_NAME": predicate_name, "_evaluate": _evaluate,
                                                  "_sample": _sample})
        return self._classes[predicate_name]


def _thing(hh: Household, name: str) -> Thing | None:
    return hh.things.get(name)


def _false(hh: Household, *names: str) -> bool:
    return False


def ontop(hh: Household, a: str, b: str) -> bool:
    x, y = _thing(hh, a), _thing(hh, b)
    if x is None or y is None or x.relation is None or a == b:
        return False
    if x.relation == ("ontop", b):
        return True
    if is_floor(y) and x.room == y.room:
        kind, target = x.relation
        return kind == "under" or (kind == "ontop" and is_floor(hh.things[target]))
    return False


def inside(hh: Household, a: str, b: str) -> bool:
    x = _thing(hh, a)
    if x is None or a == b:
        return False
    return any(rel == "inside" and up.name == b for rel, up in enclosing(hh, x))


def under(hh: Household, a: str, b: str) -> bool:
    x = _thing(hh, a)
    return x is not None and x.relation == ("under", b)


def nextto(hh: Household, a: str, b: str) -> bool:
    x, y = _thing(hh, a), _thing(hh, b)
    return x is not None and y is not None and a != b and (b in x.nextto or a in y.nextto)


def attached(hh: Household, a: str, b: str) -> bool:
    x, y = _thing(hh, a), _thing(hh, b)
    return x is not None and y is not None and x.relation == ("ontop", b) and x.attachable and y.attachable


def _state(name: str):
    def test(hh: Household, a: str) -> bool:
        x = _thing(hh, a)
        return x is not None and name in x.states
    return test


def is_open(hh: Household, a: str) -> bool:
    x = _thing(hh, a)
    return x is not None and x.is_open


def grasped(hh: Household, agent: str, a: str) -> bool:
    return hh.agent.holding == a


TESTS = {
    "ontop": ontop, "inside": inside, "under": under, "nextto": nextto, "attached": attached,
    "open": is_open, "cooked": _state("cooked"), "frozen": _state("frozen"), "hot": _state("hot"),
    "toggled_on": _state("toggled_on"), "grasped": grasped,
    "future": lambda hh, a: a not in hh.things, "real": lambda hh, a: a in hh.things,
}


@dataclass
class GoalStatus:
    success: bool
    fraction: float  # the best ground option's share of satisfied literals (BEHAVIOR's reward)
    satisfied: list[str]  # top-level goal conditions that hold, as BDDL text
    unsatisfied: list[str]


class GoalChecker:
    """A problem's goal compiled once by bddl against a household backend, evaluated on demand."""

    def __init__(self, problem: Problem) -> None:
        from bddl.activity import get_goal_conditions, get_ground_goal_state_options, get_object_scope

        self.problem = problem
        self.backend = HouseholdBackend()
        scope = get_object_scope(problem.conditions)
        self.scope = {name: name for name in scope}
        self.conditions = get_goal_conditions(problem.conditions, self.backend, self.scope)
        self.options = get_ground_goal_state_options(problem.conditions, self.backend, self.scope,
                                                     self.conditions)
        self.texts = [sexpr(form) for form in problem.goal]

    def status(self, hh: Household) -> GoalStatus:
        from bddl.activity import evaluate_goal_conditions, get_reward

        self.backend.hh = hh
        success, result = evaluate_goal_conditions(self.conditions)
        fraction = 1.0 if success else float(get_reward(self.options))
        return GoalStatus(success=bool(success), fraction=fraction,
                          satisfied=[self.texts[i] for i in result["satisfied"]],
                          unsatisfied=[self.texts[i] for i in result["unsatisfied"]])

    def success(self, hh: Household) -> bool:
        """Only whether the whole goal holds (cheaper than ``status``: no ground options)."""
        from bddl.activity import evaluate_goal_conditions

        self.backend.hh = hh
        return bool(evaluate_goal_conditions(self.conditions)[0])

    def option_literals(self, index: int) -> list[list]:
        """One ground option's literals as parsed lists (``["not", ["open", "door.n.01_1"]]``)."""
        return [head.body for head in self.options[index]]

    def holds(self, hh: Household, literal: list) -> bool:
        """Evaluate one ground literal on ``hh``."""
        if literal[0] == "not":
            return not self.holds(hh, literal[1])
        pred, *args = literal
        return bool(TESTS.get(pred, _false)(hh, *[a.lstrip("?") for a in args]))


_CHECKERS: "weakref.WeakKeyDictionary[Problem, GoalChecker]" = weakref.WeakKeyDictionary()


def checker(problem: Problem) -> GoalChecker:
    if problem not in _CHECKERS:
        _CHECKERS[problem] = GoalChecker(problem)
    return _CHECKERS[problem]


def goal(hh: Household, problem: Problem) -> GoalStatus:
    """Whether ``problem``'s goal holds in ``hh``, and how much of it (bddl's reward)."""
    return checker(problem).status(hh)
