"""The Minecraft environment node: VAB-Minecraft's protocol on a flying-squid world.

Parameters: ``launch describe minecraft.env``. With ``task: vab`` episode i plays VAB's test task
``i % 116`` in the file's order, in the world of seed ``seed + i // 116``, so a re-run, or another
model, meets the same worlds. A task can be named instead (``--set env.task=cake``) or a list of them.

The world and the agent's body run in a Node.js sidecar (``sidecar``: a flying-squid server and a
mineflayer bot) that this node starts in ``setup``, keeps across episodes (a reset builds a fresh
region of the world; no server restart) and stops with itself; a SIGKILLed node takes it along. The
first-person view is prismarine-viewer's, drawn in headless Chromium (``view``) when ``frames`` is on.

``obs`` follows docs/environments.md with ``env: "minecraft"``: ``text`` is VAB's turn (the task on the
first; then the action feedback, the inventory, the item in hand, position and orientation, VAB's
teleport tip when it is due, and "Vision Input:", after which the picture follows), ``frame`` the
640x360 view, ``actions`` some calls that parse (for the random baseline; any reply is accepted),
plus ``task``, ``target``, ``inventory``, ``equipped``. The action is the model's reply: the call after
``ACTION:`` is carried out (``parsing``), and VAB's end rules (``guards``) decide when an episode
stops. Every step's ``info`` carries what ``minecraft.judge`` reads (its docstring lists it).
"""

from __future__ import annotations

import asyncio
import difflib
import re
from typing import Any

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.minecraft import parsing, planner, recipes
from nodes.game.minecraft.guards import ROUNDS, Ending, Guard
from nodes.game.minecraft.lookup import look_up
from nodes.game.minecraft.parsing import Action, ParseError
from nodes.game.minecraft.rewards import StepReward, adjusted_step_rewards, held, holds, vab_weights
from nodes.game.minecraft.sidecar import DEFAULT_TIMEOUT_S, Sidecar, SidecarError, SidecarGone
from nodes.game.minecraft.tasks import Task, load_tasks

VAB = "vab"
MAX_ECHO = 200  # characters of the model's action that come back in the feedback (the sidecar's words: 4x)
EXECUTE_TICKS = 1200  # one execute call's step budget: a minute of game time (20 ticks a second)
UNDERGROUND_M = 2.0  # below the spawn by more than this after a failed execute call: the oracle goes back to the spawn

# What the random baseline draws from besides the state's own calls: VAB's simple subgoal phrases.
PROMPTS = ("chop a tree", "collect wood", "mine stone", "dig down", "mine coal_ore", "mine iron_ore",
           "kill a cow", "kill a sheep", "collect sugar_cane", "find water")
BASICS = ("oak_planks", "stick", "crafting_table", "wooden_pickaxe", "stone_pickaxe", "furnace", "torch")


class MinecraftParams(EnvParams):
    task: str | list[str] = Field(VAB, description="'vab': VAB's 116 test tasks in order; else a task name "
                                                   "(its target item, e.g. cake) or a list of them")
    seed: int = Field(0, description="the worlds' seed: another set of worlds for the same tasks")
    rounds: int = Field(ROUNDS, gt=0, description="actions per episode at most (VAB: 100)")
    execute_ticks: int = Field(EXECUTE_TICKS, gt=0, description="game ticks one execute() call may use")
    view_distance: int = Field(4, ge=2, le=10, description="chunks the world sends around the body")


def chosen_tasks(params: MinecraftParams) -> list[Task]:
    """The tasks the episodes cycle through; ValueError naming the unknown ones, with close matches."""
    every = load_tasks()
    if params.task == VAB:
        return list(every)
    names = [params.task] if isinstance(params.task, str) else list(params.task)
    by_name = {t.name: t for t in every}
    unknown = [n for n in names if recipes.bare(n) not in by_name]
    if unknown:
        hints = [f"{n!r}" + (f" (did you mean {', '.join(c)}?)" if (c := difflib.get_close_matches(
            recipes.bare(n), list(by_name), n=3)) else "") for n in unknown]
        raise ValueError(f"task: {', '.join(hints)} is not one of VAB's {len(by_name)} Minecraft tasks")
    return [by_name[recipes.bare(n)] for n in names]


def members(name: str) -> tuple[str, ...] | None:
    """Tag membership as ``rewards`` asks for it: a tag's items, or None for a plain item."""
    return recipes.tag_members(name) if recipes.is_tag(name) else None


class MinecraftEnv(EnvNode):
    """VAB-Minecraft's tasks on a flying-squid world with a scripted executor (docs/vab.md)."""

    Params = MinecraftParams
    params: MinecraftParams
    env = "minecraft"

    @classmethod
    def preflight(cls, params: MinecraftParams) -> list[str]:
        """Unknown tasks and a missing Node.js side are named before a run starts."""
        try:
            chosen_tasks(params)
        except ValueError as exc:
            return [f"minecraft.env: {exc}"]
        problem = Sidecar.missing()
        return [f"minecraft.env: {problem}"] if problem else []

    async def setup(self) -> None:
        self.tasks = chosen_tasks(self.params)
        self.task: Task | None = None
        self.world: dict[str, Any] = {}  # the sidecar's latest observation
        self.guard = Guard()
        self.score = StepReward({}, members)
        self.feedback: str | None = None  # None before the first action
        self.last_execute_failed = False  # the round before was an execute call that failed
        self.spawn_y = 0.0
        self.episode_id = ""
        self.frame: Any = None
        self.view: Any = None
        # started on this (the node's main) thread: the sidecar dies with the thread that started it
        self.sidecar = Sidecar(view_distance=self.params.view_distance)
        self.sidecar.spawn()
        await asyncio.to_thread(self.sidecar.wait_ready)
        if self.params.frames:
            from nodes.game.minecraft.view import View

            url = (await self._ask("view", {}))["url"]
            self.view = View(url)
            await self.view.start()

    async def teardown(self) -> None:
        if self.view is not None:
            await self.view.close()
        await asyncio.to_thread(self.sidecar.close)

    async def _ask(self, op: str, args: dict[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
        """One sidecar request, off the event loop (an execute call walks and digs for seconds)."""
        return await asyncio.to_thread(self.sidecar.request, op, args, timeout_s=timeout_s)

    async def reset(self, episode: Episode) -> None:
        n = len(self.tasks)
        self.task = task = self.tasks[episode.index % n]
        self.world = await self._ask("reset", {"task": task.name, "seed": self.params.seed + episode.index // n})
        weights = adjusted_step_rewards(vab_weights(task.name), task.inventory())
        self.score = StepReward(weights, members)
        self.score.observe(self.world["inventory"])
        self.guard = Guard(spawn_resources=bool(task.init_command), rounds=self.params.rounds)
        self.feedback, self.episode_id = None, episode.id
        self.spawn_y = float(self.world["position"]["y"])  # the body stands at the spawn after a reset
        self.last_execute_failed = False
        await self._draw()

    async def _draw(self) -> None:
        if self.view is not None:
            self.frame = await self.view.frame()

    # -- the loop's hooks ---------------------------------------------------------------------------------
    def observe(self) -> Observation:
        task, w = self._task(), self.world
        text = ""
        if self.feedback is None:
            text += f"Your task is to get {task.count} {task.target} in your inventory.\n"
        inventory = w["inventory"]
        items = ", ".join(f"{count} {name}" for name, count in inventory.items())
        pos = w["position"]
        location = (f"Now you locate in X: {pos['x']:.2f}, Y: {pos['y']:.2f}, Z: {pos['z']:.2f}, "
                    f"Pitch: {w['pitch']:.2f}, Yaw: {w['yaw']:.2f}.")
        if (tip := self.guard.tip()) is not None:
            location += "\n" + tip
        text += (f"Feedback on the Action: {self.feedback or 'No action before.'}\n"
                 f"Your Inventory: {f'Now your inventory has {items}.' if items else 'Now your inventory has nothing.'}\n"
                 f"Equipped Item: Now you hold the {w['equipped']} in your hand.\n"
                 f"Location and Orientation: {location}\nVision Input:")
        if self.view is None:
            text += " (no picture in this run)"
        obs: Observation = {"actions": candidates(task, inventory), "idle": None, "goal": self._goal(), "text": text}
        obs.update({"template": "vab_minecraft", "text_history": True,  # type: ignore[typeddict-item]
                    "task": task.name, "target": self._target(), "inventory": dict(inventory),
                    "equipped": w["equipped"], "max_steps": self.params.rounds})
        return obs

    def render(self) -> Any:
        return self.frame

    def check_action(self, body: Any, obs: Observation) -> bool:
        """Any text is a reply whose ACTION line the rules read (their failure feedback included)."""
        return isinstance(body, str)

    async def step(self, action: str | None) -> StepResult:
        task = self._task()
        written = parsing.action_text(action or "") or bare_call(action or "") or parsing.NO_ACTION
        written = written if len(written) <= MAX_ECHO else written[:MAX_ECHO] + "..."  # a reply is untrusted text
        if (ending := self.guard.before(written)) is not None:  # VAB ends the task before carrying it out
            self.feedback = f"Your last action \"{written}\" was not carried out. {ending.message}"
            return self._end(ending, ok=False, reward=0.0)
        act, ok, message, shown = await self._carry_out(written)
        self.world = await self._ask("observe", {})
        before = self.score.value
        reward = self.score.observe(self.world["inventory"])
        verdict = "has been executed" if ok else "can not be executed"
        self.feedback = f"Your last action \"{shown}\" {verdict}." + (f" {message}" if message else "")
        self.last_execute_failed = isinstance(act, parsing.Execute) and not ok
        target_held = holds(self.world["inventory"], task.target, task.count, members)
        ending = self.guard.record(written, not ok, reward, target_held=target_held)
        await self._draw()
        if ending is None:
            return StepResult(reward - before, False, self._info(ok))
        return self._end(ending, ok=ok, reward=reward - before)

    async def _carry_out(self, written: str) -> tuple[Action | None, bool, str, str]:
        """(the action parsed, None if it does not parse; succeeded; the message; the action as echoed in
        the feedback)."""
        try:
            act = parsing.parse_action(written)
        except ParseError as exc:
            return None, False, str(exc), written
        shown = parsing.echo(act)
        if isinstance(act, parsing.LookUp):
            return act, True, look_up(act.item), shown
        if isinstance(act, parsing.Execute) and act.goal_item is None and goal_of(act.prompt) is None:
            return act, False, (f"The executor cannot tell what \"{act.prompt[:80]}\" should gather: name the item "
                           f"with execute(prompt, goal_item, num), e.g. execute(\"mine stone\", \"cobblestone\", 3)."), shown
        try:
            result = await self._ask(*self._request(act))
        except SidecarGone:
            raise  # the world is lost: the node fails, and its restart policy plays the episode again
        except SidecarError as exc:
            return act, False, f"The world could not carry it out: {exc}", shown
        message = str(result.get("message") or "")
        return act, bool(result.get("success")), message[:MAX_ECHO * 4], shown

    def _request(self, act: Action) -> tuple[str, dict[str, Any], float]:
        if isinstance(act, parsing.Execute):
            args: dict[str, Any] = {"prompt": act.prompt, "max_ticks": self.params.execute_ticks}
            goal = recipes.bare(act.goal_item) if act.goal_item is not None else goal_of(act.prompt)
            if goal is not None:
                have = held(self.world["inventory"], goal, members)
                args.update(goal_item=goal, num=max(1, parsing.execute_goal_count(have, act.num or 1) - have))
            # the call's own budget in game ticks (20 a second), and slack for a loaded machine
            return "execute", args, max(DEFAULT_TIMEOUT_S, self.params.execute_ticks / 20 + 60)
        if isinstance(act, (parsing.Craft, parsing.Smelt)):
            return act.name, {"item": concrete(act.item, act.count, self.world["inventory"]), "num": act.count}, DEFAULT_TIMEOUT_S
        if isinstance(act, parsing.Equip):
            return "equip", {"item": recipes.bare(act.item)}, DEFAULT_TIMEOUT_S
        return "teleport_to_spawn", {}, DEFAULT_TIMEOUT_S

    async def stop(self, reason: str) -> StepResult:
        self.feedback = f"The agent stopped: {reason}"
        return self._end(Ending("task failed", "gave up", f"The agent stopped: {reason}"), ok=False, reward=0.0)

    def _end(self, ending: Ending, *, ok: bool, reward: float) -> StepResult:
        self.guard.ended = ending
        info = self._info(ok) | {"status": ending.status, "end_reason": ending.reason, "end_message": ending.message}
        truncated = ending.reason == "round limit"
        return StepResult(reward, True, info, truncated=truncated)

    def _info(self, ok: bool) -> dict[str, Any]:
        task, w = self._task(), self.world
        success = holds(w["inventory"], task.target, task.count, members)
        return {"task": task.name, "group": task.group, "seed": w.get("seed"), "target": self._target(),
                "inventory": dict(w["inventory"]), "equipped": w["equipped"], "reward": round(self.score.value, 6),
                "success": success, "feedback": self.feedback, "action_ok": ok,
                "status": "completed" if success else "running"}

    def metrics(self, last: Any) -> dict[str, Any]:
        info = last["info"]
        return {"success": float(bool(info.get("success"))), "step_reward": info.get("reward", 0.0),
                "end_status": info.get("status"), "task": info.get("task"), "group": info.get("group")}

    def _target(self) -> dict[str, Any]:
        task = self._task()
        return {"item": task.target, "count": task.count, "members": list(m) if (m := members(task.target)) else None}

    def _goal(self) -> str:
        task = self._task()
        return f"get {task.count} {task.target}"

    def _task(self) -> Task:
        assert self.task is not None, "no episode in play"
        return self.task

    # -- services ---------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str | None:
        """The scripted solver's next action for the episode being played: the recipe-tree plan from
        the inventory as it is now, so a drop that came out short is gathered again."""
        episode = (body or {}).get("episode") if isinstance(body, dict) else None
        if self.task is None or (episode is not None and episode != self.episode_id):
            return None
        return solver_reply(self.task, self.world, spawn_y=self.spawn_y, last_execute_failed=self.last_execute_failed)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": list(parsing.ACTION_NAMES), "idle": None, "episodes": len(self.tasks),
                "tasks": [t.name for t in self.tasks], "rounds": self.params.rounds, "frames": self.params.frames}


# what a goal-less subgoal's object most often means: VAB's prompt examples say "chop a tree", "mine stone"
OBJECT_ALIASES = {"tree": "oak_log", "wood": "oak_log", "log": "oak_log", "stone": "cobblestone",
                  "rock": "cobblestone", "ore": "coal", "water": "water_bucket", "milk": "milk_bucket"}
FILLER = {"a", "an", "the", "some", "of", "more", "block", "blocks", "from", "for", "with"}


def goal_of(prompt: str) -> str | None:
    """The item a subgoal without ``goal_item`` gathers, read from its object: a block gives what mining
    it drops (``mine iron_ore``: iron_ore; ``mine stone``: cobblestone), a mob its first loot (``kill a
    cow``: beef), an item itself; None when the object names nothing of Minecraft. VAB's executor (a
    policy) needs no item to stop on; the scripted one stops once it holds one more of this."""
    from nodes.game.minecraft import mcdata

    data = mcdata.load()
    words = [w for w in re.findall(r"[a-z_]+", prompt.lower())[1:] if w not in FILLER]
    for word in reversed(words):  # the object is the last noun: "chop a tree", "mine iron_ore"
        for name in (word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word):
            if name in OBJECT_ALIASES:
                return OBJECT_ALIASES[name]
            block = data.blocks.get(name)
            if block is not None:
                drops = [d.item for d in block.drops if d.silk_touch is not True]
                return drops[0] if drops else (name if name in data.items else None)
            loot = data.entity_drops.get(name)
            if loot:
                return loot[0].item
            if name in data.items:
                return name
    return None


def bare_call(text: str) -> str | None:
    """A reply that is nothing but one call (what a scripted or random agent sends, and what the obs's
    ``actions`` list): taken as its ACTION; a model's reply without ``ACTION:`` is not."""
    text = text.strip()
    return text if "\n" not in text and text.split("(", 1)[0].strip() in parsing.ACTION_NAMES else None


def concrete(item: str, n: int, inventory: dict[str, int]) -> str:
    """The item a craft or smelt of ``item`` makes: itself, or for a tag (``planks``) the member the
    inventory can make now (oak_planks from oak logs), as Minecraft's recipe book would pick."""
    item = recipes.bare(item)
    if not recipes.is_tag(item):
        return item
    recipe = recipes.choose_variant(item, n, inventory)
    return recipes.bare(recipe.result) if recipe is not None else recipes.tag_members(item)[0]


def solver_reply(task: Task, world: dict[str, Any], *, spawn_y: float, last_execute_failed: bool) -> str:
    """The scripted solver's reply for this round: the first action of the recipe-tree plan from the
    inventory as it is now (a drop that came out short is gathered again)."""
    try:
        steps = planner.plan(task.target, task.count, world["inventory"], nearby=task.init_command,
                             equipped=None if world["equipped"] in ("none", "air") else world["equipped"])
    except planner.PlanError as exc:
        return f"THOUGHT: no plan ({exc}).\nACTION: teleport_to_spawn()"
    if steps and last_execute_failed and world["position"]["y"] < spawn_y - UNDERGROUND_M:
        # What VAB's tip tells a stuck agent: an executor call that left the body down a shaft it cannot
        # climb (it digs where it stands, and does not build) fails the next one; from the spawn it works.
        return "THOUGHT: stuck below ground.\nACTION: teleport_to_spawn()"
    return f"ACTION: {steps[0]}" if steps else "ACTION: teleport_to_spawn()"


def candidates(task: Task, inventory: dict[str, int]) -> list[str]:
    """Calls that parse and could do something here; the random baseline draws from these."""
    out = [f'execute("{p}")' for p in PROMPTS]
    out += [f'craft("{item}", 1)' for item in BASICS]
    out += [f'equip("{item}")' for item in inventory]
    out += ["teleport_to_spawn()", f'look_up("{task.target}")']
    return out
