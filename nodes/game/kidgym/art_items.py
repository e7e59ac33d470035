"""Fruits, foods and toys: the items of the shop, canteen and toy-house scenes."""

from __future__ import annotations

import math
from typing import Callable

from nodes.game.kidgym.pen import INK, Color, Pen, arc_points, shade

WHITE: Color = (250, 250, 250)
RED: Color = (220, 40, 45)
GREEN: Color = (80, 160, 60)
BROWN: Color = (120, 75, 40)
YELLOW: Color = (250, 215, 50)


def _leaf(p: Pen, x: float, y: float, dx: float, dy: float, color: Color = GREEN) -> None:
    nx, ny = -dy * 0.45, dx * 0.45
    p.poly([(x, y), (x + dx / 2 + nx, y + dy / 2 + ny), (x + dx, y + dy), (x + dx / 2 - nx, y + dy / 2 - ny)], color,
           width=0.015)


# --- fruit ---------------------------------------------------------------------------------------
def apple(p: Pen) -> None:
    p.line([(0.5, 0.3), (0.53, 0.14)], BROWN, 0.035)
    p.circle(0.38, 0.56, 0.26, RED)
    p.circle(0.62, 0.56, 0.26, RED)
    p.ellipse(0.5, 0.6, 0.2, 0.26, RED, outline=None)
    p.ellipse(0.36, 0.46, 0.05, 0.08, shade(RED, 1.5), outline=None)
    _leaf(p, 0.53, 0.2, 0.2, -0.06)


def banana(p: Pen) -> None:
    outer = arc_points(0.42, 0.3, 0.42, 0.5, 20, 150, 20)
    inner = arc_points(0.42, 0.22, 0.34, 0.38, 150, 20, 20)
    p.poly(outer + inner, YELLOW)
    p.line([outer[0], (outer[0][0] + 0.04, outer[0][1] - 0.06)], BROWN, 0.04)
    p.circle(*outer[-1], 0.02, BROWN, outline=None)


def cherry(p: Pen) -> None:
    p.line([(0.32, 0.6), (0.45, 0.3), (0.55, 0.14)], (90, 130, 40), 0.025)
    p.line([(0.68, 0.62), (0.6, 0.3), (0.55, 0.14)], (90, 130, 40), 0.025)
    _leaf(p, 0.55, 0.15, 0.22, 0.02)
    for x, y in ((0.32, 0.68), (0.68, 0.7)):
        p.circle(x, y, 0.17, (190, 20, 40))
        p.circle(x - 0.06, y - 0.06, 0.035, shade((190, 20, 40), 1.6), outline=None)


def grapes(p: Pen) -> None:
    purple = (130, 60, 160)
    p.line([(0.5, 0.22), (0.52, 0.08)], BROWN, 0.035)
    _leaf(p, 0.52, 0.14, 0.2, 0.0)
    rows = ((0.3, 4), (0.45, 3), (0.6, 3), (0.75, 2), (0.88, 1))
    for y, n in rows:
        for i in range(n):
            p.circle(0.5 + (i - (n - 1) / 2) * 0.15, y, 0.09, purple, width=0.015)


def lemon(p: Pen) -> None:
    p.poly([(0.06, 0.52), (0.16, 0.4)] + arc_points(0.5, 0.52, 0.36, 0.3, 200, 340, 14) + [(0.84, 0.4), (0.94, 0.52),
           (0.84, 0.64)] + arc_points(0.5, 0.52, 0.36, 0.3, 20, 160, 14) + [(0.16, 0.64)], (250, 230, 60))
    p.ellipse(0.38, 0.42, 0.1, 0.04, (255, 250, 180), outline=None)


def orange(p: Pen) -> None:
    col = (250, 150, 30)
    p.circle(0.5, 0.55, 0.36, col)
    for x, y in ((0.38, 0.5), (0.6, 0.45), (0.52, 0.65), (0.68, 0.62), (0.35, 0.68)):
        p.circle(x, y, 0.015, shade(col, 0.8), outline=None)
    p.circle(0.5, 0.2, 0.03, BROWN, outline=None)
    _leaf(p, 0.5, 0.2, 0.22, -0.08)


def pear(p: Pen) -> None:
    col = (190, 210, 70)
    p.line([(0.5, 0.24), (0.47, 0.08)], BROWN, 0.035)
    p.circle(0.5, 0.36, 0.15, col)
    p.circle(0.5, 0.66, 0.27, col)
    p.ellipse(0.5, 0.48, 0.15, 0.14, col, outline=None)
    _leaf(p, 0.48, 0.13, 0.18, 0.04)


def strawberry(p: Pen) -> None:
    red = (225, 35, 55)
    p.poly([(0.14, 0.35), (0.86, 0.35), (0.78, 0.62), (0.5, 0.92), (0.22, 0.62)], red)
    p.ellipse(0.5, 0.38, 0.36, 0.12, red, outline=None)
    for x, y in ((0.3, 0.45), (0.5, 0.48), (0.7, 0.45), (0.38, 0.62), (0.62, 0.62), (0.5, 0.76), (0.4, 0.5)):
        p.ellipse(x, y, 0.015, 0.025, YELLOW, outline=None)
    p.poly([(0.22, 0.3), (0.35, 0.36), (0.42, 0.22), (0.5, 0.34), (0.58, 0.22), (0.65, 0.36), (0.78, 0.3), (0.5, 0.4)],
           GREEN, width=0.015)


def watermelon(p: Pen) -> None:
    p.pie(0.5, 0.3, 0.46, 0, 180, (60, 140, 50))
    p.pie(0.5, 0.3, 0.4, 0, 180, (250, 250, 220), outline=None)
    p.pie(0.5, 0.3, 0.36, 0, 180, (235, 60, 70), outline=None)
    for x, y in ((0.35, 0.42), (0.5, 0.5), (0.65, 0.42), (0.42, 0.58), (0.58, 0.58)):
        p.ellipse(x, y, 0.015, 0.03, (30, 30, 30), outline=None)


# --- food ----------------------------------------------------------------------------------------
def cake(p: Pen) -> None:
    p.rect(0.14, 0.45, 0.86, 0.86, (245, 215, 150), radius=0.04)
    p.rect(0.14, 0.62, 0.86, 0.68, (250, 245, 240), outline=None)
    p.poly([(0.14, 0.4), (0.86, 0.4), (0.86, 0.52), (0.76, 0.58), (0.66, 0.5), (0.54, 0.58), (0.44, 0.5), (0.32, 0.58),
            (0.22, 0.5), (0.14, 0.55)], (245, 150, 190))
    p.line([(0.5, 0.4), (0.5, 0.2)], (90, 160, 230), 0.04)
    p.poly([(0.5, 0.08), (0.46, 0.17), (0.5, 0.2), (0.54, 0.17)], (255, 170, 40), width=0.012)


def egg(p: Pen) -> None:
    p.poly(arc_points(0.5, 0.58, 0.3, 0.32, 0, 180, 16) + arc_points(0.5, 0.58, 0.3, 0.48, 180, 360, 16),
           (250, 245, 230))
    p.ellipse(0.4, 0.42, 0.05, 0.09, WHITE, outline=None)


def hamburger(p: Pen) -> None:
    bun = (225, 150, 70)
    p.rect(0.12, 0.7, 0.88, 0.84, bun, radius=0.06)
    p.rect(0.1, 0.56, 0.9, 0.7, (110, 60, 35), radius=0.06)
    p.poly([(0.12, 0.56), (0.88, 0.56), (0.7, 0.66), (0.5, 0.58), (0.3, 0.66)], (250, 200, 50), width=0.015)
    p.poly([(0.08, 0.52)] + [(0.08 + 0.84 * i / 8, 0.5 + (0.06 if i % 2 else 0)) for i in range(9)] + [(0.92, 0.52)],
           (110, 190, 60), width=0.015)
    p.pie(0.5, 0.52, 0.4, 180, 360, bun)
    for x, y in ((0.35, 0.35), (0.5, 0.28), (0.63, 0.36), (0.45, 0.42), (0.72, 0.44)):
        p.ellipse(x, y, 0.025, 0.015, (255, 245, 220), outline=None)


def pizza(p: Pen) -> None:
    p.poly([(0.5, 0.92), (0.12, 0.2), (0.88, 0.2)], (250, 210, 90))
    p.rect(0.08, 0.1, 0.92, 0.24, (200, 130, 60), radius=0.07)
    for x, y in ((0.38, 0.36), (0.6, 0.34), (0.5, 0.55), (0.45, 0.72)):
        p.circle(x, y, 0.06, (200, 50, 40), width=0.012)


def sushi(p: Pen) -> None:
    p.rect(0.14, 0.5, 0.86, 0.82, (250, 250, 245), radius=0.12)
    p.poly([(0.08, 0.52)] + arc_points(0.5, 0.56, 0.44, 0.3, 190, 350, 14) + [(0.92, 0.56), (0.86, 0.62),
           (0.14, 0.62)], (250, 130, 80))
    for x in (0.32, 0.5, 0.68):
        p.line([(x - 0.04, 0.38), (x + 0.04, 0.58)], (255, 220, 200), 0.025)
    p.rect(0.44, 0.48, 0.56, 0.82, (40, 50, 45), outline=None)


def donut(p: Pen) -> None:
    p.circle(0.5, 0.5, 0.4, (215, 160, 90))
    p.circle(0.5, 0.48, 0.34, (245, 140, 190), outline=None)
    p.circle(0.5, 0.5, 0.12, (0, 0, 0, 0))
    for i in range(10):
        a = math.radians(i * 36 + 10)
        r = 0.24
        x, y = 0.5 + r * math.cos(a), 0.48 + r * math.sin(a)
        p.line([(x, y), (x + 0.03, y + 0.02)], ((80, 150, 240), (250, 240, 80), WHITE)[i % 3], 0.025)


def ice_cream(p: Pen) -> None:
    p.poly([(0.28, 0.5), (0.72, 0.5), (0.5, 0.94)], (225, 170, 90))
    for i in range(3):
        p.line([(0.32 + 0.1 * i, 0.5), (0.5 + 0.05 * i, 0.86 - 0.1 * i)], shade((225, 170, 90), 0.7), 0.012)
    p.circle(0.5, 0.4, 0.2, (250, 200, 210))
    p.circle(0.5, 0.22, 0.15, (140, 90, 60))
    p.circle(0.55, 0.1, 0.05, RED)


def sandwich(p: Pen) -> None:
    bread = (240, 205, 140)
    p.poly([(0.1, 0.72), (0.9, 0.72), (0.9, 0.86), (0.1, 0.86)], bread)
    p.poly([(0.08, 0.7), (0.92, 0.7), (0.88, 0.64), (0.12, 0.64)], (110, 190, 60), width=0.015)
    p.poly([(0.12, 0.64), (0.88, 0.64), (0.88, 0.56), (0.12, 0.56)], (240, 130, 130), width=0.015)
    p.poly([(0.12, 0.56), (0.88, 0.56), (0.5, 0.12)], bread)


# --- toys ----------------------------------------------------------------------------------------
def ball(p: Pen) -> None:
    colors = (RED, WHITE, (50, 110, 220), WHITE, YELLOW, WHITE)
    for i, c in enumerate(colors):
        p.pie(0.5, 0.5, 0.4, i * 60 - 90, i * 60 - 30, c, outline=None)
    p.circle(0.5, 0.5, 0.4, None)
    p.circle(0.5, 0.5, 0.07, WHITE, width=0.015)


def toy_car(p: Pen) -> None:
    body = (220, 50, 50)
    p.poly([(0.28, 0.48), (0.36, 0.3), (0.66, 0.3), (0.76, 0.48)], body)
    p.poly([(0.34, 0.46), (0.4, 0.34), (0.5, 0.34), (0.5, 0.46)], (170, 220, 250), width=0.015)
    p.poly([(0.54, 0.46), (0.54, 0.34), (0.63, 0.34), (0.7, 0.46)], (170, 220, 250), width=0.015)
    p.rect(0.08, 0.46, 0.92, 0.68, body, radius=0.06)
    p.circle(0.88, 0.54, 0.03, YELLOW, width=0.01)
    for x in (0.26, 0.74):
        p.circle(x, 0.7, 0.11, (40, 40, 40))
        p.circle(x, 0.7, 0.04, (200, 200, 200), width=0.01)


def toy_train(p: Pen) -> None:
    blue, red = (50, 100, 210), (220, 50, 50)
    p.rect(0.1, 0.24, 0.44, 0.7, blue)
    p.rect(0.16, 0.3, 0.38, 0.46, (170, 220, 250), width=0.015)
    p.rect(0.06, 0.18, 0.48, 0.26, red)
    p.rect(0.42, 0.42, 0.86, 0.7, blue)
    p.rect(0.66, 0.24, 0.76, 0.42, (60, 60, 60))
    p.poly([(0.86, 0.58), (0.96, 0.7), (0.86, 0.7)], red, width=0.015)
    for x, r in ((0.22, 0.1), (0.5, 0.08), (0.74, 0.08)):
        p.circle(x, 0.74, r, (40, 40, 40))
        p.circle(x, 0.74, r * 0.4, red, width=0.01)


def teddy_bear(p: Pen) -> None:
    fur, light = (165, 110, 60), (225, 185, 140)
    for x in (0.28, 0.72):
        p.circle(x, 0.88, 0.1, fur)
        p.circle(x, 0.18, 0.09, fur)
        p.circle(x, 0.18, 0.045, light, outline=None)
    p.ellipse(0.5, 0.68, 0.24, 0.22, fur)
    p.ellipse(0.5, 0.7, 0.13, 0.13, light, outline=None)
    for x in (0.2, 0.8):
        p.circle(x, 0.62, 0.08, fur)
    p.circle(0.5, 0.34, 0.2, fur)
    p.ellipse(0.5, 0.42, 0.09, 0.07, light)
    p.circle(0.5, 0.39, 0.025, INK, outline=None)
    p.circle(0.42, 0.3, 0.025, INK, outline=None)
    p.circle(0.58, 0.3, 0.025, INK, outline=None)


def kite(p: Pen) -> None:
    top, left, right, bottom = (0.46, 0.06), (0.18, 0.36), (0.74, 0.36), (0.46, 0.74)
    centre = (0.46, 0.36)
    for a, b, c in ((top, left, RED), (top, right, YELLOW), (bottom, left, (50, 110, 220)), (bottom, right, GREEN)):
        p.poly([a, b, centre], c, width=0.015)
    p.poly([top, right, bottom, left], None)
    p.line([bottom, (0.56, 0.82), (0.5, 0.88), (0.62, 0.96)], INK, 0.012)
    for x, y in ((0.56, 0.82), (0.58, 0.93)):
        p.poly([(x - 0.04, y - 0.03), (x + 0.04, y + 0.03), (x + 0.04, y - 0.03), (x - 0.04, y + 0.03)], RED,
               width=0.01)


def robot(p: Pen) -> None:
    metal = (175, 185, 200)
    p.line([(0.5, 0.16), (0.5, 0.06)], INK, 0.025)
    p.circle(0.5, 0.06, 0.035, RED, width=0.012)
    p.rect(0.3, 0.16, 0.7, 0.42, metal, radius=0.04)
    for x in (0.41, 0.59):
        p.circle(x, 0.27, 0.05, (120, 220, 250), width=0.012)
    p.rect(0.42, 0.34, 0.58, 0.38, INK, outline=None)
    p.rect(0.24, 0.46, 0.76, 0.78, metal, radius=0.04)
    p.rect(0.38, 0.54, 0.62, 0.68, (90, 160, 230), width=0.015)
    for x in (0.14, 0.86):
        p.rect(x - 0.06, 0.48, x + 0.06, 0.72, metal, radius=0.03)
    for x in (0.38, 0.62):
        p.rect(x - 0.06, 0.78, x + 0.06, 0.94, metal, radius=0.02)


def rubber_duck(p: Pen) -> None:
    p.poly([(0.1, 0.5), (0.06, 0.38), (0.22, 0.5)], YELLOW)
    p.ellipse(0.46, 0.64, 0.36, 0.22, YELLOW)
    p.ellipse(0.44, 0.62, 0.14, 0.08, shade(YELLOW, 0.85))
    p.circle(0.66, 0.34, 0.17, YELLOW)
    p.poly([(0.8, 0.36), (0.96, 0.4), (0.8, 0.46)], (245, 130, 40))
    p.circle(0.7, 0.3, 0.03, INK, outline=None)


def drum(p: Pen) -> None:
    red = (210, 50, 50)
    p.rect(0.16, 0.4, 0.84, 0.82, red)
    p.ellipse(0.5, 0.82, 0.34, 0.08, red)
    p.rect(0.165, 0.4, 0.835, 0.8, red, outline=None)
    p.line([(0.16, 0.46), (0.3, 0.76), (0.44, 0.46), (0.56, 0.76), (0.7, 0.46), (0.84, 0.76)], YELLOW, 0.02)
    p.ellipse(0.5, 0.4, 0.34, 0.1, (250, 245, 230))
    p.line([(0.3, 0.36), (0.12, 0.1)], BROWN, 0.03)
    p.line([(0.7, 0.36), (0.88, 0.1)], BROWN, 0.03)


ITEMS: dict[str, Callable[[Pen], None]] = {
    "apple": apple, "banana": banana, "cherry": cherry, "grapes": grapes, "lemon": lemon, "orange": orange,
    "pear": pear, "strawberry": strawberry, "watermelon": watermelon,
    "cake": cake, "egg": egg, "hamburger": hamburger, "pizza": pizza, "sushi": sushi, "donut": donut,
    "ice cream": ice_cream, "sandwich": sandwich,
    "ball": ball, "toy car": toy_car, "toy train": toy_train, "teddy bear": teddy_bear, "kite": kite, "robot": robot,
    "rubber duck": rubber_duck, "drum": drum,
}
