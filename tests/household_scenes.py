"""Hand-built households for the household pack's tests: small, explicit, no rules involved."""

from __future__ import annotations

from nodes.game.household.model import Agent, Box, Household, Room, Thing


def kitchen(heading: int = 1, camera: int = 1, cabinet_open: bool = False, fridge_open: bool = False,
            x: float = 3.0, y: float = 1.2) -> Household:
    """A 6 x 5 m kitchen (a living room east of it): a countertop with four beer bottles on the
    north wall, a fridge beside it, a cabinet on the west wall with a bowl inside, a table in the
    middle with a basket under it. The agent stands in the south half facing north (heading 1)."""
    rooms = {"kitchen_0": Room("kitchen_0", "kitchen", 0.0, 0.0, 6.0, 5.0),
             "living_room_0": Room("living_room_0", "living_room", 6.0, 0.0, 11.0, 5.0)}
    things = [
        Thing("floor:kitchen_0", "floor", "kitchen_0", Box(3.0, 2.5, 0.0, 6.0, 5.0, 0.0)),
        Thing("countertop.n.01_1", "countertop", "kitchen_0", Box(2.4, 4.65, 0.0, 2.8, 0.7, 0.9), id=5),
        Thing("electric_refrigerator.n.01_1", "electric_refrigerator", "kitchen_0",
              Box(4.5, 4.6, 0.0, 0.9, 0.8, 1.8), id=6, openable=True, is_open=fridge_open,
              capabilities=frozenset({"open"})),
        Thing("cabinet.n.01_1", "cabinet", "kitchen_0", Box(0.35, 2.6, 0.0, 0.7, 1.4, 0.9), id=7,
              openable=True, is_open=cabinet_open, capabilities=frozenset({"open"})),
        Thing("bowl.n.01_1", "bowl", "kitchen_0", Box(0.35, 2.6, 0.03, 0.3, 0.3, 0.14), id=8, movable=True,
              relation=("inside", "cabinet.n.01_1")),
        Thing("breakfast_table.n.01_1", "breakfast_table", "kitchen_0", Box(3.2, 2.6, 0.0, 1.4, 0.9, 0.75), id=9),
        Thing("basket.n.01_1", "basket", "kitchen_0", Box(3.3, 2.6, 0.0, 0.45, 0.35, 0.3), id=10, movable=True,
              relation=("under", "breakfast_table.n.01_1")),
        Thing("milk.n.01_1", "milk", "kitchen_0", Box(4.4, 4.55, 0.85, 0.1, 0.1, 0.25), id=11, movable=True,
              relation=("inside", "electric_refrigerator.n.01_1")),
        Thing("apple.n.01_1", "apple", "kitchen_0", Box(4.65, 4.45, 0.45, 0.09, 0.09, 0.09), id=12, movable=True,
              relation=("inside", "electric_refrigerator.n.01_1")),
        Thing("scenery:stove_0", "stove", "kitchen_0", Box(5.6, 2.4, 0.0, 0.7, 0.7, 0.9)),
    ]
    for k, bx in enumerate((1.5, 1.8, 2.1, 2.4)):
        things.append(Thing(f"beer_bottle.n.01_{k + 1}", "beer_bottle", "kitchen_0",
                            Box(bx, 4.6, 0.9, 0.08, 0.08, 0.26), id=k + 1, movable=True,
                            relation=("ontop", "countertop.n.01_1")))
    return Household("putting_beer_in_fridge", "Rs_int", 0, rooms, {t.name: t for t in things},
                     Agent("kitchen_0", x, y, heading=heading, camera=camera))


def labelled_names(hh: Household) -> list[str]:
    return [t.name for t in hh.labelled()]
