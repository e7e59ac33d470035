"""The animals, drawn whole and facing right, so that each quarter of a Filling picture shows a
different part of the body (head, back, legs, tail) rather than four copies of a face."""

from __future__ import annotations

from typing import Callable

from nodes.game.kidgym.pen import INK, Color, Pen, arc_points, shade

WHITE: Color = (250, 250, 250)
BLACK: Color = (30, 30, 30)
PINK: Color = (245, 160, 175)


def _eye(p: Pen, x: float, y: float, r: float = 0.03) -> None:
    p.circle(x, y, r, WHITE, width=0.012)
    p.circle(x + r * 0.3, y, r * 0.55, BLACK, outline=None)


def _legs(p: Pen, xs: tuple[float, ...], top: float, bottom: float, half: float, color: Color,
          hoof: Color | None = None) -> None:
    for x in xs:
        p.rect(x - half, top, x + half, bottom, color, radius=half * 0.6)
        if hoof:
            p.rect(x - half, bottom - 0.05, x + half, bottom, hoof, radius=half * 0.3)


def cat(p: Pen) -> None:
    fur, dark = (240, 150, 60), (200, 105, 35)
    tail = [(0.26, 0.58), (0.14, 0.52), (0.1, 0.38), (0.15, 0.26)]
    p.line(tail, INK, 0.075)
    p.line(tail, fur, 0.045)
    _legs(p, (0.3, 0.42, 0.58, 0.68), 0.62, 0.88, 0.045, fur)
    p.ellipse(0.47, 0.6, 0.26, 0.14, fur)
    for x in (0.38, 0.47, 0.56):
        p.line([(x, 0.48), (x + 0.03, 0.56)], dark, 0.025)
    p.poly([(0.62, 0.3), (0.66, 0.14), (0.74, 0.27)], fur)
    p.poly([(0.78, 0.27), (0.86, 0.14), (0.89, 0.31)], fur)
    p.circle(0.76, 0.38, 0.15, fur)
    _eye(p, 0.71, 0.35)
    _eye(p, 0.82, 0.35)
    p.poly([(0.77, 0.42), (0.8, 0.42), (0.785, 0.445)], PINK, width=0.01)
    for dy in (-0.02, 0.02):
        p.line([(0.83, 0.44 + dy), (0.96, 0.42 + 2 * dy)], INK, 0.008)
        p.line([(0.73, 0.44 + dy), (0.6, 0.42 + 2 * dy)], INK, 0.008)


def dog(p: Pen) -> None:
    fur, ear = (190, 135, 80), (110, 70, 40)
    p.line([(0.2, 0.52), (0.1, 0.3)], INK, 0.075)
    p.line([(0.2, 0.52), (0.1, 0.3)], fur, 0.045)
    _legs(p, (0.28, 0.4, 0.58, 0.68), 0.6, 0.88, 0.05, fur)
    p.ellipse(0.45, 0.58, 0.27, 0.14, fur)
    p.ellipse(0.42, 0.55, 0.1, 0.07, shade(fur, 0.8), outline=None)
    p.ellipse(0.86, 0.45, 0.1, 0.07, shade(fur, 1.3))
    p.circle(0.75, 0.37, 0.15, fur)
    p.ellipse(0.68, 0.42, 0.06, 0.13, ear)
    p.circle(0.94, 0.42, 0.035, BLACK, outline=None)
    _eye(p, 0.8, 0.32)
    p.ellipse(0.86, 0.55, 0.03, 0.05, (230, 90, 110), width=0.01)


def pig(p: Pen) -> None:
    skin = (248, 170, 185)
    p.line(arc_points(0.15, 0.45, 0.05, 0.05, 0, 330, 12), INK, 0.02)
    _legs(p, (0.3, 0.42, 0.6, 0.7), 0.62, 0.86, 0.05, skin, shade(skin, 0.6))
    p.ellipse(0.47, 0.55, 0.3, 0.18, skin)
    p.poly([(0.7, 0.26), (0.74, 0.12), (0.82, 0.24)], skin)
    p.circle(0.77, 0.4, 0.15, skin)
    p.ellipse(0.92, 0.45, 0.06, 0.08, shade(skin, 0.85))
    p.circle(0.91, 0.42, 0.012, INK, outline=None)
    p.circle(0.93, 0.48, 0.012, INK, outline=None)
    _eye(p, 0.8, 0.34)


def cow(p: Pen) -> None:
    _legs(p, (0.26, 0.38, 0.58, 0.68), 0.6, 0.9, 0.05, WHITE, BLACK)
    p.line([(0.18, 0.45), (0.12, 0.7)], INK, 0.02)
    p.ellipse(0.11, 0.72, 0.025, 0.04, BLACK, outline=None)
    p.ellipse(0.44, 0.52, 0.29, 0.16, WHITE)
    p.ellipse(0.35, 0.48, 0.08, 0.06, BLACK, outline=None)
    p.ellipse(0.55, 0.58, 0.07, 0.05, BLACK, outline=None)
    p.ellipse(0.46, 0.66, 0.05, 0.03, PINK, width=0.01)
    p.poly([(0.72, 0.2), (0.7, 0.1), (0.76, 0.18)], (235, 225, 190))
    p.poly([(0.84, 0.2), (0.88, 0.1), (0.88, 0.2)], (235, 225, 190))
    p.ellipse(0.8, 0.32, 0.12, 0.13, WHITE)
    p.ellipse(0.76, 0.3, 0.05, 0.05, BLACK, outline=None)
    p.ellipse(0.85, 0.42, 0.1, 0.07, PINK)
    p.circle(0.82, 0.43, 0.01, INK, outline=None)
    p.circle(0.88, 0.43, 0.01, INK, outline=None)
    _eye(p, 0.84, 0.28)


def sheep(p: Pen) -> None:
    wool = (245, 245, 240)
    _legs(p, (0.3, 0.42, 0.58, 0.68), 0.6, 0.88, 0.035, BLACK)
    for cx, cy in ((0.25, 0.45), (0.35, 0.38), (0.47, 0.36), (0.59, 0.39), (0.66, 0.5), (0.58, 0.6), (0.44, 0.63),
                   (0.3, 0.6), (0.22, 0.53)):
        p.circle(cx, cy, 0.1, wool, width=0.015)
    p.ellipse(0.44, 0.5, 0.2, 0.12, wool, outline=None)
    p.ellipse(0.8, 0.42, 0.09, 0.12, (60, 60, 60))
    p.ellipse(0.73, 0.35, 0.06, 0.03, (60, 60, 60))
    _eye(p, 0.83, 0.38, 0.025)
    p.circle(0.75, 0.31, 0.05, wool, width=0.012)


def chick(p: Pen) -> None:
    body, orange = (255, 215, 60), (245, 140, 40)
    for x in (0.42, 0.56):
        p.line([(x, 0.72), (x, 0.88), (x + 0.06, 0.9)], orange, 0.025)
    p.ellipse(0.47, 0.58, 0.25, 0.2, body)
    p.ellipse(0.42, 0.58, 0.12, 0.08, shade(body, 0.85))
    p.circle(0.68, 0.34, 0.15, body)
    p.poly([(0.8, 0.32), (0.93, 0.36), (0.8, 0.4)], orange)
    _eye(p, 0.72, 0.3, 0.03)
    p.poly([(0.62, 0.2), (0.66, 0.12), (0.7, 0.2)], body, width=0.015)


def elephant(p: Pen) -> None:
    grey = (160, 165, 175)
    p.line([(0.14, 0.45), (0.08, 0.66)], INK, 0.02)
    _legs(p, (0.24, 0.38, 0.56, 0.68), 0.58, 0.9, 0.065, grey)
    p.ellipse(0.42, 0.5, 0.3, 0.2, grey)
    trunk = [(0.86, 0.4), (0.92, 0.5), (0.94, 0.62), (0.93, 0.74), (0.97, 0.8)]
    p.line(trunk, INK, 0.085)
    p.line(trunk, grey, 0.05)
    p.circle(0.78, 0.36, 0.15, grey)
    p.ellipse(0.68, 0.4, 0.1, 0.16, shade(grey, 1.15))
    _eye(p, 0.83, 0.31, 0.025)
    p.poly([(0.86, 0.5), (0.96, 0.55), (0.86, 0.54)], (250, 248, 235), width=0.01)


def mouse(p: Pen) -> None:
    grey = (170, 170, 180)
    p.line([(0.3, 0.64), (0.18, 0.72), (0.09, 0.64), (0.08, 0.5)], INK, 0.018)
    _legs(p, (0.4, 0.6), 0.66, 0.8, 0.03, PINK)
    p.ellipse(0.5, 0.6, 0.22, 0.14, grey)
    p.poly([(0.66, 0.46), (0.92, 0.56), (0.66, 0.64)], grey)
    p.circle(0.66, 0.42, 0.09, grey)
    p.circle(0.66, 0.42, 0.05, PINK, outline=None)
    p.circle(0.92, 0.56, 0.025, BLACK, outline=None)
    _eye(p, 0.78, 0.52, 0.022)


def goldfish(p: Pen) -> None:
    gold = (250, 140, 40)
    p.poly([(0.28, 0.5), (0.06, 0.28), (0.12, 0.5), (0.06, 0.72)], shade(gold, 1.2))
    p.poly([(0.45, 0.35), (0.58, 0.18), (0.66, 0.36)], shade(gold, 1.2))
    p.poly([(0.48, 0.64), (0.54, 0.8), (0.62, 0.64)], shade(gold, 1.2))
    p.ellipse(0.55, 0.5, 0.32, 0.18, gold)
    for x in (0.45, 0.55):
        p.arc(x, 0.5, 0.06, 0.12, 300, 60, shade(gold, 0.75), 0.015)
    _eye(p, 0.76, 0.45, 0.035)
    p.arc(0.83, 0.56, 0.04, 0.03, 90, 200, INK, 0.015)


def monkey(p: Pen) -> None:
    fur, face = (130, 85, 50), (235, 200, 160)
    tail = [(0.32, 0.7), (0.16, 0.74), (0.09, 0.58), (0.12, 0.4), (0.2, 0.34)]
    p.line(tail, INK, 0.05)
    p.line(tail, fur, 0.025)
    _legs(p, (0.36, 0.56), 0.66, 0.9, 0.05, fur)
    p.ellipse(0.46, 0.62, 0.2, 0.16, fur)
    p.ellipse(0.47, 0.64, 0.11, 0.09, face, outline=None)
    p.line([(0.62, 0.55), (0.78, 0.7)], INK, 0.08)
    p.line([(0.62, 0.55), (0.78, 0.7)], fur, 0.05)
    p.circle(0.48, 0.22, 0.06, face)
    p.circle(0.78, 0.22, 0.06, face)
    p.circle(0.63, 0.28, 0.16, fur)
    p.ellipse(0.63, 0.32, 0.11, 0.1, face, outline=None)
    _eye(p, 0.58, 0.26, 0.028)
    _eye(p, 0.68, 0.26, 0.028)
    p.arc(0.63, 0.35, 0.04, 0.025, 10, 170, INK, 0.012)


def tortoise(p: Pen) -> None:
    skin, shell = (150, 185, 90), (70, 130, 60)
    _legs(p, (0.3, 0.45, 0.6, 0.72), 0.62, 0.78, 0.05, skin)
    p.poly([(0.15, 0.62), (0.08, 0.68), (0.2, 0.66)], skin)
    p.ellipse(0.86, 0.55, 0.1, 0.08, skin)
    _eye(p, 0.89, 0.52, 0.02)
    p.pie(0.5, 0.66, 0.34, 180, 360, shell)
    p.rect(0.15, 0.62, 0.85, 0.7, shade(shell, 1.3))
    for x0 in (0.3, 0.5):
        p.poly([(x0, 0.5), (x0 + 0.08, 0.42), (x0 + 0.16, 0.5), (x0 + 0.08, 0.58)], shade(shell, 1.25), width=0.012)
    p.poly([(0.4, 0.43), (0.5, 0.36), (0.6, 0.43), (0.5, 0.5)], shade(shell, 1.25), width=0.012)


def rabbit(p: Pen) -> None:
    fur = (235, 230, 225)
    p.circle(0.18, 0.58, 0.06, WHITE)
    _legs(p, (0.36, 0.58), 0.66, 0.86, 0.05, fur)
    p.ellipse(0.42, 0.62, 0.24, 0.15, fur)
    for x, tilt in ((0.66, -0.04), (0.76, 0.04)):
        p.poly([(x - 0.04, 0.3), (x + tilt - 0.03, 0.06), (x + tilt + 0.03, 0.06), (x + 0.04, 0.3)], fur)
        p.poly([(x - 0.015, 0.28), (x + tilt - 0.01, 0.1), (x + tilt + 0.01, 0.1), (x + 0.015, 0.28)], PINK,
               outline=None)
    p.circle(0.72, 0.4, 0.13, fur)
    _eye(p, 0.76, 0.37, 0.025)
    p.circle(0.84, 0.43, 0.018, PINK, outline=None)


ANIMALS: dict[str, Callable[[Pen], None]] = {
    "cat": cat, "dog": dog, "pig": pig, "cow": cow, "sheep": sheep, "chick": chick, "elephant": elephant,
    "mouse": mouse, "goldfish": goldfish, "monkey": monkey, "tortoise": tortoise, "rabbit": rabbit,
}
