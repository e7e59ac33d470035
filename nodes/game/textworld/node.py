"""The TextWorld environment node (``textworld.env``): BALROG's three text games.

Episode ``i`` plays task ``tasks[i % len(tasks)]`` on game ``(i // len(tasks)) % games``; game ``k``
of a task is generated locally from seed ``first_seed + k`` (``games.make_game``, cached). The agent
reads the game's text with the objective cut out of it (BALROG's ``filter_objective``: the goal
travels in ``goal``), and may type any command: as in BALROG, every command is sent to the game
(``actions`` lists the game's admissible commands, for agents that pick from a list); no command at
all plays ``help``, BALROG's default. The episode ends when the game is won or lost, or at 80 steps
(BALROG's cap). Each step's ``info`` carries score, max_score and won, from which the judge
computes BALROG's progression (the score fraction, 1 for a win).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.textworld import games
from nodes.game.textworld.tasks import DEFAULT_ACTION, MAX_STEPS, TASKS, get_task, progression

MAX_COMMAND = 200  # characters; a longer "command" is a model's essay, not a command


def filter_objective(text: str, objective: str) -> str:
    """The game's text after the objective (BALROG cuts it out: the goal is given on its own)."""
    parts = text.split(objective) if objective else [text]
    return parts[-1].strip()


def import_textworld() -> Any:
    try:
        import textworld
    except ImportError as exc:
        raise RuntimeError("textworld.env needs the textworld package: `pip install -e '.[worlds]'` "
                           "(textworld==1.7.0)") from exc
    return textworld


class TextWorldEnv(EnvNode):
    """Publishes the game's text each decision and ``step`` after each command."""

    class Params(EnvParams):
        tasks: list[str] = Field(default_factory=lambda: list(TASKS), description="BALROG tasks played in turn: "
                                 + ", ".join(TASKS))
        games: int = Field(10, gt=0, description="distinct games per task (BALROG's set has several per task)")
        first_seed: int = Field(0, ge=0, description="game k of a task is generated from seed first_seed + k")
        cache: str | None = Field(None, description="folder of generated games (default ~/.cache/framebus/textworld)")
        max_steps: int | None = Field(MAX_STEPS, gt=0, description="commands per episode (BALROG: 80)")

        @field_validator("tasks")
        @classmethod
        def _known(cls, v: list[str]) -> list[str]:
            if not v:
                raise ValueError("textworld.env param tasks: give at least one of " + ", ".join(TASKS))
            for name in v:
                get_task(name)
            return v

    env = "textworld"
    params: Params

    async def setup(self) -> None:
        self.tw = import_textworld()
        self.cache = Path(self.params.cache).expanduser() if self.params.cache else games.DEFAULT_CACHE
        self.infos = self.tw.EnvInfos(objective=True, description=True, score=True, max_score=True, won=True,
                                      lost=True, admissible_commands=True)
        self.game: Any = None
        self.state: Any = None
        self.text = ""
        self.task = self.params.tasks[0]
        self.game_seed = self.params.first_seed

    async def reset(self, episode: Episode) -> None:
        p = self.params
        self.task = p.tasks[episode.index % len(p.tasks)]
        self.game_seed = p.first_seed + (episode.index // len(p.tasks)) % p.games
        path = await asyncio.to_thread(games.make_game, self.task, self.game_seed, self.cache)
        if self.game is not None:
            self.game.close()
        self.game = self.tw.start(str(path), request_infos=self.infos)
        self.state = await asyncio.to_thread(self.game.reset)
        self.text = filter_objective(self.state.feedback, self.state.objective)
        self.score = 0.0

    def observe(self) -> Observation:
        s = self.state
        return {"actions": sorted(s.admissible_commands or []), "idle": None, "goal": s.objective,
                "text": self.text, "task": self.task, "instructions": get_task(self.task).help,
                "score": float(s.score), "max_score": float(s.max_score)}

    def check_action(self, body: Any, obs: Observation) -> bool:
        """Any command, as BALROG sends every reply to the game: a non-empty line of text."""
        return isinstance(body, str) and 0 < len(body.strip()) <= MAX_COMMAND and "\n" not in body.strip()

    async def step(self, action: str | None) -> StepResult:
        command = action.strip() if action else DEFAULT_ACTION
        self.state, score, done = await asyncio.to_thread(self.game.step, command)
        self.text = filter_objective(self.state.feedback, self.state.objective)
        reward, self.score = float(score) - self.score, float(score)
        return StepResult(reward, bool(done), self._info(command))

    def _info(self, command: str) -> dict[str, Any]:
        s = self.state
        won, max_score = bool(s.won), float(s.max_score)
        return {"task": self.task, "game_seed": self.game_seed, "command": command, "score": float(s.score),
                "max_score": max_score, "won": won, "lost": bool(s.lost),
                "progression": progression(float(s.score), max_score, won)}

    def metrics(self, last: Any) -> dict[str, Any]:
        info = last["info"]
        return {"progression": float(info.get("progression", 0.0)), "success": float(bool(info.get("won"))),
                "task": self.task}

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": None, "idle": None, "tasks": list(self.params.tasks),
                "games": self.params.games, "max_steps": self.params.max_steps, "default_action": DEFAULT_ACTION}

    async def teardown(self) -> None:
        if self.game is not None:
            self.game.close()
