"""TempestRun as played: its rules (``tempest_rules``) drawn by its picture (``tempest_view``).

The picture reads the rules' geometry and state, so the rules cannot also import the picture;
this class joins them, above both.
"""

from __future__ import annotations

import pygame

from nodes.game.vmage.tempest_rules import TempestRules
from nodes.game.vmage.tempest_view import draw_tempest

__all__ = ["TempestRun"]


class TempestRun(TempestRules):
    def draw(self, surface: pygame.Surface) -> None:
        draw_tempest(self, surface)
