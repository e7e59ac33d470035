"""Flappy Bird as V-MAGE plays it: seven levels in three tiers, each tier with its own action set.

Spec §2.3 and §8.13. Levels 1-3 have no gravity: UP and DOWN move the bird and KEEP holds it
(there is no NONE there). Levels 4-6 add gravity with a KEEP that holds the altitude, and level 7
is the standard game, UP (flap) or NONE (fall). Within a tier the levels differ by the bird's
forward speed, the gap between the pipes and how often pipes come (the released settings: levels
4-6 are identical there, and the paper's numbers for them were made with those settings, so they
are kept identical here). A pipe pair passed scores 1; hitting a pipe, the ground or the top of the
screen ends the episode; V-MAGE sets no frame limit.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pygame

from nodes.game.vmage.base import Game, Level, font, level_table

WIDTH, HEIGHT = 576, 1024
GROUND = 900  # the top of the ground strip
BIRD_X, BIRD_W, BIRD_H = 120, 46, 34
PIPE_W = 104
MARGIN = 80  # the least pipe length shown above and below a gap
MAX_SHIFT = 260  # the most a gap moves from one pipe pair to the next, so a level stays passable

NO_GRAVITY = ("UP", "DOWN", "KEEP")
WITH_KEEP = ("UP", "KEEP", "NONE")
STANDARD = ("UP", "NONE")

LEVELS: dict[int, Level] = level_table("flappybird", {
    1: {"gravity": 0.0, "speed": 5, "gap": 400, "every": 70, "actions": NO_GRAVITY, "idle": "KEEP", "sample_frames": 5},
    2: {"gravity": 0.0, "speed": 5, "gap": 270, "every": 70, "actions": NO_GRAVITY, "idle": "KEEP", "sample_frames": 5},
    3: {"gravity": 0.0, "speed": 10, "gap": 270, "every": 50, "actions": NO_GRAVITY, "idle": "KEEP",
        "sample_frames": 5},
    4: {"gravity": 0.25, "speed": 5, "gap": 350, "every": 70, "actions": WITH_KEEP},
    5: {"gravity": 0.25, "speed": 5, "gap": 350, "every": 70, "actions": WITH_KEEP},
    6: {"gravity": 0.25, "speed": 5, "gap": 350, "every": 70, "actions": WITH_KEEP},
    7: {"gravity": 0.25, "speed": 5, "gap": 400, "every": 70, "actions": STANDARD},
}, sample_frames=3, max_rounds=None, actions=STANDARD, idle="NONE")

JUMP = 7.0  # px per frame: the flap's upward speed, and the zero-gravity levels' climb and dive
MAX_FALL = 12.0

SKY = (112, 197, 206)
PIPE = (92, 178, 60)
PIPE_DARK = (52, 120, 36)
GROUND_TOP = (222, 216, 149)
GROUND_EDGE = (96, 170, 60)
BIRD = (246, 204, 52)
WHITE = (250, 250, 250)
BLACK = (20, 20, 20)
BEAK = (240, 120, 40)


class Pipe:
    __slots__ = ("x", "gap_top", "passed")

    def __init__(self, x: float, gap_top: float) -> None:
        self.x, self.gap_top, self.passed = x, gap_top, False


class FlappyBird(Game):
    name = "flappybird"
    size = (WIDTH, HEIGHT)
    levels: ClassVar[dict[int, Level]] = LEVELS

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(level, seed)
        s = self.level.settings
        self.gravity = float(s["gravity"])
        self.speed = float(s["speed"])
        self.gap = float(s["gap"])
        self.every = int(s["every"])
        self.y = (GROUND - BIRD_H) / 2
        self.vy = 0.0
        self.pipes: list[Pipe] = []
        self._last_gap: float | None = None

    def _spawn(self) -> None:
        low, high = MARGIN, GROUND - MARGIN - self.gap
        top = self.rng.uniform(low, high)
        if self._last_gap is not None:
            top = min(max(top, self._last_gap - MAX_SHIFT), self._last_gap + MAX_SHIFT)
        self._last_gap = top
        self.pipes.append(Pipe(float(WIDTH), top))

    # logic ---------------------------------------------------------------------------------------
    def tick(self, action: str) -> None:
        if self.frame % self.every == 0:
            self._spawn()
        if self.gravity == 0.0:
            self.vy = -JUMP if action == "UP" else JUMP if action == "DOWN" else 0.0
        elif action == "UP":
            self.vy = -JUMP
        elif action == "KEEP":
            self.vy = 0.0
        else:
            self.vy = min(MAX_FALL, self.vy + self.gravity)
        self.y += self.vy
        for pipe in self.pipes:
            pipe.x -= self.speed
            if not pipe.passed and pipe.x + PIPE_W < BIRD_X:
                pipe.passed = True
                self.score += 1.0
        self.pipes = [p for p in self.pipes if p.x + PIPE_W > 0]
        if self.y < 0:
            self.end("the bird flew out of the top of the screen")
        elif self.y + BIRD_H >= GROUND:
            self.end("the bird hit the ground")
        elif any(self._hits(p) for p in self.pipes):
            self.end("the bird hit a pipe")

    def _hits(self, pipe: Pipe) -> bool:
        if pipe.x >= BIRD_X + BIRD_W or pipe.x + PIPE_W <= BIRD_X:
            return False
        return self.y < pipe.gap_top or self.y + BIRD_H > pipe.gap_top + self.gap

    def next_pipe(self) -> Pipe | None:
        """The first pipe pair the bird has not yet cleared."""
        return next((p for p in self.pipes if p.x + PIPE_W >= BIRD_X), None)

    # views -----------------------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(SKY)
        for cx, cy, r in ((90, 780, 70), (200, 800, 90), (360, 790, 80), (500, 770, 75)):
            pygame.draw.circle(surface, (226, 240, 236), (cx, cy), r)  # clouds on the horizon
        for pipe in self.pipes:
            x = round(pipe.x)
            top, bottom = round(pipe.gap_top), round(pipe.gap_top + self.gap)
            pygame.draw.rect(surface, PIPE, (x, 0, PIPE_W, top))
            pygame.draw.rect(surface, PIPE, (x, bottom, PIPE_W, GROUND - bottom))
            for y in (top - 36, bottom):
                pygame.draw.rect(surface, PIPE_DARK, (x - 6, y, PIPE_W + 12, 36))
                pygame.draw.rect(surface, PIPE, (x - 2, y + 4, PIPE_W + 4, 28))
        pygame.draw.rect(surface, GROUND_TOP, (0, GROUND, WIDTH, HEIGHT - GROUND))
        pygame.draw.rect(surface, GROUND_EDGE, (0, GROUND, WIDTH, 14))
        offset = int(self.frame * self.speed) % 40
        for x in range(-offset, WIDTH, 40):
            pygame.draw.line(surface, (200, 190, 120), (x, GROUND + 24), (x + 20, GROUND + 44), 4)
        y = round(self.y)
        pygame.draw.ellipse(surface, BIRD, (BIRD_X, y, BIRD_W, BIRD_H))
        pygame.draw.ellipse(surface, BLACK, (BIRD_X, y, BIRD_W, BIRD_H), 2)
        pygame.draw.circle(surface, WHITE, (BIRD_X + 32, y + 10), 7)
        pygame.draw.circle(surface, BLACK, (BIRD_X + 34, y + 10), 3)
        pygame.draw.polygon(surface, BEAK, [(BIRD_X + 40, y + 16), (BIRD_X + 56, y + 21), (BIRD_X + 40, y + 26)])
        pygame.draw.ellipse(surface, (250, 235, 160), (BIRD_X + 4, y + 14, 20, 12))  # the wing
        text = str(int(self.score))
        big = font(110)
        shadow, digits = big.render(text, True, BLACK), big.render(text, True, WHITE)
        left = (WIDTH - digits.get_width()) // 2
        surface.blit(shadow, (left + 4, 64))
        surface.blit(digits, (left, 60))

    def describe(self) -> str:
        pipe = self.next_pipe()
        ahead = ("no pipe ahead yet" if pipe is None else
                 f"the next gap spans y {pipe.gap_top:.0f}-{pipe.gap_top + self.gap:.0f} and its pipe starts "
                 f"{pipe.x - (BIRD_X + BIRD_W):.0f} px ahead of the bird")
        return (f"Flappy Bird, {WIDTH}x{HEIGHT} screen, y grows downward, the ground at y {GROUND}. The bird spans "
                f"y {self.y:.0f}-{self.y + BIRD_H:.0f} and moves {self.vy:+.1f} px per frame vertically; "
                f"{ahead}. Pipes passed: {int(self.score)}.")

    def policy(self) -> str:
        """Steer the bird's middle toward the middle of the next gap, looking one decision ahead."""
        pipe = self.next_pipe()
        target = GROUND / 2 if pipe is None else pipe.gap_top + self.gap / 2
        middle = self.y + BIRD_H / 2
        frames = self.level.sample_frames
        if self.gravity == 0.0:
            slack = JUMP * frames / 2
            return "UP" if middle > target + slack else "DOWN" if middle < target - slack else "KEEP"
        if "KEEP" in self.level.actions:
            if middle > target + JUMP * frames / 2:
                return "UP"
            return "NONE" if middle < target - 20 else "KEEP"
        vy, y = self.vy, middle  # the standard game: flap when falling on would take the bird below the target
        for _ in range(2 * frames):
            vy = min(MAX_FALL, vy + self.gravity)
            y += vy
        return "UP" if y > target + 30 else "NONE"

    def state(self) -> dict[str, Any]:
        pipe = self.next_pipe()
        return {"y": self.y, "vy": self.vy, "pipes": len(self.pipes), "passed": int(self.score),
                "gap_top": None if pipe is None else pipe.gap_top, "pipe_x": None if pipe is None else pipe.x}
