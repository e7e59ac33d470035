"""A human player: a person is just another agent node.

``mode: window`` shows the frame (or the text rendering) in a pygame window and maps keys to the
environment's actions; ``mode: terminal`` prints the text rendering and reads typed commands. The
person plays any environment that follows the convention (docs/environments.md), since the
mapping comes from the action names it offers.

Keys in window mode: arrow keys pick the action whose name says that direction (``Left``,
``action_left``, ``action_top`` ...), digits 1-9 the n-th action, letters the lettered option
(KidGym), space the idle action, Escape gives up the episode. Param ``keys`` adds or overrides:
``{KEY_NAME: action}`` with pygame key names (``w``, ``left``, ``space``).
"""

from __future__ import annotations

import asyncio
import os
import stat
import string
import sys
from typing import Any, Literal, TextIO

import numpy as np
from pydantic import Field

from kernel.sdk.node import Message, Node, NodeParams, on_input

STOP = {"stop": True, "reason": "the player gave up"}
_DIRECTIONS = {"left": ("left",), "right": ("right",), "up": ("up", "top"), "down": ("down", "bottom")}


def arrow_action(direction: str, actions: list[str]) -> str | None:
    """The action a plain arrow key means: the shortest name that says that direction alone."""
    words = _DIRECTIONS[direction]
    others = {w for d, ws in _DIRECTIONS.items() if d != direction for w in ws}
    fits = [a for a in actions if any(w in a.lower() for w in words) and not any(o in a.lower() for o in others)]
    return min(fits, key=len) if fits else None


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
    keys: dict[str, Any] = Field(default_factory=dict, description="extra key bindings: pygame key name -> action")
    input: str | None = Field(None, description="terminal mode: a file or FIFO to read commands from (default "
                              "the controlling terminal)")


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
            self.extra_keys = {pygame.key.key_code(k): v for k, v in self.params.keys.items()}
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
            self._draw(obs, actions)
            action = await self._key(actions, obs.get("idle"))
        else:
            action = await self._typed(obs, actions)
        self.log.info("human action", episode=obs.get("episode"), t=obs.get("t"), action=action)
        await self.publish("action", action, step=msg.step)

    # window ---------------------------------------------------------------------------------
    def _draw(self, obs: dict[str, Any], actions: list[str]) -> None:
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
        lines.append("keys: arrows, 1-9 = " + ", ".join(f"{i + 1}:{a}" for i, a in enumerate(actions[:9])))
        height = (surface.get_height() if surface else 0) + 24 * len(lines) + 8
        width = max(640, surface.get_width() if surface else 0)
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

    async def _key(self, actions: list[str], idle: str | None) -> Any:
        """Wait for a key that means an action; other keys are ignored."""
        pg = self.pg
        arrows = {pg.K_LEFT: "left", pg.K_RIGHT: "right", pg.K_UP: "up", pg.K_DOWN: "down"}
        while True:
            for event in pg.event.get():
                if event.type == pg.QUIT or (event.type == pg.KEYDOWN and event.key == pg.K_ESCAPE):
                    return STOP
                if event.type != pg.KEYDOWN:
                    continue
                if event.key in self.extra_keys:
                    return self.extra_keys[event.key]
                if event.key in arrows and (a := arrow_action(arrows[event.key], actions)):
                    return a
                if event.key == pg.K_SPACE:
                    return idle
                name = pg.key.name(event.key)
                if name.isdigit() and 1 <= int(name) <= len(actions):
                    return actions[int(name) - 1]
                if len(name) == 1 and name.upper() in string.ascii_uppercase[: len(actions)]:
                    return actions[string.ascii_uppercase.index(name.upper())]
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
