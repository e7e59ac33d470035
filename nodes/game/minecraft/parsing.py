"""Reading a model's reply into one of VAB-Minecraft's six actions, as VAB reads it.

VAB's published numbers depend on how leniently a reply is read, so the rules here follow its
code rather than a stricter grammar of our own: labels in any of the cases models write them
(``Action:``), the text after the first ``ACTION:`` up to a second turn the model started on its
own, code fences and backticks dropped, a ``#`` comment dropped, the first of the six calls taken.
Arguments of ``craft``/``smelt``/``equip``/``look_up`` may be quoted or bare and are lower-cased;
``num`` must be written in digits (``"4"`` counts: VAB strips the quotes first) and be at least 1;
``execute`` needs its prompt and goal item in quotes and takes one or three arguments, never two.

Where VAB only fails by accident, this reader says why instead, so the model gets a usable message:

* ``minecraft:planks`` is read as ``planks`` (VAB's scripts would look for a recipe file called
  ``minecraft:planks`` and fail with "recipe not found");
* keyword arguments are matched by name (VAB drops the names and keeps the order, so
  ``craft(num=4, item="planks")`` failed there); an unknown keyword is an error naming the allowed ones;
* the first call in the text is taken by position (VAB looked for ``execute(`` first, then
  ``look_up(``, ... and so could skip an earlier call), and ``execute`` with more than three
  arguments is refused (VAB ignored the extra ones).

``execute``'s prompt is checked by VAB's rules (:func:`check_prompt`): no crafting, smelting,
equipping or placing of a crafting table or furnace through the executor, no ``use ... to/on``,
no ``and``, fewer than eight words. VAB puts no cap on ``num``; only the executor's step budget and
its 64-per-slot goal (:func:`execute_goal_count`) limit what one turn can gather.

Messages of :class:`ParseError` are sentences for the model, in our own words; the environment
adds them to its feedback ("Your last action ... can not be executed. ...").
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import ClassVar, Literal, Union

__all__ = [
    "ACTION_NAMES", "NO_ACTION", "PROMPT_EXAMPLES", "Action", "Craft", "Equip", "Execute", "LookUp", "ParseError",
    "Smelt", "TeleportToSpawn", "action_text", "as_call", "check_prompt", "echo", "execute_goal_count", "parse_action",
    "parse_reply",
]

ActionName = Literal["craft", "smelt", "equip", "teleport_to_spawn", "look_up", "execute"]
ACTION_NAMES: tuple[ActionName, ...] = ("craft", "smelt", "equip", "teleport_to_spawn", "look_up", "execute")
NO_ACTION = "None ACTION."
"""The action text VAB keeps for a reply without ``ACTION:``: it counts as an action (a failed one)
in the end rules, so the environment feeds this text to the guard for such a reply."""

PREFIX = "minecraft:"
STACK = 64  # the executor's goal is capped at one stack, as VAB's is

PROMPT_EXAMPLES: tuple[str, ...] = (
    "chop a tree", "collect wood", "break leaves", "gather seeds", "pick a flower", "dig down", "dig a hole",
    "mine stone", "mine coal_ore", "mine iron_ore", "mine gold_ore", "mine diamond_ore", "break sand blocks",
    "kill a cow", "kill a sheep", "shear a sheep", "fight a zombie", "milk a cow", "find a river", "find a cave",
    "climb out of the cave",
)
"""Short verb-object prompts the executor understands: the system prompt shows them, and a
refused prompt is answered with the two nearest of them."""


class ParseError(ValueError):
    """The reply holds no action VAB would carry out; the message says what was wrong and what is allowed."""


@dataclass(frozen=True)
class Craft:
    """``craft(item, num=1)``: ``num`` is None when the reply did not write it (the echo leaves it out)."""

    item: str
    num: int | None = None
    name: ClassVar[str] = "craft"

    @property
    def count(self) -> int:
        return 1 if self.num is None else self.num


@dataclass(frozen=True)
class Smelt:
    """``smelt(item, num=1)``; ``num`` as in :class:`Craft`."""

    item: str
    num: int | None = None
    name: ClassVar[str] = "smelt"

    @property
    def count(self) -> int:
        return 1 if self.num is None else self.num


@dataclass(frozen=True)
class Equip:
    item: str
    name: ClassVar[str] = "equip"


@dataclass(frozen=True)
class TeleportToSpawn:
    name: ClassVar[str] = "teleport_to_spawn"


@dataclass(frozen=True)
class LookUp:
    """``look_up(item)``: an item or a tag (``planks``, ``stone_tool_materials``)."""

    item: str
    name: ClassVar[str] = "look_up"


@dataclass(frozen=True)
class Execute:
    """``execute(prompt)`` or ``execute(prompt, goal_item, num)``. With a goal the executor stops once
    ``num`` more of it are held (see :func:`execute_goal_count`); without one it stops when the
    task's target is held or its step budget is spent."""

    prompt: str
    goal_item: str | None = None
    num: int | None = None
    name: ClassVar[str] = "execute"


Action = Union[Craft, Smelt, Equip, TeleportToSpawn, LookUp, Execute]


def echo(action: Action) -> str:
    """The ``name/args`` form VAB's logged trajectories show an action in (spec note 12):
    ``craft/planks, 4``, ``craft/crafting_table``, ``execute/collect wood, logs, 3``. Only what the
    reply wrote appears: a default ``num`` is left out."""
    if isinstance(action, (Craft, Smelt)):
        args: list[str] = [action.item] + ([str(action.num)] if action.num is not None else [])
    elif isinstance(action, (Equip, LookUp)):
        args = [action.item]
    elif isinstance(action, Execute):
        args = [action.prompt] + ([action.goal_item, str(action.num)] if action.goal_item is not None else [])
    else:
        return action.name
    return f"{action.name}/{', '.join(args)}"


def as_call(action: Action) -> str:
    """The action as a reply's ACTION line writes it (``craft("planks", 4)``): what a scripted agent
    sends, and what :func:`parse_action` reads back to the same action."""
    if isinstance(action, (Craft, Smelt)):
        args = [_quote(action.item)] + ([str(action.num)] if action.num is not None else [])
    elif isinstance(action, (Equip, LookUp)):
        args = [_quote(action.item)]
    elif isinstance(action, Execute):
        args = [_quote(action.prompt)]
        if action.goal_item is not None:
            args += [_quote(action.goal_item), str(action.num)]
    else:
        args = []
    return f"{action.name}({', '.join(args)})"


def _quote(value: str) -> str:
    return f"'{value}'" if '"' in value else f'"{value}"'


def execute_goal_count(held: int, num: int) -> int:
    """How many of the goal item the executor must hold to stop with success: ``num`` more than
    already held, at most one stack (VAB's rule; so ``num`` 64 with 10 held asks for 64, not 74)."""
    return min(STACK, held + num)


# -- the reply ---------------------------------------------------------------------------------------------
_LABEL = re.compile(r"\b(action|observation|thought)[ \t]*:", re.IGNORECASE)
_CALL = re.compile(r"\b(" + "|".join(ACTION_NAMES) + r")[ \t]*\(", re.IGNORECASE)


def action_text(reply: str) -> str | None:
    """The call text of a reply, as VAB keeps it in its action history: the text after the first
    ``ACTION:`` (up to a second ``ACTION:``, the model's ``Feedback on the Action:`` or
    ``<|end_of_text|>``), on one line, without code fences, backticks or a ``#`` comment, starting
    at the first of the six calls when there is one. None when the reply has no ``ACTION:``."""
    text = (reply or "").split("Feedback on the Action:")[0].split("<|end_of_text|>")[0]
    text = _LABEL.sub(lambda m: m.group(1).upper() + ":", text)
    parts = text.split("ACTION:")
    if len(parts) < 2:
        return None
    call = parts[1].replace("\r", "").replace("\n", "")
    if "```" in call:
        call = call.split("```")[1]
    call = call.strip()
    if call.lower().startswith("python"):
        call = call[len("python"):]
    if call.count("`") == 2:
        call = call.split("`")[1]
    if (m := _CALL.search(call)) is not None:
        call = call[m.start():]
    return _outside_quotes_cut(call, "#").strip()


def parse_reply(reply: str) -> Action:
    """The action of a whole reply (or of the part the agent sent on). Raises ParseError."""
    text = action_text(reply)
    if text is None:
        raise ParseError('The reply has no "ACTION:" line. End every reply with one line "ACTION: " and '
                         'one function call, for example ACTION: craft("crafting_table").')
    return parse_action(text)


# -- one call ----------------------------------------------------------------------------------------------
_NAMED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(.*)$", re.DOTALL)
_PARAMS: dict[str, tuple[str, ...]] = {
    "craft": ("item", "num"), "smelt": ("item", "num"), "equip": ("item",), "look_up": ("item",),
    "teleport_to_spawn": (), "execute": ("prompt", "goal_item", "num"),
}
_ALIASES = {"obj": "item", "target": "item", "goal": "goal_item", "count": "num"}  # VAB's docstrings say ``obj``
_USAGE = {
    "craft": 'craft(item, num), for example craft("planks", 4); num is optional (1)',
    "smelt": 'smelt(item, num), for example smelt("iron_ingot", 2); num is optional (1)',
    "equip": 'equip(item), for example equip("wooden_pickaxe")',
    "look_up": 'look_up(item), for example look_up("stone_pickaxe") or look_up("planks")',
    "teleport_to_spawn": "teleport_to_spawn(), with no argument",
    "execute": 'execute(prompt) or execute(prompt, goal_item, num), for example execute("mine iron_ore", '
               '"iron_ore", 2)',
}


@dataclass(frozen=True)
class _Arg:
    name: str | None  # the keyword, if the reply named it
    value: str
    quoted: bool


def parse_action(text: str) -> Action:
    """One call such as ``craft("planks", 4)``. Raises ParseError naming what is wrong and the allowed forms."""
    text = (text or "").strip()
    if text == NO_ACTION or not text:
        raise ParseError('No action was given. Write one function call after "ACTION:", for example '
                         'ACTION: execute("collect wood", "logs", 3).')
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(", text)
    if m is None or ")" not in text[m.end():]:
        raise ParseError(f"{text[:80]!r} is not a function call. Write it as a Python call, func(args); the "
                         f"functions are {_names()}.")
    name = m.group(1).lower()
    if name not in _PARAMS:
        raise ParseError(f"{m.group(1)} is not a function you can call. Use one of {_names()}.")
    inner = _until_close(text, m.end())
    args = _split_args(inner)
    if name in ("craft", "smelt"):
        item, num = _bind(name, args, required=1)
        n = _count(name, num, minimum=1) if num is not None else None
        return (Craft if name == "craft" else Smelt)(_item(name, item), n)
    if name in ("equip", "look_up"):
        (item,) = _bind(name, args, required=1)
        return (Equip if name == "equip" else LookUp)(_item(name, item))
    if name == "teleport_to_spawn":
        if args:
            raise ParseError(f"teleport_to_spawn takes no argument; call it as {_USAGE[name]}.")
        return TeleportToSpawn()
    return _execute(args)


def _execute(args: list[_Arg]) -> Execute:
    if len(args) == 2:
        raise ParseError(f"execute takes 1 or 3 arguments, not 2: give the goal item together with how many "
                         f"to get, or the prompt alone. Use {_USAGE['execute']}.")
    prompt, goal, num = _bind("execute", args, required=1)
    assert prompt is not None
    if not prompt.quoted or (goal is not None and not goal.quoted):
        raise ParseError(f"The prompt and goal_item of execute must be strings in quotes. Use {_USAGE['execute']}.")
    check_prompt(prompt.value.strip())
    if goal is None:
        return Execute(prompt.value.strip())
    return Execute(prompt.value.strip(), _item("execute", goal), _count("execute", num, minimum=0))


def check_prompt(prompt: str) -> None:
    """VAB's refusals of an executor prompt, in its order; raises ParseError with the reason. The
    executor follows short verb-object phrases only, and crafting, smelting, equipping and placing
    tables or furnaces are the other functions' work (``craft`` places its own crafting table)."""
    words = prompt.split()

    def has(word: str) -> bool:  # VAB tests the word as written and capitalised, nothing else
        return word in words or word.capitalize() in words

    if not prompt:
        raise ParseError(f"The prompt of execute is empty. Give a short verb-object phrase such as "
                         f"{_examples('mine stone')}.")
    if has("craft"):
        raise ParseError('The executor cannot craft. Call craft(item, num) instead, for example craft("stick", 4).')
    if has("smelt"):
        raise ParseError('The executor cannot smelt. Call smelt(item, num) instead, for example '
                         'smelt("iron_ingot", 1).')
    if has("equip"):
        raise ParseError('The executor cannot equip items. Call equip(item) first, for example '
                         'equip("stone_pickaxe"), then execute.')
    if has("crafting_table") or any(p in prompt for p in ("crafting table", "Crafting table", "craft table",
                                                            "Craft table")):
        raise ParseError("The executor does not craft or place a crafting table. Call craft(item, num) directly: "
                         "it places the crafting table itself, so there is no need to place one.")
    if has("furnace"):
        raise ParseError("The executor does not smelt or place a furnace. Call smelt(item, num) directly: it "
                         "uses the furnace in your inventory.")
    if has("use") and ("to" in words or "on" in words):
        raise ParseError("The prompt must be a plain verb-object phrase, not 'use ... to/on ...'. Equip the "
                         f"tool with equip(item) first, then give a prompt such as {_examples(prompt)}.")
    if len(words) >= 8:
        raise ParseError(f"The prompt is too long ({len(words)} words; fewer than 8 are allowed). Keep it a "
                         f"simple verb-object phrase such as {_examples(prompt)}.")
    if has("and"):
        raise ParseError(f"One subgoal at a time: a prompt with 'and' is refused. Keep it a simple verb-object "
                         f"phrase such as {_examples(prompt)}.")


def _examples(prompt: str) -> str:
    """The two example prompts nearest to ``prompt`` by the words they share, quoted."""
    words = prompt.lower().split()
    ranked = sorted(PROMPT_EXAMPLES, key=lambda ex: -difflib.SequenceMatcher(None, words, ex.split()).ratio())
    return f'"{ranked[0]}" or "{ranked[1]}"'


def _names() -> str:
    return ", ".join(ACTION_NAMES)


def _bind(name: str, args: list[_Arg], *, required: int) -> list[_Arg | None]:
    """The arguments in parameter order, positional first then by keyword."""
    params = _PARAMS[name]
    if len(args) < required:
        raise ParseError(f"{name} needs {'an argument' if required == 1 else f'{required} arguments'}; call it "
                         f"as {_USAGE[name]}.")
    if len(args) > len(params):
        raise ParseError(f"{name} takes at most {len(params)} argument{'s' * (len(params) > 1)}, got {len(args)}; "
                         f"call it as {_USAGE[name]}.")
    bound: list[_Arg | None] = [None] * len(params)
    for i, arg in enumerate(args):
        if arg.name is None:
            slot = i
        else:
            key = _ALIASES.get(arg.name.lower(), arg.name.lower())
            if key not in params:
                raise ParseError(f"{name} has no argument called {arg.name!r}; its arguments are "
                                 f"{', '.join(params)}. Call it as {_USAGE[name]}.")
            slot = params.index(key)
        if bound[slot] is not None:
            raise ParseError(f"{name} got {params[slot]} twice; call it as {_USAGE[name]}.")
        bound[slot] = arg
    if any(b is None for b in bound[:required]):
        raise ParseError(f"{name} is missing its {params[0]}; call it as {_USAGE[name]}.")
    return bound


def _item(name: str, arg: _Arg | None) -> str:
    assert arg is not None
    value = arg.value.strip().lower()
    if value.startswith(PREFIX):
        value = value[len(PREFIX):]
    if not value:
        raise ParseError(f"{name} got an empty item name; call it as {_USAGE[name]}.")
    return value


def _count(name: str, arg: _Arg | None, *, minimum: int) -> int:
    value = "" if arg is None else arg.value.strip()
    position = "third" if name == "execute" else "second"
    if not value.isdigit():
        raise ParseError(f"The {position} argument of {name} (num) must be a whole number written in digits, got "
                         f"{value or 'nothing'!r}; call it as {_USAGE[name]}.")
    if int(value) < minimum:
        raise ParseError(f"The {position} argument of {name} (num) must be at least {minimum}, got {value}.")
    return int(value)


def _until_close(text: str, start: int) -> str:
    """The argument text from ``start`` to the first ``)`` outside quotes (what follows is ignored,
    as in VAB: a model's trailing words after its call do not matter)."""
    quote: str | None = None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == ")":
            return text[start:i]
    raise ParseError(f"The call {text[:80]!r} is not closed: a quote or the closing parenthesis is missing.")


def _split_args(inner: str) -> list[_Arg]:
    pieces: list[str] = []
    quote: str | None = None
    current: list[str] = []
    for ch in inner:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            pieces.append("".join(current))
            current = []
            continue
        current.append(ch)
    pieces.append("".join(current))
    if len(pieces) == 1 and not pieces[0].strip():
        return []
    out = []
    for piece in pieces:
        piece = piece.strip()
        key = None
        if (m := _NAMED.match(piece)) is not None:
            key, piece = m.group(1), m.group(2).strip()
        quoted = len(piece) >= 2 and piece[0] in "'\"" and piece[-1] == piece[0]
        value = piece[1:-1] if quoted else piece.strip("'\"")  # VAB strips a lone quote at either end too
        out.append(_Arg(key, value, quoted))
    return out


def _outside_quotes_cut(text: str, mark: str) -> str:
    quote: str | None = None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == mark:
            return text[:i]
    return text
