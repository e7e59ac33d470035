"""The household environment node: VAB-OmniGibson's protocol on the symbolic household.

Parameters: ``launch describe household.env``. With ``activity: vab`` episode i plays VAB's test
instance ``i % 181`` (activity, scene) in VAB's order, laid out with seed ``layout_seed + i // 181``,
so a re-run, or another model, meets the same households. Any BDDL activity can be named instead
(``--set env.activity=bag_groceries``, a list of names, or a ``.bddl`` path), in ``scene``.

``obs`` follows docs/environments.md with ``env: "household"``: ``text`` is VAB's turn (the task and
the reachable rooms on the first, then the action feedback, the object at hand, the current room and
"Vision Input:", after which the picture follows), ``frame`` the 1280x720 picture with VAB's boxes,
``actions`` the calls that make sense now (for the random baseline; any text is accepted), plus
``activity``, ``scene``, ``room``, ``holding``, ``in_view`` and ``text_history: true`` (an agent
keeps earlier turns' words once their pictures are dropped, as VAB does). The action is the model's
reply: the first call after ``ACTION:`` is carried out. VAB's end rules (``guards``) decide when an
episode stops; its status word is in every step's ``info`` and the episode's metrics.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.household import activities, actions, scenes, world
from nodes.game.household.activities import ActivityError, Problem
from nodes.game.household.backend import checker
from nodes.game.household.goaltext import goal_text
from nodes.game.household.guards import ROUNDS, Guard, Status
from nodes.game.household.model import Household
from nodes.game.household.parsing import ParseError, parse
from nodes.game.household.solver import Solver
from nodes.game.household.visibility import observe

DEFAULT_SCENE = "Rs_int"  # BEHAVIOR's smallest house, for activities VAB does not list
VAB = "vab"


class HouseholdParams(EnvParams):
    activity: str | list[str] = Field(VAB, description="'vab': VAB's 181 test instances; else a BDDL activity "
                                                       "name, a .bddl path, or a list of them")
    scene: str | None = Field(None, description="the scene for named activities (default: the first VAB lists "
                                                "for the activity, else Rs_int)")
    layout_seed: int = Field(0, description="another set of households for the same instances")
    rounds: int = Field(ROUNDS, gt=0, description="actions per episode at most (VAB: 100)")
    oracle_recovery: bool = Field(False, description="the oracle plays VAB's error recovery for training data: a "
                                  "placement into a closed container is tried first (the world refuses it), then the "
                                  "container is opened and the thing put in")


def instances(params: HouseholdParams) -> list[tuple[str, str]]:
    """The (activity, scene) pairs the episodes cycle through."""
    vab = activities.vab_instances()
    if params.activity == VAB:
        return vab
    names = [params.activity] if isinstance(params.activity, str) else list(params.activity)
    first_scene = {a: s for a, s in reversed(vab)}
    return [(name, params.scene or first_scene.get(name, DEFAULT_SCENE)) for name in names]


class HouseholdEnv(EnvNode):
    """VAB-OmniGibson's household tasks, offline (docs/vab.md)."""

    Params = HouseholdParams
    params: HouseholdParams
    env = "household"

    @classmethod
    def preflight(cls, params: HouseholdParams) -> list[str]:
        """Every activity must load before a run starts: a typo or a bad .bddl file is named here."""
        found: list[str] = []
        try:
            pairs = instances(params)
        except (OSError, ValueError, SyntaxError) as exc:
            return [f"household.env: VAB's instance list cannot be read: {exc}"]
        if params.scene is not None and params.scene not in scenes.scene_names():
            close = difflib.get_close_matches(params.scene, scenes.scene_names(), n=3)
            found.append(f"household.env: scene: {params.scene!r} is not one of BEHAVIOR's {len(scenes.scene_names())} "
                         f"scenes" + (f"; did you mean {', '.join(close)}?" if close else ""))
        for name in sorted({a for a, _ in pairs}):
            try:
                activities.load(name)
            except ActivityError as exc:
                found.append(f"household.env: activity: {exc}")
            except ImportError as exc:
                return [f"household.env needs the bddl package ({exc}); run setup.sh or pip install -e '.[worlds]'"]
        return found

    async def setup(self) -> None:
        self.instances = instances(self.params)
        self.hh: Household | None = None
        self.problem: Problem | None = None
        self.guard = Guard()
        self.solver: Solver | None = None
        self.episode_id = ""
        self.fridge: str | None = None  # the fridge whose inside the latest picture shows
        self.feedback: str | None = None  # None before the first action
        self.last_action = ""
        self.goal = ""
        self.initial = self.fraction = 0.0
        self.status: Status = "running"
        self._render = None
        if self.params.frames:
            from nodes.game.household.render import render

            self._render = render

    async def reset(self, episode: Episode) -> None:
        n = len(self.instances)
        activity, scene = self.instances[episode.index % n]
        self.problem = activities.load(activity)
        self.hh = hh = world.build(self.problem, scene, self.params.layout_seed + episode.index // n)
        observe(hh)
        self.goal = goal_text(self.problem, hh)
        self.initial = self.fraction = checker(self.problem).status(hh).fraction
        self.guard = Guard(initial=self.initial, rounds=self.params.rounds)
        self.solver = None
        self.episode_id = episode.id
        self.fridge, self.feedback, self.last_action, self.status = None, None, "", "running"

    # -- the loop's hooks ---------------------------------------------------------------------------------
    def observe(self) -> Observation:
        hh = self._hh()
        rooms = list(hh.rooms)
        holding = hh.things[hh.agent.holding].label if hh.agent.holding else None
        text = ""
        if self.feedback is None:
            text += f"Your task: {self.goal}\nThe rooms you can reach: {', '.join(rooms)}.\n"
            feedback = "No action yet."
        else:
            feedback = f"The last action was `{self.last_action}`: {self.feedback}"
        text += (f"Action Feedback: {feedback}\nAt Hand Object: {holding or 'None'}.\n"
                 f"Current Room: {hh.agent.room}.\nVision Input:")
        shown = sorted((hh.things[n] for n in hh.in_view if hh.things[n].id is not None), key=lambda t: t.id or 0)
        if not self.params.frames:  # a text-only agent gets the picture's labels in words
            text += " (no picture; the labelled objects in view are: "
            text += (", ".join(t.label for t in shown) or "none") + ")"
        obs: Observation = {"actions": candidates(hh), "idle": None, "goal": self.goal, "text": text}
        obs.update({"template": "vab_household", "text_history": True,  # type: ignore[typeddict-item]
                    "activity": hh.activity, "scene": hh.scene, "room": hh.agent.room, "rooms": rooms,
                    "holding": holding, "in_view": [t.label for t in shown], "fridge_view": self.fridge is not None,
                    "max_steps": self.params.rounds})
        return obs

    def render(self) -> Any:
        hh = self._hh()
        return None if self._render is None else self._render(hh, hh.in_view, fridge=self.fridge)

    def check_action(self, body: Any, obs: Observation) -> bool:
        """Any text is a reply whose ACTION line the rules read (their failure feedback included)."""
        return isinstance(body, str)

    async def step(self, action: str | None) -> StepResult:
        hh, problem = self._hh(), self.problem
        assert problem is not None
        text = action or ""
        key = _written(text)
        self.last_action = key
        if (stopped := self.guard.before(key)) != "running":  # VAB stops a loop before carrying it out
            self.feedback = "Not carried out: the same action keeps being repeated, so the episode ends."
            return self._end(stopped, ok=False, applied=False)
        result = actions.apply(hh, text)
        viewed = actions.fridge(hh) if result.ok and result.fridge_view else None
        self.fridge = viewed.name if viewed is not None else None
        if not result.ok:
            observe(hh)  # the picture after a failure is the ordinary view again
        self.feedback = result.feedback
        self.last_action = result.action
        state = checker(problem).status(hh)
        reward, self.fraction = state.fraction - self.fraction, state.fraction
        status = self.guard.after(result.ok, state.fraction, state.success, result.done)
        if status == "running":
            return StepResult(reward, False, self._info(result.ok, True, state.success))
        return self._end(status, ok=result.ok, applied=True, reward=reward, success=state.success)

    async def stop(self, reason: str) -> StepResult:
        self.feedback = f"The agent stopped: {reason}"
        return self._end("task failed", ok=False, applied=False)

    def _end(self, status: Status, *, ok: bool, applied: bool, reward: float = 0.0,
             success: bool = False) -> StepResult:
        self.status = status
        truncated = status == "task limit reached" and len(self.guard.actions) >= self.params.rounds
        return StepResult(reward, True, self._info(ok, applied, success), truncated=truncated)

    def _info(self, ok: bool, applied: bool, success: bool) -> dict[str, Any]:
        hh = self._hh()
        return {"activity": hh.activity, "scene": hh.scene, "seed": hh.seed, "success": success,
                "goal_fraction": round(self.fraction, 6), "initial_fraction": round(self.initial, 6),
                "status": self.status, "feedback": self.feedback, "action_ok": ok, "applied": applied,
                "room": hh.agent.room}

    def metrics(self, last: Any) -> dict[str, Any]:
        info = last["info"]
        return {"success": float(bool(info.get("success"))), "goal_fraction": info.get("goal_fraction", 0.0),
                "end_status": info.get("status"), "activity": info.get("activity")}

    def _hh(self) -> Household:
        assert self.hh is not None, "no episode in play"
        return self.hh

    # -- services ---------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str | None:
        """The program solver's next action for the episode being played (VAB's teacher, §4)."""
        episode = (body or {}).get("episode") if isinstance(body, dict) else None
        if self.hh is None or self.problem is None or (episode is not None and episode != self.episode_id):
            return None
        if self.solver is None:
            self.solver = Solver(self.hh, self.problem, recovery=self.params.oracle_recovery)
        return f"ACTION: {self.solver.next_action()}"

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": list(actions.FUNCTIONS), "idle": None, "episodes": len(self.instances),
                "activities": sorted({a for a, _ in self.instances}), "rounds": self.params.rounds,
                "frames": self.params.frames}


def candidates(hh: Household) -> list[str]:
    """Calls that make sense in this state: each function on what the agent has seen in its room (and
    what it holds), each other room. The random baseline draws from these; an agent may write any."""
    here = [t for t in hh.labelled() if t.name in hh.seen and (t.room == hh.agent.room or t.name == hh.agent.holding)]
    out = [f"{f}()" for f in actions.NO_ARGS]
    out += [f"move_to_room({r})" for r in hh.rooms if r != hh.agent.room]
    for t in here:
        if t.name == hh.agent.holding:
            continue
        out += [f"{f}({t.label})" for f in actions.ONE_ARG if f != "move_to_room"]
        if hh.agent.holding:
            held = hh.things[hh.agent.holding].label
            out += [f"{f}({held}, {t.label})" for f in actions.TWO_ARGS]
    return out


def _written(text: str) -> str:
    """The action as VAB's loop guard compares it: the call read from the reply, else the reply."""
    try:
        return parse(text).text
    except ParseError:
        return " ".join(text.split())[:200] or "None ACTION."

