"""Word lists and small generators for seeded site content (names, places, prose, dates).

Every function takes the caller's ``random.Random`` so one seed fixes a whole site."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

FIRST = ("Bill", "Anna", "Carlos", "Dana", "Elena", "Frank", "Grace", "Hiro", "Ines", "Jamal", "Kara", "Liam",
         "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera", "Wes", "Yuki", "Zoe")
LAST = ("Smith", "Garcia", "Chen", "Okafor", "Novak", "Rossi", "Kim", "Silva", "Murphy", "Haddad", "Berg",
        "Moreau", "Patel", "Lopez", "Schmidt", "Tanaka", "Walsh", "Ivanova", "Reyes", "Quist")
CITIES = ("Pittsburgh", "Philadelphia", "Boston", "Hartford", "Providence", "Albany", "Newark", "Burlington",
          "Portland", "Buffalo")
ADJECTIVES = ("sturdy", "compact", "vintage", "handmade", "lightweight", "classic", "modern", "durable", "cosy",
              "bright", "quiet", "elegant", "rugged", "practical", "smooth")
FILLER = ("barely used", "works perfectly", "pickup only", "smoke-free home", "minor scratches", "original box",
          "great gift", "moving sale", "like new", "priced to sell", "cash only", "must go this week")
EPOCH = datetime(2023, 3, 1, 9, 0, 0)


def person(rng: random.Random) -> tuple[str, str]:
    """A placeholder person and their fictitious address (VWA scrubbed its data the same way)."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return f"{first} {last}", f"{first.lower()}_{last.lower()}@example.com"


def phone(rng: random.Random) -> str:
    return f"412-555-{rng.randint(0, 9999):04d}"


def sentence(rng: random.Random, subject: str) -> str:
    return f"{rng.choice(ADJECTIVES).capitalize()} {subject}, {rng.choice(FILLER)}."


def paragraph(rng: random.Random, subject: str, sentences: int = 3) -> str:
    return " ".join(sentence(rng, subject) for _ in range(sentences))


def stamp(minutes: int) -> str:
    """A fixed timestamp ``minutes`` after the content's epoch (no wall clock, so content repeats)."""
    return (EPOCH + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M")


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "item"
