"""Pong as V-MAGE plays it: one player holds both paddles, and the episode ends at the first miss.

Spec §2.4: an 800x600 window; the score is the returns of both paddles summed; the three levels
grow harder by paddle length, ball speed and ball size (Table 25, with the released settings);
the ball starts from a random place and its vertical speed is drawn afresh on every return. Speeds
are pixels per logic frame. Only one paddle moves per action, so a player must keep switching
sides as the ball crosses the court; that, not the geometry, is what makes it a tracking test.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pygame

from nodes.game.vmage.base import Game, Level, font, level_table

WIDTH, HEIGHT = 800, 600
PADDLE_X = 20  # the gap between each paddle and its wall
ACTIONS = ("LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE")

LEVELS: dict[int, Level] = level_table("pong", {
    1: {"paddle": (10, 200), "ball": 40, "paddle_speed": 5, "ball_speed": 4},
    2: {"paddle": (10, 150), "ball": 30, "paddle_speed": 8, "ball_speed": 8},
    3: {"paddle": (10, 100), "ball": 20, "paddle_speed": 10, "ball_speed": 12},
}, sample_frames=3, max_rounds=None, actions=ACTIONS, idle="NONE")

BACKGROUND = (12, 14, 28)
WHITE = (235, 235, 235)
BALL = (250, 200, 40)
LEFT_COLOUR = (90, 170, 255)
RIGHT_COLOUR = (255, 110, 110)


class Pong(Game):
    name = "pong"
    size = (WIDTH, HEIGHT)
    levels: ClassVar[dict[int, Level]] = LEVELS

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(level, seed)
        s = self.level.settings
        self.paddle_w, self.paddle_h = s["paddle"]
        self.ball_size = int(s["ball"])
        self.paddle_speed = float(s["paddle_speed"])
        self.ball_speed = float(s["ball_speed"])
        self.left_y = self.right_y = (HEIGHT - self.paddle_h) / 2
        self.left_x = PADDLE_X
        self.right_x = WIDTH - PADDLE_X - self.paddle_w
        rng = self.rng
        self.ball_x = WIDTH / 2 - self.ball_size / 2 + rng.uniform(-100, 100)
        self.ball_y = rng.uniform(60, HEIGHT - 60 - self.ball_size)
        self.vx = self.ball_speed * rng.choice((-1.0, 1.0))
        self.vy = self._new_vy()
        self.hits = [0, 0]  # returns by the left (A) and right (B) paddle

    def _new_vy(self) -> float:
        return self.rng.uniform(-self.ball_speed, self.ball_speed)

    # logic ---------------------------------------------------------------------------------------
    def tick(self, action: str) -> None:
        step = self.paddle_speed
        top = HEIGHT - self.paddle_h
        if action == "LEFTUP":
            self.left_y = max(0.0, self.left_y - step)
        elif action == "LEFTDOWN":
            self.left_y = min(top, self.left_y + step)
        elif action == "RIGHTUP":
            self.right_y = max(0.0, self.right_y - step)
        elif action == "RIGHTDOWN":
            self.right_y = min(top, self.right_y + step)
        old_x = self.ball_x
        self.ball_x += self.vx
        self.ball_y += self.vy
        low = HEIGHT - self.ball_size
        if self.ball_y < 0:
            self.ball_y, self.vy = -self.ball_y, -self.vy
        elif self.ball_y > low:
            self.ball_y, self.vy = 2 * low - self.ball_y, -self.vy
        face_left = self.left_x + self.paddle_w
        if self.vx < 0 and old_x >= face_left > self.ball_x:  # the ball reached the left paddle's face
            if self._covers(self.left_y):
                self._return(0, face_left)
            else:
                self.end("the left paddle missed the ball")
        elif self.vx > 0 and old_x + self.ball_size <= self.right_x < self.ball_x + self.ball_size:
            if self._covers(self.right_y):
                self._return(1, self.right_x - self.ball_size)
            else:
                self.end("the right paddle missed the ball")

    def _covers(self, paddle_y: float) -> bool:
        return self.ball_y + self.ball_size >= paddle_y and self.ball_y <= paddle_y + self.paddle_h

    def _return(self, side: int, x: float) -> None:
        self.hits[side] += 1
        self.score = float(sum(self.hits))
        self.ball_x = x
        self.vx = -self.vx
        self.vy = self._new_vy()

    # views -----------------------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(BACKGROUND)
        for y in range(0, HEIGHT, 30):
            pygame.draw.rect(surface, (70, 70, 90), (WIDTH // 2 - 2, y + 5, 4, 18))
        pygame.draw.rect(surface, LEFT_COLOUR, (round(self.left_x), round(self.left_y), self.paddle_w, self.paddle_h))
        pygame.draw.rect(surface, RIGHT_COLOUR,
                         (round(self.right_x), round(self.right_y), self.paddle_w, self.paddle_h))
        r = self.ball_size / 2
        pygame.draw.circle(surface, BALL, (round(self.ball_x + r), round(self.ball_y + r)), round(r))
        hud = font(36).render(f"Player A: {self.hits[0]}   Player B: {self.hits[1]}", True, WHITE)
        surface.blit(hud, ((WIDTH - hud.get_width()) // 2, 12))

    def describe(self) -> str:
        direction = "left" if self.vx < 0 else "right"
        vertical = "up" if self.vy < 0 else "down"
        return (f"Pong, {WIDTH}x{HEIGHT} court, y grows downward. Left paddle spans y {self.left_y:.0f}-"
                f"{self.left_y + self.paddle_h:.0f}; right paddle spans y {self.right_y:.0f}-"
                f"{self.right_y + self.paddle_h:.0f}. The ball (size {self.ball_size}) is at x {self.ball_x:.0f}, "
                f"y {self.ball_y:.0f}, moving {direction} and {vertical} ({self.vx:+.1f}, {self.vy:+.1f} px per "
                f"frame). Returns: left {self.hits[0]}, right {self.hits[1]}.")

    def intercept(self) -> float:
        """The ball's top y when it next reaches the face of the paddle it is heading for,
        reflecting off the walls."""
        if self.vx < 0:
            frames = (self.ball_x - (self.left_x + self.paddle_w)) / -self.vx
        else:
            frames = (self.right_x - (self.ball_x + self.ball_size)) / self.vx
        span = HEIGHT - self.ball_size
        y = (self.ball_y + self.vy * max(0.0, frames)) % (2 * span)
        return 2 * span - y if y > span else y

    def policy(self) -> str:
        """Move the paddle the ball is heading for toward where it will arrive."""
        side = "LEFT" if self.vx < 0 else "RIGHT"
        paddle_y = self.left_y if side == "LEFT" else self.right_y
        target = self.intercept() + self.ball_size / 2 - self.paddle_h / 2
        slack = self.paddle_speed * self.level.sample_frames / 2
        if target < paddle_y - slack:
            return f"{side}UP"
        if target > paddle_y + slack:
            return f"{side}DOWN"
        return "NONE"

    def state(self) -> dict[str, Any]:
        return {"left_y": self.left_y, "right_y": self.right_y, "ball_x": self.ball_x, "ball_y": self.ball_y,
                "vx": self.vx, "vy": self.vy, "hits_left": self.hits[0], "hits_right": self.hits[1]}
