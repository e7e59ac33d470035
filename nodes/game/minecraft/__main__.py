"""Command line of the Minecraft pack: ``python -m nodes.game.minecraft look_up ITEM`` prints what the
agent's ``look_up`` action returns, so a person can check an answer without starting a world."""

from __future__ import annotations

import argparse
import sys

from nodes.game.minecraft.lookup import UnknownItem, describe
from nodes.game.minecraft.mcdata import McDataMissing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.game.minecraft",
                                     description="Minecraft 1.16.5 facts, as VAB-Minecraft's agent sees them.")
    sub = parser.add_subparsers(dest="command", required=True)
    look = sub.add_parser("look_up", help="how to get an item or what a tag holds (the agent's look_up)")
    look.add_argument("item", help="an item or tag name, e.g. stone_pickaxe, planks, minecraft:iron_ingot")
    args = parser.parse_args(argv)
    try:
        print(describe(args.item))
    except UnknownItem as e:
        print(e, file=sys.stderr)
        return 2
    except McDataMissing as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
