"""What each kind of object can do and how big it is.

Abilities come from BEHAVIOR's own knowledge base (``bddl.object_taxonomy.ObjectTaxonomy``), so a
synset is openable, cookable or freezable here exactly when BEHAVIOR says so, and a ``sceneObject``
(countertops, fridges, floors) is part of the building and cannot be picked up. The taxonomy holds
no sizes, so sizes are a short table of this project's own plausible measurements keyed by words in
the name, with a default for small items and one for furniture; heaviness follows from size (VAB's
robot refuses things over 128 kg, which here means more than about a cubic metre and a half).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

HEAVY_VOLUME = 1.5  # m^3

# (w, d, h) in metres; the first key that is a word of the lemma (or the whole lemma) wins.
SIZES: dict[str, tuple[float, float, float]] = {
    "electric_refrigerator": (0.85, 0.75, 1.8), "countertop": (1.6, 0.65, 0.9),
    "cabinet": (0.9, 0.5, 0.85), "grocery_shelf": (1.8, 0.5, 1.7), "bookcase": (1.0, 0.35, 1.9),
    "shelf": (1.0, 0.4, 1.6), "oven": (0.75, 0.65, 0.9), "sink": (0.8, 0.55, 0.9),
    "door": (0.9, 0.12, 2.0), "window": (1.2, 0.1, 1.2), "bed": (2.0, 1.6, 0.6),
    "coffee_table": (1.0, 0.6, 0.45), "console_table": (1.2, 0.4, 0.8),
    "breakfast_table": (1.2, 0.8, 0.75), "table": (1.6, 0.9, 0.75), "checkout": (1.8, 0.7, 0.9),
    "shopping_cart": (0.9, 0.55, 1.0), "cash_register": (0.45, 0.4, 0.3),
    "lawn": (3.0, 2.5, 0.03), "driveway": (2.8, 2.2, 0.02), "sofa": (2.0, 0.9, 0.85),
    "armchair": (0.85, 0.85, 0.9), "chair": (0.5, 0.5, 0.9), "desk": (1.3, 0.7, 0.75),
    "toilet": (0.45, 0.7, 0.8), "bathtub": (1.7, 0.75, 0.55), "dishwasher": (0.6, 0.6, 0.85),
    "pot_plant": (0.45, 0.45, 1.0), "wardrobe": (1.2, 0.6, 2.0), "television_receiver": (1.1, 0.3, 0.7),
    "washer": (0.6, 0.6, 0.85), "bench": (1.5, 0.45, 0.45), "tree": (1.2, 1.2, 3.0),
    "plywood": (1.2, 0.6, 0.02), "tile": (0.3, 0.3, 0.01), "turf": (0.6, 0.4, 0.05),
    "barrow": (1.3, 0.6, 0.6), "bicycle": (1.7, 0.5, 1.0), "beer_barrel": (0.45, 0.45, 0.6),
    "compost_bin": (0.5, 0.5, 0.7), "recycling_bin": (0.45, 0.4, 0.65), "ashcan": (0.4, 0.4, 0.6),
    "bucket": (0.3, 0.3, 0.3), "carton": (0.45, 0.35, 0.3), "box": (0.4, 0.3, 0.3),
    "sack": (0.25, 0.18, 0.2), "backpack": (0.4, 0.3, 0.5), "wicker_basket": (0.4, 0.3, 0.25),
    "tray": (0.45, 0.35, 0.03), "cookie_sheet": (0.45, 0.32, 0.02), "chopping_board": (0.4, 0.28, 0.02),
    "pizza_box": (0.4, 0.4, 0.05), "plate": (0.25, 0.25, 0.03), "bowl": (0.18, 0.18, 0.08),
    "tupperware": (0.25, 0.18, 0.1), "frying_pan": (0.45, 0.28, 0.06), "caldron": (0.4, 0.4, 0.35),
    "magazine_rack": (0.4, 0.25, 0.45), "camera_tripod": (0.3, 0.3, 1.2), "air_conditioner": (0.5, 0.4, 0.4),
    "ski": (1.6, 0.1, 0.05), "hockey_stick": (1.4, 0.1, 0.05), "tennis_racket": (0.7, 0.28, 0.04),
    "shovel": (1.1, 0.25, 0.1), "rake": (1.4, 0.4, 0.05), "broom": (1.3, 0.25, 0.08),
    "saw": (0.6, 0.15, 0.04), "hammer": (0.32, 0.12, 0.04), "book": (0.22, 0.16, 0.04),
    "brisket": (0.3, 0.18, 0.08), "lasagna": (0.15, 0.1, 0.06), "carton__of__milk": (0.1, 0.1, 0.25),
    "pumpkin": (0.3, 0.3, 0.25),
    "butternut_squash": (0.12, 0.12, 0.28), "hamburger": (0.12, 0.12, 0.07), "money": (0.15, 0.07, 0.01),
    "kabob": (0.25, 0.04, 0.04), "candle": (0.07, 0.07, 0.12),
    "bottle": (0.08, 0.08, 0.28), "can": (0.07, 0.07, 0.12), "egg": (0.05, 0.05, 0.06),
    "legal_document": (0.22, 0.3, 0.01), "post-it": (0.08, 0.08, 0.01),
}
ITEM_SIZE = (0.1, 0.1, 0.08)
FURNITURE_SIZE = (1.0, 0.6, 0.9)
NARROW_WORDS = ("bottle", "can", "mug", "glass", "jar", "cup")  # fillable with liquid, not with things
CONTAINER_WORDS = ("shelf", "bookcase", "cart", "rack", "bin", "box", "sack", "basket", "backpack", "barrow")


@dataclass(frozen=True)
class Kind:
    """One synset's rules: what the world and the actions need to know about it."""

    synset: str
    category: str  # "beer_bottle"
    size: tuple[float, float, float]
    movable: bool
    heavy: bool
    openable: bool
    container: bool
    attachable: bool
    capabilities: frozenset[str]  # among cooked, frozen, toggled_on, hot, burnt (and open)


@lru_cache(maxsize=1)
def taxonomy() -> Any:
    from bddl.object_taxonomy import ObjectTaxonomy

    return ObjectTaxonomy()


def category_of(synset: str) -> str:
    """``bottle__of__beer.n.01`` -> ``bottle_of_beer``: the name the agent sees on the picture."""
    return synset.split(".")[0].replace("__", "_")


def size_of(lemma: str, furniture: bool) -> tuple[float, float, float]:
    if lemma in SIZES:
        return SIZES[lemma]
    words = lemma.replace("__", "_").split("_")
    for key, size in SIZES.items():
        if key in words or ("_" in key and key in lemma):
            return size
    return FURNITURE_SIZE if furniture else ITEM_SIZE


@lru_cache(maxsize=1024)
def kind(synset: str) -> Kind:
    """The rules for one synset; an unknown synset is refused by activities.load before this."""
    lemma = synset.split(".")[0]
    abilities = set(taxonomy().get_abilities(synset)) if taxonomy().is_valid_synset(synset) else set()
    fixed = "sceneObject" in abilities or lemma in ("floor", "lawn", "driveway")
    size = size_of(lemma, fixed)
    caps = set()
    if "cookable" in abilities:
        caps |= {"cooked", "burnt"}
    if "flammable" in abilities:
        caps.add("burnt")
    if "freezable" in abilities:
        caps.add("frozen")
    if "heatable" in abilities:
        caps.add("hot")
    if "toggleable" in abilities:
        caps.add("toggled_on")
    openable = "openable" in abilities
    if openable:
        caps.add("open")
    narrow = any(w in lemma.split("_") for w in NARROW_WORDS)
    container = openable or any(w in lemma for w in CONTAINER_WORDS) \
        or ("fillable" in abilities and not narrow and size[2] > 0.02)
    w, d, h = size
    return Kind(synset=synset, category=category_of(synset), size=size, movable=not fixed,
                heavy=(not fixed) and w * d * h > HEAVY_VOLUME, openable=openable, container=container,
                attachable="attachable" in abilities, capabilities=frozenset(caps))
