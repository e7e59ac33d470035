"""A program solver for household tasks, as VAB built its training trajectories (VAB §4, B.3).

The goal is split into bddl's ground options; the option needing the fewest actions is kept, and
its literals become subgoals of two kinds: a thing's state (cooked, frozen, open, ...) and a
relation between two things (inside, on top, under, next to). For each unmet subgoal in turn the
solver finds the thing (``move_to_room``, turns and camera moves until it shows), opens what shuts
it in, walks up (``move``), and either applies the state action or grasps it, opens the destination
if needed and puts it there. It reads the household directly (it is an oracle) but only ever acts
through the same ACTION text an agent writes, one step at a time, so it can drive the env node.
"""

from __future__ import annotations

import math
from dataclasses import replace

from . import activities, world
from .actions import REACH, apply
from .activities import Problem
from .backend import checker
from .model import CAMERA_HEIGHTS, HEADINGS, Household, Thing
from .placement import FILL, carried_with, is_floor, planar_distance, resting_on, shut_in, volume
from .visibility import visible

RELATIONS = {"ontop": "put_on_top", "inside": "put_inside", "under": "put_under", "nextto": "put_next_to",
             "attached": "put_on_top"}
STATES = {("cooked", True): "cook", ("burnt", True): "burn", ("frozen", True): "freeze", ("hot", True): "heat",
          ("toggled_on", True): "toggle_on", ("toggled_on", False): "toggle_off", ("open", True): "open",
          ("open", False): "close", ("frozen", False): "heat", ("hot", False): "freeze"}
INFEASIBLE = 1000


def clone(hh: Household) -> Household:
    """A copy to try actions on (faster than deepcopy: only the mutable parts are copied)."""
    things = {n: replace(t, states=set(t.states), nextto=set(t.nextto)) for n, t in hh.things.items()}
    return replace(hh, things=things, agent=replace(hh.agent), seen=set(hh.seen), in_view=set(hh.in_view))


class Solver:
    def __init__(self, hh: Household, problem: Problem, *, recovery: bool = False) -> None:
        self.hh = hh
        self.problem = problem
        self.recovery = recovery
        """VAB's error recovery (§4): try each placement into a closed container once before opening
        it, so the trajectory holds the refusal and the fix, both played for real."""
        self.tried_closed: set[tuple[str, str]] = set()
        self.check = checker(problem)
        self.skipped: set[str] = set()
        self.intent: list | None = None  # the subgoal the held thing was picked up for
        self.retries = 0  # times the skipped subgoals were tried again once the rest were met
        self.literals = self._order(self._pick_option())

    # ----- planning --------------------------------------------------------------------------
    def _pick_option(self) -> list[list]:
        best, best_cost = [], math.inf
        for i in range(len(self.check.options)):
            literals = self.check.option_literals(i)
            cost = sum(self._cost(lit) for lit in literals if not self.check.holds(self.hh, lit))
            cost += INFEASIBLE * self._overfull(literals)
            if cost < best_cost:
                best, best_cost = literals, cost
        return best

    def _overfull(self, literals: list[list]) -> int:
        """How many containers the option would fill past their room (by volume)."""
        load: dict[str, float] = {}
        for lit in literals:
            if lit[0] == "inside":
                x, y = (self.hh.things.get(a.lstrip("?")) for a in lit[1:])
                if x is not None and y is not None:
                    load[y.name] = load.get(y.name, 0.0) + volume(x)
        for name in list(load):
            for t in resting_on(self.hh, name, ("inside",)):
                if not any(lit[0] == "inside" and lit[1].lstrip("?") == t.name for lit in literals):
                    load[name] += volume(t)
        return sum(1 for name, v in load.items() if v > FILL * volume(self.hh.things[name]))

    def _cost(self, lit: list) -> int:
        if activities.sexpr(lit) in self.skipped:
            return INFEASIBLE
        positive = lit[0] != "not"
        pred, *args = lit if positive else lit[1]
        args = [a.lstrip("?") for a in args]
        things = [self.hh.things.get(a) for a in args]
        if any(t is None for t in things):
            return INFEASIBLE
        if len(args) == 2:
            x, y = things
            if not x.movable or x.heavy or x.name == y.name:
                return INFEASIBLE
            if positive and pred == "inside" and not y.container:
                return INFEASIBLE
            if positive and pred not in RELATIONS:
                return INFEASIBLE
            return 4 + (2 if x.room != y.room else 0) + (1 if y.openable and not y.is_open else 0)
        if (pred, positive) not in STATES:
            return INFEASIBLE
        state = pred if pred != "open" else "open"
        if state not in things[0].capabilities:
            return INFEASIBLE
        return 2 + (1 if shut_in(self.hh, things[0]) else 0)

    def _order(self, literals: list[list]) -> list[list]:
        """Relations first (a thing before what is put on or beside it), then states, then negations."""
        def parts(lit):
            positive = lit[0] != "not"
            pred, *args = lit if positive else lit[1]
            return positive, pred, [a.lstrip("?") for a in args]

        relations = [lit for lit in literals if parts(lit)[0] and len(parts(lit)[2]) == 2]
        # A thing's floor literal last: laying it under or beside furniture also puts it on the floor.
        relations.sort(key=lambda lit: is_floor(self.hh.things[parts(lit)[2][1]]))
        ordered: list[list] = []
        placed: set[int] = set()
        while len(placed) < len(relations):
            for i, lit in enumerate(relations):
                if i in placed:
                    continue
                target = parts(lit)[2][1]
                waits = any(j not in placed and j != i and parts(other)[2][0] == target
                            for j, other in enumerate(relations))
                if not waits or all(j in placed or j == i for j in range(len(relations))):
                    placed.add(i)
                    ordered.append(lit)
                    break
            else:
                i = next(j for j in range(len(relations)) if j not in placed)
                placed.add(i)
                ordered.append(relations[i])
        states = [lit for lit in literals if parts(lit)[0] and len(parts(lit)[2]) == 1]
        negated = [lit for lit in literals if not parts(lit)[0]]
        return ordered + states + negated

    # ----- acting ----------------------------------------------------------------------------
    def next_action(self) -> str:
        hh = self.hh
        if self.check.success(hh):
            return "done()"
        holding = hh.agent.holding
        pending = self._pending()
        if not pending and self.skipped and self.retries < 2:  # what was blocked may be free now
            self.retries += 1
            self.skipped.clear()
            self.literals = self._order(self._pick_option())
            pending = self._pending()
        if holding is not None:
            mine = next((lit for lit in pending if lit[0] != "not" and len(lit) == 3
                         and lit[1].lstrip("?") == holding), None)
            if self.intent is not None and self.intent in pending and _subject(self.intent) == holding:
                mine = self.intent
            if mine is None:
                return self._stow(holding, None)
            return self._relation(mine)
        for lit in pending:
            action = self._relation(lit) if len(lit if lit[0] != "not" else lit[1]) == 3 else self._state(lit)
            if action:
                return action
        return "done()"

    def _pending(self) -> list[list]:
        return [lit for lit in self.literals if activities.sexpr(lit) not in self.skipped
                and not self.check.holds(self.hh, lit) and self._cost(lit) < INFEASIBLE]

    def _state(self, lit: list) -> str:
        positive = lit[0] != "not"
        pred, arg = lit if positive else lit[1]
        t = self.hh.things[arg.lstrip("?")]
        return self._go_near(t) or f"{STATES[(pred, positive)]}({t.id})"

    def _relation(self, lit: list) -> str:
        hh = self.hh
        positive = lit[0] != "not"
        pred, a, b = lit if positive else lit[1]
        x, y = hh.things[a.lstrip("?")], hh.things[b.lstrip("?")]
        if hh.agent.holding != x.name:
            self.intent = lit
            return self._go_near(x) or f"grasp({x.id})"
        if not positive:
            return self._stow(x.name, lit)
        if y.name in [u.name for u in carried_with(hh, x.name)]:
            return self._stow(x.name, None)
        step = self._go_near(y)
        if step:
            return step
        if pred == "inside" and y.openable and not y.is_open:
            if self.recovery and (x.name, y.name) not in self.tried_closed:
                self.tried_closed.add((x.name, y.name))
                return f"put_inside({x.id}, {y.id})"  # refused by the world: it is closed
            return f"open({y.id})"
        action = f"{RELATIONS[pred]}({x.id}, {y.id})"
        if not apply(clone(hh), action).ok:  # full or no room: choose the goal option again
            self.skipped.add(activities.sexpr(lit))
            self.literals = self._order(self._pick_option())
            return self._stow(x.name, None)
        return action

    def _stow(self, name: str, lit: list | None) -> str:
        """Put the held thing down somewhere that breaks no met subgoal (and meets ``lit`` if given)."""
        hh = self.hh
        held = hh.things[name]
        met = [m for m in self.literals if self.check.holds(hh, m)]
        candidates = sorted((t for t in hh.labelled() if t.room == hh.agent.room and t.name != name
                             and t not in carried_with(hh, name)),
                            key=lambda t: (planar_distance(hh.agent.x, hh.agent.y, t.box), t.id))
        for t in candidates:
            for verb in (("put_on_top",) if is_floor(t) else ("put_next_to", "put_inside", "put_on_top")):
                action = f"{verb}({held.id}, {t.id})"
                trial = clone(hh)
                if apply(trial, action).ok and all(self.check.holds(trial, m) for m in met) \
                        and (lit is None or self.check.holds(trial, lit)):
                    return action
        for t in candidates:  # nothing fits within reach: walk to the next thing in the room
            if planar_distance(hh.agent.x, hh.agent.y, t.box) > REACH and t.name in hh.seen and not is_floor(t):
                return f"move({t.id})"
        others = [r for r in hh.rooms if r != hh.agent.room]
        return f"move_to_room({others[0]})" if others else "done()"

    def _go_near(self, t: Thing) -> str:
        """The next step towards having ``t`` within reach (and not shut away); '' when it is."""
        hh, a = self.hh, self.hh.agent
        if a.holding == t.name:
            return ""
        box = shut_in(hh, t)
        if box is not None:
            return self._go_near(box) or f"open({box.id})"
        if t.room != a.room:
            return f"move_to_room({t.room})"
        if is_floor(t) or planar_distance(a.x, a.y, t.box) <= REACH:
            return ""
        if t.name in hh.seen or t.name in hh.in_view:
            return f"move({t.id})"
        look = self._look_for(t)
        if look:
            return look
        root = t
        while root.relation is not None and root.relation[0] in ("ontop", "inside"):
            root = hh.things[root.relation[1]]
            if root.id is not None and root.name in hh.seen and not is_floor(root):
                return f"move({root.id})"
        return f"move_to_room({a.room})"

    def _look_for(self, t: Thing) -> str:
        """The first turn or camera move of the shortest sequence that brings ``t`` into view."""
        a = self.hh.agent
        heading, camera = a.heading, a.camera
        best = None
        try:
            for h in range(HEADINGS):
                for c in range(len(CAMERA_HEIGHTS)):
                    a.heading, a.camera = h, c
                    if t.name in visible(self.hh):
                        dh = (h - heading) % HEADINGS
                        turns = min(dh, HEADINGS - dh)
                        cost = turns + abs(c - camera)
                        if best is None or cost < best[0]:
                            best = (cost, dh, c)
        finally:
            a.heading, a.camera = heading, camera
        if best is None or best[0] == 0:
            return ""
        _, dh, c = best
        if dh:
            return "turn_left()" if dh <= HEADINGS // 2 else "turn_right()"
        return "raise_camera()" if c > camera else "lower_camera()"


def _subject(lit: list) -> str:
    atom = lit if lit[0] != "not" else lit[1]
    return atom[1].lstrip("?")


def solve(activity: str, scene: str, seed: int = 0, max_steps: int = 100,
          recovery: bool = False) -> tuple[bool, int, list[str]]:
    """Run the solver on one instance; (success, actions taken, the actions)."""
    problem = activities.load(activity)
    hh = world.build(problem, scene, seed)
    solver = Solver(hh, problem, recovery=recovery)
    check = checker(problem)
    taken: list[str] = []
    success = check.success(hh)
    while not success and len(taken) < max_steps:
        action = solver.next_action()
        taken.append(action)
        result = apply(hh, action)
        success = check.success(hh)
        if result.done:
            break
    return success, len(taken), taken
