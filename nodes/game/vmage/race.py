"""Race as played: its rules (``race_rules``) drawn by its picture (``race_view``).

The picture reads the rules' geometry and state, so the rules cannot also import the picture;
this class joins them, above both.
"""

from __future__ import annotations

import pygame

from nodes.game.vmage.race_rules import RaceRules
from nodes.game.vmage.race_view import draw

__all__ = ["Race"]


class Race(RaceRules):
    def draw(self, surface: pygame.Surface) -> None:
        draw(self, surface)
