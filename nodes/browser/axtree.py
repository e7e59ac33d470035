"""The accessibility-tree text observation, WebArena's way (spec §2.2): Chromium's own tree through
CDP, one ``[id] role 'name' props`` line per node, a tab of indent per level, pruned and limited to
what the viewport shows.

``fetch`` asks the browser (two CDP calls: the full AX tree and a DOM snapshot for the boxes);
``render`` is plain Python over their replies, so the pruning rules are tested without a browser.
The ids are CDP's AX node ids, which stay stable while the page does; an action names one and is
executed as a click at the centre of its node's visible box.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AxPage", "IGNORED_PROPERTIES", "fetch", "node_bounds", "render"]

IGNORED_PROPERTIES = frozenset({"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"})
EMPTY_DROPPED_ROLES = frozenset({"generic", "img", "image", "list"})  # printed only when named (Chromium: image)
SKIPPED_ROLES = frozenset({"InlineTextBox", "none"})
REPEAT_WINDOW = 3  # a StaticText line whose text is in one of the previous 3 lines is dropped

Box = tuple[float, float, float, float]  # x, y, width, height in document pixels


@dataclass(slots=True)
class AxPage:
    text: str = ""
    centers: dict[int, tuple[float, float]] = field(default_factory=dict)


async def fetch(cdp: Any) -> tuple[list[dict[str, Any]], dict[int, Box], tuple[float, float]]:
    """The AX nodes, the layout box of each DOM node (by backend id) and the scroll offset."""
    tree = await cdp.send("Accessibility.getFullAXTree", {})
    snap = await cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
    return tree.get("nodes", []), node_bounds(snap), _scroll(snap)


def node_bounds(snapshot: dict[str, Any]) -> dict[int, Box]:
    """Backend DOM node id -> its layout box, from a ``DOMSnapshot.captureSnapshot`` reply (main
    document only: frames are not part of the observation, as in VWA)."""
    docs = snapshot.get("documents") or []
    if not docs:
        return {}
    doc = docs[0]
    backend = doc["nodes"].get("backendNodeId", [])
    layout = doc.get("layout", {})
    out: dict[int, Box] = {}
    for index, bounds in zip(layout.get("nodeIndex", []), layout.get("bounds", [])):
        if index < len(backend) and len(bounds) == 4:
            box = tuple(float(v) for v in bounds)
            previous = out.get(backend[index])
            out[backend[index]] = box if previous is None else _union(previous, box)  # type: ignore[arg-type]
    return out


def _union(a: Box, b: Box) -> Box:
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return (x0, y0, x1 - x0, y1 - y0)


def _scroll(snapshot: dict[str, Any]) -> tuple[float, float]:
    docs = snapshot.get("documents") or [{}]
    return float(docs[0].get("scrollOffsetX", 0.0)), float(docs[0].get("scrollOffsetY", 0.0))


def _value(field_: Any) -> Any:
    return field_.get("value") if isinstance(field_, dict) else None


def render(nodes: list[dict[str, Any]], bounds: dict[int, Box], scroll: tuple[float, float],
           viewport: tuple[int, int]) -> AxPage:
    """The tree text of the part of the page inside ``viewport`` (width, height) at ``scroll``."""
    page = AxPage()
    if not nodes:
        return page
    by_id = {str(n["nodeId"]): n for n in nodes}
    root = next((n for n in nodes if not n.get("parentId")), nodes[0])
    sx, sy = scroll
    vw, vh = viewport
    lines: list[str] = []

    def visible_center(node: dict[str, Any]) -> tuple[float, float] | None | bool:
        """The viewport point of the node's visible box; None without a box; False when its box is
        outside the viewport or empty."""
        box = bounds.get(node.get("backendDOMNodeId", -1))
        if box is None:
            return None
        x0, y0 = max(box[0] - sx, 0.0), max(box[1] - sy, 0.0)
        x1, y1 = min(box[0] + box[2] - sx, float(vw)), min(box[1] + box[3] - sy, float(vh))
        if x1 <= x0 or y1 <= y0:
            return False
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    def line_of(node: dict[str, Any]) -> str | None:
        if node.get("ignored"):
            return None
        role = str(_value(node.get("role")) or "")
        name = str(_value(node.get("name")) or "").strip()
        if role in SKIPPED_ROLES or (role in EMPTY_DROPPED_ROLES and not name):
            return None
        if role == "StaticText" and (not name or any(name in prev for prev in lines[-REPEAT_WINDOW:])):
            return None
        props = []
        for prop in node.get("properties") or []:
            if prop.get("name") in IGNORED_PROPERTIES:
                continue
            value = _value(prop.get("value"))
            if value not in (None, ""):
                props.append(f"{prop['name']}: {value}")
        return " ".join([role, repr(name), *props])

    stack: list[tuple[dict[str, Any], int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        child_depth = depth
        where = visible_center(node) if node is not root else None
        if where is not False and (where is not None or node is root) and (text := line_of(node)) is not None:
            node_id = str(node["nodeId"])
            if node_id.lstrip("-").isdigit():
                lines.append(f"{chr(9) * depth}[{node_id}] {text}")
                if isinstance(where, tuple):
                    page.centers[int(node_id)] = where
                child_depth = depth + 1
        children = [by_id[c] for c in node.get("childIds") or [] if c in by_id]
        stack.extend((c, child_depth) for c in reversed(children))
    page.text = "\n".join(lines)
    return page
