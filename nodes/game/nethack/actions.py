"""BALROG's NetHack action vocabulary: named commands, single letters and digits, each one keypress.

BALROG offers the names the NLE language wrapper gives to NLE's 86 "useful" actions, plus every
single letter and digit (answers to "What do you want to eat? [dgh or ?*]" and menus). NLE
identifies an action by its key code, so a name maps to the code of its key; a letter or digit is
its own key. BALROG also lists the two-digit strings "00".."99", but its wrapper has no key for
them (it raises on them), so they are left out here. An action that is not in the vocabulary is
replaced by ``esc`` (BALROG's default action) and counted invalid.
"""

from __future__ import annotations

import string

DEFAULT_ACTION = "esc"
"""What BALROG plays when the agent's reply is no action of the vocabulary."""

# key code -> BALROG's name (the NLE language wrapper's first name for that action)
NAMED: dict[int, str] = {
    107: "north", 108: "east", 106: "south", 104: "west",
    117: "northeast", 110: "southeast", 98: "southwest", 121: "northwest",
    75: "far north", 76: "far east", 74: "far south", 72: "far west",
    85: "far northeast", 78: "far southeast", 66: "far southwest", 89: "far northwest",
    60: "up", 62: "down", 46: "wait", 13: "more",
    225: "adjust", 97: "apply", 24: "attributes", 67: "call", 90: "cast", 227: "chat", 99: "close",
    228: "dip", 100: "drop", 68: "droptype", 101: "eat", 69: "engrave", 229: "enhance", 27: "esc",
    70: "fight", 102: "fire", 230: "force", 105: "inventory", 73: "inventtype", 233: "invoke",
    234: "jump", 4: "kick", 58: "look", 236: "loot", 237: "monster", 109: "move", 77: "movefar",
    239: "offer", 111: "open", 112: "pay", 44: "pickup", 240: "pray", 80: "puton", 113: "quaff",
    81: "quiver", 114: "read", 82: "remove", 210: "ride", 242: "rub", 103: "rush", 71: "rush2",
    115: "search", 91: "seearmor", 61: "seerings", 40: "seetools", 94: "seetrap", 41: "seeweapon",
    33: "shell", 243: "sit", 120: "swap", 84: "takeoff", 65: "takeoffall", 116: "throw", 212: "tip",
    244: "turnundead", 88: "twoweapon", 245: "untrap", 118: "versionshort", 87: "wear", 119: "wield",
    247: "wipe", 122: "zap", 43: "seespells", 34: "seeamulet", 36: "seegold", 32: "space",
}

SINGLE_KEYS: tuple[str, ...] = tuple(string.ascii_lowercase + string.ascii_uppercase + string.digits)


def vocabulary(useful_codes: list[int]) -> dict[str, int]:
    """The action names in BALROG's order (the useful actions as NLE lists them, then a-z, A-Z,
    0-9) mapped to their key codes. ``useful_codes``: ``nle.nethack.USEFUL_ACTIONS`` as ints."""
    missing = [c for c in useful_codes if c not in NAMED]
    if missing:
        raise ValueError(f"NLE useful actions without a BALROG name: key codes {missing}")
    out = {NAMED[c]: c for c in useful_codes}
    for key in SINGLE_KEYS:
        out.setdefault(key, ord(key))
    return out


DESCRIPTIONS: dict[str, str] = {
    "north": "step one square up the map", "east": "step right", "south": "step down", "west": "step left",
    "northeast": "step diagonally up-right", "southeast": "step diagonally down-right",
    "southwest": "step diagonally down-left", "northwest": "step diagonally up-left",
    "far north": "run up until something interesting", "far east": "run right",
    "far south": "run down", "far west": "run left", "far northeast": "run up-right",
    "far southeast": "run down-right", "far southwest": "run down-left", "far northwest": "run up-left",
    "up": "climb a staircase up (<)", "down": "descend a staircase (>), only when standing on it",
    "wait": "let one turn pass", "more": "show the rest of a message ending in --More--",
    "esc": "leave a menu or prompt", "search": "look for hidden doors and passages",
    "open": "open a door next to you", "close": "close a door next to you", "kick": "kick something",
    "pickup": "pick up what lies here", "eat": "eat something", "look": "describe what is here",
    "apply": "use a tool", "pray": "ask your god for help", "fight": "attack in a direction",
    "inventory": "list what you carry", "wield": "hold a weapon", "wear": "put on armour",
    "throw": "throw an item", "quaff": "drink a potion", "read": "read a scroll or book",
    "zap": "zap a wand", "drop": "drop an item", "engrave": "write in the dust (Elbereth scares monsters)",
}
"""Short help for the common actions, in our words; the prompt lists every name."""
