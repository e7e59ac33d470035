"""SuperMario as played: its rules (``mario_rules``), drawn by its picture (``mario_view``) and
played by its planner (``mario_policy``).

The picture and the planner read the rules' geometry and state (the planner plays copies of the
game on), so the rules cannot also import them; this class joins the three, above them all.
"""

from __future__ import annotations

import pygame

from nodes.game.vmage.mario_policy import scripted
from nodes.game.vmage.mario_rules import MarioRules
from nodes.game.vmage.mario_view import draw_mario

__all__ = ["SuperMario"]


class SuperMario(MarioRules):
    def draw(self, surface: pygame.Surface) -> None:
        draw_mario(self, surface)

    def policy(self) -> str:
        """The scripted planner's action (``mario_policy``): the baseline a model should beat."""
        return scripted(self)
