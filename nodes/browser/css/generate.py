"""VAB-CSS task instances: one categorical property of one rule corrupted, kept when it shows.

As VAB builds its data set: a random rule's categorical property is changed to another allowed
value of that property, or removed; the page is rendered and the instance is kept only when its
grayscale SSIM to the intact page is below 0.8 (and its distance at least 0.2, which VAB's loader
requires). VAB annotated each difference by hand; here a template per property kind writes it.

Deterministic: the candidates of each project are shuffled by a ``random.Random`` seeded with the
seed and the project's name, and tried in that order until the project's quota is kept, so a run
with a smaller quota yields a prefix of a larger run's instances (the test relies on that).
Only rules whose selectorText is unique in their project are corrupted, so the selector names the
rule to fix without ambiguity.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bs4 import BeautifulSoup

from nodes.browser.css import INSTANCES_PATH, PROJECTS_DIR
from nodes.browser.css.render import Renderer
from nodes.browser.css.rules import Stylesheets, Workspace
from nodes.browser.css.similarity import KEEP_SSIM, MIN_INITIAL_DISTANCE, gray, similarity
from nodes.browser.css.tools import matchable_selector

__all__ = ["CATEGORICAL", "Candidate", "Instance", "apply", "candidates", "describe", "generate", "main",
           "projects"]

SEED = 13
PER_PROJECT = 40

# The categorical properties a corruption may touch, with the values it may set.
CATEGORICAL: dict[str, tuple[str, ...]] = {
    "display": ("block", "inline", "inline-block", "flex", "inline-flex", "grid", "table", "contents", "none"),
    "text-align": ("left", "right", "center", "justify"),
    "flex-direction": ("row", "row-reverse", "column", "column-reverse"),
    "flex-wrap": ("nowrap", "wrap", "wrap-reverse"),
    "justify-content": ("flex-start", "flex-end", "center", "space-between", "space-around", "space-evenly"),
    "align-items": ("flex-start", "flex-end", "center", "stretch", "baseline"),
    "position": ("static", "relative", "absolute", "fixed", "sticky"),
    "float": ("left", "right", "none"),
    "clear": ("none", "left", "right", "both"),
    "visibility": ("visible", "hidden"),
    "overflow": ("visible", "hidden", "auto"),
    "white-space": ("normal", "nowrap", "pre"),
    "font-weight": ("normal", "bold"),
    "font-style": ("normal", "italic"),
    "text-transform": ("none", "uppercase", "lowercase", "capitalize"),
    "text-decoration": ("none", "underline", "line-through"),
    "border-style": ("none", "solid", "dashed", "dotted", "double"),
    "border-collapse": ("collapse", "separate"),
    "box-sizing": ("content-box", "border-box"),
    "list-style-type": ("none", "disc", "decimal", "square"),
}

# How a value reads in a sentence (a value missing here reads as itself).
_WORDS: dict[str, dict[str, str]] = {
    "display": {"block": "a block of its own", "inline": "inline with the text around it",
                "inline-block": "an inline block", "flex": "a flex container that lays its children out in a line",
                "inline-flex": "an inline flex container", "grid": "a grid", "table": "a table",
                "contents": "dissolved into its parent (no box of its own)", "none": "hidden entirely"},
    "flex-direction": {"row": "side by side, left to right", "row-reverse": "side by side, right to left",
                       "column": "stacked top to bottom", "column-reverse": "stacked bottom to top"},
    "flex-wrap": {"nowrap": "on one line", "wrap": "wrapping onto new lines",
                  "wrap-reverse": "wrapping upwards onto new lines"},
    "justify-content": {"flex-start": "packed at the start", "flex-end": "packed at the end", "center": "centred",
                        "space-between": "spread out with the space between them",
                        "space-around": "spread out with space around each",
                        "space-evenly": "spread out with equal gaps"},
    "align-items": {"flex-start": "aligned to the top", "flex-end": "aligned to the bottom",
                    "center": "centred across the line", "stretch": "stretched to the full height",
                    "baseline": "aligned on their text baseline"},
    "text-align": {"left": "left-aligned", "right": "right-aligned", "center": "centred", "justify": "justified"},
    "position": {"static": "in the normal flow", "relative": "positioned relative to its normal place",
                 "absolute": "taken out of the flow and placed absolutely", "fixed": "fixed to the viewport",
                 "sticky": "sticky while scrolling"},
    "float": {"left": "floated to the left", "right": "floated to the right", "none": "not floated"},
    "visibility": {"visible": "visible", "hidden": "invisible (its space stays empty)"},
    "font-weight": {"normal": "in regular weight", "bold": "in bold"},
    "font-style": {"normal": "upright", "italic": "in italics"},
    "text-transform": {"none": "as written", "uppercase": "in capitals", "lowercase": "in lower case",
                       "capitalize": "with capitalised words"},
    "text-decoration": {"none": "without a line", "underline": "underlined", "line-through": "struck through"},
    "overflow": {"visible": "allowed to spill out", "hidden": "clipped to the box", "auto": "scrollable"},
    "white-space": {"normal": "wrapping normally", "nowrap": "kept on one line", "pre": "with its spacing kept"},
}

_TEMPLATES: dict[str, str] = {
    "display": "Fix the display of {el}: it should be {want}, but it is {have}.",
    "flex-direction": "Fix the direction of the items inside {el}: they should sit {want}, but they sit {have}.",
    "flex-wrap": "Fix the wrapping inside {el}: its items should be {want}, but they are {have}.",
    "justify-content": "Fix the spacing of the items inside {el}: they should be {want}, but they are {have}.",
    "align-items": "Fix the cross-axis alignment inside {el}: its items should be {want}, but they are {have}.",
    "text-align": "Fix the text alignment of {el}: it should be {want}, but it is {have}.",
    "position": "Fix the positioning of {el}: it should be {want}, but it is {have}.",
    "float": "Fix the float of {el}: it should be {want}, but it is {have}.",
    "visibility": "Fix the visibility of {el}: it should be {want}, but it is {have}.",
    "font-weight": "Fix the font weight of {el}: its text should be {want}, but it is {have}.",
    "font-style": "Fix the font style of {el}: its text should be {want}, but it is {have}.",
    "text-transform": "Fix the letter case of {el}: its text should be {want}, but it is {have}.",
    "text-decoration": "Fix the text decoration of {el}: it should be {want}, but it is {have}.",
    "border-style": "Fix the border style of {el}: it should be {want}, but it is {have}.",
    "overflow": "Fix the overflow of {el}: its content should be {want}, but it is {have}.",
    "white-space": "Fix the line breaking of {el}: its text should be {want}, but it is {have}.",
}
_GENERIC = "Fix the {prop} of {el}: it should be {want}, but it is {have}."
_REMOVED = "Restore the {prop} of {el}: it should be {want}, but the rule lost its {prop} setting, so the default applies."


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible corruption: ``corrupted`` None means the declaration is removed."""

    project: str
    file: str
    selector: str
    property: str
    original: str
    corrupted: str | None


@dataclass(frozen=True, slots=True)
class Instance:
    """A kept corruption, as written to the instances file."""

    id: str
    project: str
    file: str
    selector: str
    property: str
    original: str
    corrupted: str | None
    action: str  # "change" or "remove"
    initial_distance: float
    description: str


def projects(root: Path = PROJECTS_DIR) -> list[str]:
    """The shipped projects, by name, sorted."""
    return sorted(p.name for p in root.iterdir() if (p / "index.html").is_file())


def candidates(project: str, seed: int = SEED, root: Path = PROJECTS_DIR) -> list[Candidate]:
    """Every corruption of ``project``'s categorical properties, shuffled by the seed."""
    sheets = Stylesheets(root / project)
    refs = sheets.rules()
    counts: dict[str, int] = {}
    for ref in refs:
        counts[ref.selector] = counts.get(ref.selector, 0) + 1
    out: list[Candidate] = []
    for ref in refs:
        if counts[ref.selector] != 1:
            continue
        for prop, value in sheets.read(ref).items():
            if prop not in CATEGORICAL or value not in CATEGORICAL[prop]:
                continue  # unknown or !important values stay out: the fix must be one plain value
            out.append(Candidate(project, ref.file, ref.selector, prop, value, None))
            out.extend(Candidate(project, ref.file, ref.selector, prop, value, v)
                       for v in CATEGORICAL[prop] if v != value)
    random.Random(f"{seed}:{project}").shuffle(out)
    return out


def apply(sheets: Stylesheets, cand: Candidate) -> None:
    """Make the corruption in ``sheets`` (saved to its folder; ``sheets.revert()`` undoes it)."""
    if cand.corrupted is None:
        done = sheets.remove_property(cand.selector, cand.property)
    else:
        done = sheets.set_property(cand.selector, cand.property, cand.corrupted)
    if done is None:
        raise LookupError(f"{cand.selector} {{{cand.property}}} is not in {cand.project}")


def element_phrase(html: str, selector: str) -> str:
    """How a description names the elements a rule styles: their tag, count and a bit of text."""
    soup = BeautifulSoup(html, "html.parser")
    try:
        found = soup.select(matchable_selector(selector))
    except Exception:  # noqa: BLE001 - an odd selector is named as itself
        found = []
    if not found:
        return f'the elements styled by "{selector}"'
    tag = found[0].name
    text = " ".join(found[0].get_text(" ").split())
    sample = f', e.g. "{text[:40]}{"..." if len(text) > 40 else ""}"' if text else ""
    many = f"{len(found)} <{tag}> elements" if len(found) > 1 else f"<{tag}> element"
    return f'the {many} styled by "{selector}"{sample}'


def describe(cand: Candidate, html: str) -> str:
    """The difference, in words, from the property's template."""
    words = _WORDS.get(cand.property, {})
    want = words.get(cand.original, cand.original)
    el = element_phrase(html, cand.selector)
    if cand.corrupted is None:
        return _REMOVED.format(prop=cand.property, el=el, want=want)
    template = _TEMPLATES.get(cand.property, _GENERIC)
    return template.format(el=el, want=want, have=words.get(cand.corrupted, cand.corrupted), prop=cand.property)


async def generate(per_project: int = PER_PROJECT, seed: int = SEED, names: list[str] | None = None,
                   root: Path = PROJECTS_DIR, renderer: Renderer | None = None,
                   log: bool = False) -> list[Instance]:
    """Try each project's candidates in seeded order; keep the first ``per_project`` that show."""
    own = renderer is None
    renderer = renderer or Renderer()
    kept: list[Instance] = []
    try:
        for name in names or projects(root):
            with tempfile.TemporaryDirectory() as tmp:
                ws = Workspace.create(root / name, Path(tmp) / name)
                target = await renderer.screenshot(ws.folder)
                target_gray = gray(target)
                tried = 0
                count = 0
                for cand in candidates(name, seed, root):
                    if count >= per_project:
                        break
                    tried += 1
                    apply(ws, cand)
                    shot = await renderer.screenshot(ws.folder)
                    # The same bytes are the same pixels: SSIM 1 without computing it (a no-op edit).
                    score = 1.0 if shot == target else similarity(target_gray, shot)
                    ws.revert()
                    if score >= KEEP_SSIM or 1.0 - score < MIN_INITIAL_DISTANCE:
                        continue
                    count += 1
                    kept.append(Instance(
                        f"{name}-{count:03d}", name, cand.file, cand.selector, cand.property, cand.original,
                        cand.corrupted, "remove" if cand.corrupted is None else "change",
                        round(1.0 - score, 4), describe(cand, ws.html)))
                if log:
                    print(f"{name}: kept {count} of {tried} tried", flush=True)
    finally:
        if own:
            await renderer.close()
    return kept


def to_json(instances: list[Instance], per_project: int, seed: int) -> str:
    body = {"seed": seed, "per_project": per_project, "keep_ssim_below": KEEP_SSIM,
            "min_initial_distance": MIN_INITIAL_DISTANCE, "instances": [asdict(i) for i in instances]}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def load(path: Path = INSTANCES_PATH) -> list[Instance]:
    """The instances of a generated file."""
    return [Instance(**row) for row in json.loads(path.read_text(encoding="utf-8"))["instances"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.browser.css generate", description=__doc__.split("\n")[0])
    parser.add_argument("--per-project", type=int, default=PER_PROJECT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--project", action="append", help="only these projects (repeatable)")
    parser.add_argument("--out", type=Path, default=INSTANCES_PATH)
    args = parser.parse_args(argv)
    start = time.monotonic()
    kept = asyncio.run(generate(args.per_project, args.seed, args.project, log=True))
    args.out.write_text(to_json(kept, args.per_project, args.seed), encoding="utf-8")
    print(f"{len(kept)} instances written to {args.out} in {time.monotonic() - start:.0f} s")
    return 0
