"""A human player: a person is just another agent node.

``mode: window`` shows the frame (or the text rendering) in a pygame window and maps keys to the
environment's actions; ``mode: terminal`` prints the text rendering and reads typed commands. The
person plays any environment that follows the convention (docs/environments.md), since the
mapping comes from the action names it offers (``key_bindings``), worked out again for every
observation because the actions may change from level to level.

Keys in window mode, first rule first (a key is taken once; a later rule binds only actions that
have no key yet):

1. param ``keys``: ``{KEY_NAME: action}`` with pygame key names (``w``, ``left``, ``space``); an
   entry whose action the environment does not offer now is skipped, so one launch file can bind
   the keys of several games;
2. arrows: the action whose name says that direction alone (``Left``, ``action_top``, ``UP``,
   ``FORWARD`` / ``BACKWARD``, ``RISE`` / ``SLIDE``);
3. Q / E / Z / C: the diagonals (``UP+LEFT``, ``action_bottom_right``, ``LEFTDOWN``);
4. space: a jump- or fire-like action (``JUMP``, ``FIRE``, ``SHOOT``), else the idle action;
5. letters: the lettered option where the environment letters them (KidGym's ``options_lettered``),
   else the first free letter of the action's name (``KEEP``: K, ``NONE``: N);
6. digits 1-9: the n-th action, always. Escape gives up the episode.

The window's ``keys:`` line lists what rules 1-5 bound, so the person sees which key does what.
"""

from __future__ import annotations

import asyncio
import os
import stat
import string
import sys
import warnings
from typing import Any, Literal, TextIO

import numpy as np
from pydantic import Field, field_validator

from kernel.sdk.node import Message, Node, NodeParams, on_input

STOP = {"stop": True, "reason": "the player gave up"}
_DIRECTIONS = {"left": ("left",), "right": ("right",), "up": ("up", "top", "forward", "rise"),
               "down": ("down", "bottom", "backward", "slide")}
_DIAGONALS = {"q": ("up", "left"), "e": ("up", "right"), "z": ("down", "left"), "c": ("down", "right")}
_JUMPS = ("jump", "fire", "shoot", "flap")


def _says(name: str, direction: str) -> bool:
    """Whether an action name has one of the words of a direction in it (``LEFTUP`` says left and up)."""
    return any(w in name.lower() for w in _DIRECTIONS[direction])


def arrow_action(direction: str, actions: list[str]) -> str | None:
    """The action a plain arrow key means: the shortest name that says that direction alone."""
    fits = [a for a in actions if _says(a, direction) and not any(_says(a, d) for d in _DIRECTIONS if d != direction)]
    return min(fits, key=len) if fits else None


def diagonal_action(vertical: str, horizontal: str, actions: list[str]) -> str | None:
    """The action a diagonal key means: the shortest name that says both directions and no other."""
    wanted = {vertical, horizontal}
    fits = [a for a in actions if {d for d in _DIRECTIONS if _says(a, d)} == wanted]
    return min(fits, key=len) if fits else None


def _initial_stem(actions: list[str]) -> int:
    """How many leading characters every action name shares up to an underscore (``action_``), so
    the letter rule looks at ``top_left``, not at the ``a`` every football action starts with."""
    if len(actions) < 2:
        return 0
    common = os.path.commonprefix([a.lower() for a in actions])
    return common.rfind("_") + 1


def key_bindings(actions: list[str], idle: str | None, extra: dict[str, str] | None = None,
                 lettered: bool = False) -> dict[str, str]:
    """Key name (pygame's) -> action for one observation, by the rules in the module docstring, in
    the order the ``keys:`` line shows them; digits are left out (they always mean the n-th action)."""
    offered = set(actions) | ({idle} if idle is not None else set())
    keys: dict[str, str] = {k: a for k, a in (extra or {}).items() if a in offered}

    def bind(key: str, action: str | None) -> None:
        if action is not None and key not in keys and action not in keys.values():
            keys[key] = action

    for direction in ("left", "right", "up", "down"):
        bind(direction, arrow_action(direction, actions))
    for key, (vertical, horizontal) in _DIAGONALS.items():
        bind(key, diagonal_action(vertical, horizontal, actions))
    jumps = [a for a in actions if any(w in a.lower() for w in _JUMPS)]
    bind("space", min(jumps, key=len) if jumps else idle)
    if lettered:
        for letter, action in zip(string.ascii_lowercase, actions):
            bind(letter, action)
        return keys
    stem = _initial_stem(actions)
    for action in [*actions, *([idle] if idle is not None and idle not in actions else [])]:
        for letter in (ch for ch in action.lower()[stem:] if ch in string.ascii_lowercase):
            if letter not in keys and action not in keys.values():
                keys[letter] = action
                break
    return keys


def keys_line(keys: dict[str, str], actions: list[str]) -> str:
    """The help line under the frame: every bound key, the digits, Escape."""
    parts = [f"{k}:{a}" for k, a in keys.items()]
    if actions:
        parts.append(f"1-{min(len(actions), 9)}: action by number")
    return "keys: " + "  ".join([*parts, "Esc: give up"])


def typed_action(line: str, actions: list[str], idle: str | None) -> Any:
    """A typed command: an action name, its number (1-based), an option letter, ``idle``, ``quit``."""
    text = line.strip()
    if not text:
        return None
    if text.lower() in ("quit", "q", "give up"):
        return STOP
    if text.lower() == "idle":
        return idle
    for a in actions:
        if text.lower() == a.lower():
            return a
    if text.isdigit() and 1 <= int(text) <= len(actions):
        return actions[int(text) - 1]
    if len(text) == 1 and text.upper() in string.ascii_uppercase[: len(actions)]:
        return actions[string.ascii_uppercase.index(text.upper())]
    return None


class HumanParams(NodeParams):
    mode: Literal["window", "terminal"] = Field("window", description="play in a pygame window or in the terminal")
    scale: float = Field(1.0, gt=0, description="window zoom (1: frames as sent)")
    keys: dict[str, str] = Field(default_factory=dict, description="extra key bindings: pygame key name -> action "
                                 "(skipped while the environment does not offer the action)")
    input: str | None = Field(None, description="terminal mode: a file or FIFO to read commands from (default "
                              "the controlling terminal)")

    @field_validator("keys")
    @classmethod
    def _known_keys(cls, keys: dict[str, str]) -> dict[str, str]:
        """Key names as pygame spells them (``Left`` -> ``left``), so a binding is found by the name
        of the key pressed; a name pygame does not know is refused here, not ignored at play time."""
        return {canonical_key(k): a for k, a in keys.items()}


def canonical_key(name: str) -> str:
    """pygame's own name for a key name given in a launch file; a ValueError naming it if unknown."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    with warnings.catch_warnings():  # the key tables need no display; pygame warns that it is not initialised
        warnings.simplefilter("ignore")
        try:
            return str(pygame.key.name(pygame.key.key_code(name)))
        except ValueError:
            raise ValueError(f"{name!r} is not a key name pygame knows (e.g. w, left, space, return)") from None


class HumanPlayer(Node):
    """A person plays: frames in a window (or text in a terminal), actions from the keyboard."""

    inputs = ("obs",)
    outputs = ("action",)
    Params = HumanParams
    params: HumanParams

    async def setup(self) -> None:
        self.mode = self.params.mode
        if self.mode == "window":
            os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
            import pygame

            self.pg = pygame
            pygame.display.init()
            pygame.font.init()
            pygame.display.set_caption(f"framebus: {self.id}")
            self.screen = pygame.display.set_mode((640, 480))
            self.font = pygame.font.Font(None, 22)
        else:
            self.reader = asyncio.StreamReader()
            source = self.params.input or ("/dev/tty" if os.path.exists("/dev/tty") else None)
            self._input: TextIO = open(source) if source else sys.stdin  # noqa: SIM115 - closed in teardown
            if stat.S_ISREG(os.fstat(self._input.fileno()).st_mode):  # a script of commands: read it whole
                self.reader.feed_data(self._input.read().encode())
                self.reader.feed_eof()
            else:  # a terminal, pipe or FIFO: read as the person types
                loop = asyncio.get_running_loop()
                await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self.reader), self._input)

    async def teardown(self) -> None:
        if self.mode == "window":
            self.pg.display.quit()
        elif self._input is not sys.stdin:
            self._input.close()

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        obs = msg.body
        actions = [str(a) for a in obs.get("actions") or []]
        if self.mode == "window":
            keys = key_bindings(actions, obs.get("idle"), self.params.keys, bool(obs.get("options_lettered")))
            self._draw(obs, actions, keys)
            action = await self._key(actions, keys)
        else:
            action = await self._typed(obs, actions)
        self.log.info("human action", episode=obs.get("episode"), t=obs.get("t"), action=action)
        await self.publish("action", action, step=msg.step)

    # window ---------------------------------------------------------------------------------
    def _draw(self, obs: dict[str, Any], actions: list[str], keys: dict[str, str]) -> None:
        pg = self.pg
        frame = obs.get("frame")
        lines = [f"t={obs.get('t')}  {obs.get('goal', '')}"]
        if frame is not None:
            image = np.ascontiguousarray(np.asarray(frame, dtype=np.uint8)[..., :3])
            surface = pg.image.frombuffer(image.tobytes(), (image.shape[1], image.shape[0]), "RGB")
            scale = self.params.scale
            if scale != 1:
                surface = pg.transform.scale(surface, (int(image.shape[1] * scale), int(image.shape[0] * scale)))
        else:
            surface = None
            lines += str(obs.get("text", "")).splitlines()
        width = max(640, surface.get_width() if surface else 0)
        lines += self._wrapped(keys_line(keys, actions), width - 12)
        height = (surface.get_height() if surface else 0) + 24 * len(lines) + 8
        if self.screen.get_size() != (width, height):
            self.screen = pg.display.set_mode((width, height))
        self.screen.fill((20, 20, 24))
        y = 4
        if surface is not None:
            self.screen.blit(surface, (0, 0))
            y = surface.get_height() + 4
        for line in lines:
            self.screen.blit(self.font.render(line, True, (230, 230, 230)), (6, y))
            y += 24
        pg.display.flip()

    def _wrapped(self, text: str, width: int) -> list[str]:
        """The keys line cut at spaces into lines that fit the window (FlappyBird's is narrow)."""
        lines: list[str] = []
        for word in text.split("  "):
            if lines and self.font.size(lines[-1] + "  " + word)[0] <= width:
                lines[-1] += "  " + word
            else:
                lines.append(word)
        return lines

    async def _key(self, actions: list[str], keys: dict[str, str]) -> Any:
        """Wait for a key that means an action; other keys are ignored (in lockstep the game waits).
        Events are taken one at a time, so keys pressed ahead of the next frame wait their turn
        instead of being dropped with the batch the first one came in."""
        pg = self.pg
        while True:
            while (event := pg.event.poll()).type != pg.NOEVENT:
                if event.type == pg.QUIT or (event.type == pg.KEYDOWN and event.key == pg.K_ESCAPE):
                    return STOP
                if event.type != pg.KEYDOWN:
                    continue
                name = pg.key.name(event.key)
                if name in keys:
                    return keys[name]
                if name.isdigit() and 1 <= int(name) <= min(len(actions), 9):
                    return actions[int(name) - 1]
            await asyncio.sleep(1 / 60)

    # terminal -------------------------------------------------------------------------------
    async def _typed(self, obs: dict[str, Any], actions: list[str]) -> Any:
        menu = "  ".join(f"{i + 1}) {a}" for i, a in enumerate(actions))
        print(f"\n[{self.id}] t={obs.get('t')} {obs.get('goal', '')}\n{obs.get('text', '')}\n{menu}\n> ",
              end="", flush=True)
        while True:
            line = (await self.reader.readline()).decode()
            if not line:  # the input closed: nobody is there any more
                return STOP
            action = typed_action(line, actions, obs.get("idle"))
            if action is not None or line.strip().lower() == "idle":
                return action
            print(f"not an action: {line.strip()!r}; type a name, a number 1-{len(actions)}, idle or quit\n> ",
                  end="", flush=True)
