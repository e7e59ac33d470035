"""The grid rover's protocol, shared by the simulated device (``robot``) and the environment node
(``robot_env``): the action names, headings and moves, a text rendering, and a shortest-plan search
over the state the rover reports. Pure functions, no I/O, so both sides agree by construction.

The rover lives on a ``size`` x ``size`` grid; x grows to the east, y to the south (row 0 is the
top row of the rendering). It faces N, E, S or W. ``forward`` moves one cell ahead unless a wall or
a rock is there (a bump); ``left``/``right`` turn in place; each of those three costs one unit of
battery. ``stop`` does nothing and costs nothing.

State (what the device publishes on ``<prefix>/state``, JSON)::

    {"episode": "ep00000", "t": 3, "size": 7, "x": 2, "y": 5, "heading": "N", "goal": [4, 1],
     "rocks": [[3, 3], ...], "battery": 21, "bumps": 0, "last": "forward", "reached": false, "done": false}
"""

from __future__ import annotations

from collections import deque
from typing import Any, Mapping

ACTIONS = ("forward", "left", "right", "stop")
IDLE = "stop"
HEADINGS = ("N", "E", "S", "W")
DELTA = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
ARROWS = {"N": "^", "E": ">", "S": "v", "W": "<"}


def turn(heading: str, action: str) -> str:
    step = {"left": -1, "right": 1}.get(action, 0)
    return HEADINGS[(HEADINGS.index(heading) + step) % 4]


def ahead(x: int, y: int, heading: str) -> tuple[int, int]:
    dx, dy = DELTA[heading]
    return x + dx, y + dy


def free(cell: tuple[int, int], size: int, rocks: set[tuple[int, int]]) -> bool:
    x, y = cell
    return 0 <= x < size and 0 <= y < size and cell not in rocks


def rocks_of(state: Mapping[str, Any]) -> set[tuple[int, int]]:
    return {(int(r[0]), int(r[1])) for r in state.get("rocks") or ()}


def shortest_plan(state: Mapping[str, Any]) -> list[str] | None:
    """The fewest forward/left/right actions from the reported pose to the goal (breadth-first over
    position and heading); [] at the goal, None when rocks wall the goal off."""
    size, rocks = int(state["size"]), rocks_of(state)
    goal = (int(state["goal"][0]), int(state["goal"][1]))
    start = (int(state["x"]), int(state["y"]), str(state["heading"]))
    came: dict[tuple[int, int, str], tuple[tuple[int, int, str], str] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        x, y, heading = node
        if (x, y) == goal:
            plan: list[str] = []
            while came[node] is not None:
                node, action = came[node]  # type: ignore[misc]
                plan.append(action)
            return plan[::-1]
        for action in ("forward", "left", "right"):
            if action == "forward":
                nx, ny = ahead(x, y, heading)
                if not free((nx, ny), size, rocks):
                    continue
                nxt = (nx, ny, heading)
            else:
                nxt = (x, y, turn(heading, action))
            if nxt not in came:
                came[nxt] = (node, action)
                queue.append(nxt)
    return None


def render(state: Mapping[str, Any]) -> str:
    """The grid as text: ``#`` rock, ``G`` goal, an arrow for the rover, ``.`` free ground."""
    size, rocks = int(state["size"]), rocks_of(state)
    goal = (int(state["goal"][0]), int(state["goal"][1]))
    rows = []
    for y in range(size):
        row = []
        for x in range(size):
            if (x, y) == (state["x"], state["y"]):
                row.append(ARROWS[state["heading"]])
            elif (x, y) == goal:
                row.append("G")
            else:
                row.append("#" if (x, y) in rocks else ".")
        rows.append(" ".join(row))
    return "\n".join(rows)
