"""What a KidGym scene can contain: item categories, their plurals, colours and animal weights.

The names are the words the goal strings and option texts use, so they are kept in one place: a
sprite exists for every name here (``sprites.py`` checks it in its tests), and the text rendering
and the options spell things exactly as listed.
"""

from __future__ import annotations

CATEGORIES: dict[str, tuple[str, ...]] = {
    "animal": ("cat", "dog", "pig", "cow", "sheep", "chick", "elephant", "mouse", "goldfish", "monkey",
               "tortoise", "rabbit"),
    "fruit": ("apple", "banana", "cherry", "grapes", "lemon", "orange", "pear", "strawberry", "watermelon"),
    "food": ("cake", "egg", "hamburger", "pizza", "sushi", "donut", "ice cream", "sandwich"),
    "toy": ("ball", "toy car", "toy train", "teddy bear", "kite", "robot", "rubber duck", "drum"),
}

# The scene a category's items are shown in (the paper: "supermarkets, canteens, and farms").
THEMES: dict[str, str] = {"animal": "farm", "fruit": "shop", "food": "canteen", "toy": "toy_house"}

PLURALS: dict[str, str] = {
    "sheep": "sheep", "mouse": "mice", "goldfish": "goldfish", "cherry": "cherries", "grapes": "bunches of grapes",
    "strawberry": "strawberries", "sushi": "sushi", "ice cream": "ice creams", "toy train": "toy trains",
    "teddy bear": "teddy bears", "rubber duck": "rubber ducks", "toy car": "toy cars", "sandwich": "sandwiches",
}

BASKET_COLORS: tuple[str, ...] = ("blue", "green", "red", "yellow")
KEY_COLORS: tuple[str, ...] = ("blue", "red", "yellow")

# Counting piles are of foods and fruits only: a pile of 1, 2 or 3 of one of these.
COUNTABLE: tuple[str, ...] = ("cake", "egg", "hamburger", "pizza", "sushi", "apple", "lemon", "orange", "strawberry",
                              "watermelon")

# Sorting leans on real-world weight, so only animals whose weights nobody would argue about, heaviest first.
BY_WEIGHT: tuple[str, ...] = ("elephant", "cow", "pig", "sheep", "cat", "chick", "mouse")

# The ten animals whose pictures Filling and Memory Filling cut into quarters.
PICTURE_ANIMALS: tuple[str, ...] = ("cat", "chick", "cow", "dog", "elephant", "goldfish", "monkey", "pig", "sheep",
                                    "tortoise")

QUADRANTS: tuple[str, ...] = ("top-left", "top-right", "bottom-left", "bottom-right")

ROMAN: tuple[str, ...] = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")


def plural(name: str) -> str:
    """The plural the goal and option texts use (``2 cherries``)."""
    return PLURALS.get(name, name + "s")


def category_of(name: str) -> str:
    for category, names in CATEGORIES.items():
        if name in names:
            return category
    raise KeyError(f"{name!r} is in no KidGym category")


def all_items() -> tuple[str, ...]:
    """Every item name, category by category (Memory Decode draws from all of them)."""
    return tuple(name for names in CATEGORIES.values() for name in names)
