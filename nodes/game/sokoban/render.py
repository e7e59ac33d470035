"""Pictures and text of a Sokoban position: what the models see.

MageBench's prompt names the sprites ("green character", "yellow box", a target is "an area with a
red dot in the center", "the red brick pattern is the wall"), so the tiles are drawn to match those
words: 16 px tiles, as gym-sokoban renders, painted here with numpy (no image assets), and the frame
resized with Lanczos so its long edge is 640 px, as MageBench's scripts do.

Text-only models get the XSB grid with a legend instead.
"""

from __future__ import annotations

import numpy as np

from nodes.game.sokoban.levels import Level

TILE = 16
WALL, FLOOR, TARGET, BOX_ON_TARGET, BOX, PLAYER, PLAYER_ON_TARGET = range(7)
LEGEND = "Legend: # wall, @ you (the player), + you on a target, $ box, * box on a target, . target, space floor."

_FLOOR_RGB = (38, 38, 44)
_RED_DOT = (225, 35, 35)


def _disc(radius: float, fill: tuple[int, int, int], canvas: np.ndarray, cy: float = 7.5, cx: float = 7.5) -> None:
    yy, xx = np.mgrid[0:TILE, 0:TILE]
    canvas[(yy - cy) ** 2 + (xx - cx) ** 2 <= radius ** 2] = fill


def _floor() -> np.ndarray:
    t = np.empty((TILE, TILE, 3), np.uint8)
    t[:] = _FLOOR_RGB
    t[0, :] = t[:, 0] = (48, 48, 56)  # a faint grid, so squares can be counted
    return t


def _wall() -> np.ndarray:
    t = np.empty((TILE, TILE, 3), np.uint8)
    t[:] = (150, 140, 128)  # mortar
    for row in range(4):
        y0 = row * 4
        shift = 0 if row % 2 == 0 else 4
        for x0 in range(-shift, TILE, 8):
            xa, xb = max(0, x0 + 1), min(TILE, x0 + 8)
            if xb > xa:
                t[y0 + 1:y0 + 4, xa:xb] = (168, 48, 36) if (row + x0 // 8) % 2 else (150, 40, 30)
    return t


def _target() -> np.ndarray:
    t = _floor()
    _disc(3.0, _RED_DOT, t)
    return t


def _box(on_target: bool) -> np.ndarray:
    t = _floor()
    t[1:15, 1:15] = (120, 88, 16)  # dark edge
    t[2:14, 2:14] = (236, 196, 40) if not on_target else (250, 220, 90)
    for i in range(3, 13):  # the crate's cross braces
        t[i, i] = t[i, 15 - i] = (176, 132, 24)
    if on_target:
        _disc(2.2, _RED_DOT, t)
    return t


def _player(on_target: bool) -> np.ndarray:
    t = _target() if on_target else _floor()
    green, dark = (40, 200, 70), (20, 110, 40)
    _disc(2.6, green, t, cy=3.5, cx=7.5)  # head
    t[7:11, 4:12] = green  # body
    t[7:9, 2:4] = t[7:9, 12:14] = green  # arms
    t[11:15, 5:7] = t[11:15, 9:11] = dark  # legs
    return t


TILES = np.stack([_wall(), _floor(), _target(), _box(True), _box(False), _player(False), _player(True)])


def codes(level: Level, boxes: set[int] | frozenset[int], player: int) -> np.ndarray:
    """The position as an H x W array of tile codes. Cells outside the player's room are drawn as
    wall, as in gym-sokoban, where every room sits in solid wall."""
    grid = np.full(level.width * level.height, WALL, np.uint8)
    grid[level.room_cells] = FLOOR
    for t in level.targets:
        grid[t] = TARGET
    for b in boxes:
        grid[b] = BOX_ON_TARGET if b in level.targets else BOX
    grid[player] = PLAYER_ON_TARGET if player in level.targets else PLAYER
    return grid.reshape(level.height, level.width)


def frame(level: Level, boxes: set[int] | frozenset[int], player: int, resolution: int = 640) -> np.ndarray:
    """The RGB frame (uint8, H x W x 3) with its long edge ``resolution`` px (0: native 16 px tiles)."""
    grid = codes(level, boxes, player)
    h, w = grid.shape
    img = TILES[grid].transpose(0, 2, 1, 3, 4).reshape(h * TILE, w * TILE, 3)
    if not resolution or max(img.shape[:2]) == resolution:
        return img
    from PIL import Image

    scale = resolution / max(h, w) / TILE
    size = (max(1, round(w * TILE * scale)), max(1, round(h * TILE * scale)))
    out = Image.fromarray(img).resize(size, Image.Resampling.LANCZOS)
    # frombuffer: np.asarray on a PIL image takes a slow path that costs more than the resize
    return np.frombuffer(out.tobytes(), np.uint8).reshape(size[1], size[0], 3)


def text(level: Level, boxes: set[int] | frozenset[int], player: int) -> str:
    """The position as an XSB grid (full-width rows, so columns line up) and a legend."""
    chars = list(level.background)
    targets = level.targets
    for b in boxes:
        chars[b] = "*" if b in targets else "$"
    chars[player] = "+" if player in targets else "@"
    w = level.width
    return "\n".join("".join(chars[i:i + w]) for i in range(0, len(chars), w)) + "\n" + LEGEND

