"""The NetHack environment node (``nethack.env``): NLE's NetHackChallenge as BALROG plays it, and
BALROG's MiniHack tasks (``task: MiniHack-...``; nodes/game/nethack/minihack.py) on the same views.

Each decision the agent gets BALROG's text view (``language.render``: ``hybrid`` without frames,
``language`` beside the terminal picture when ``frames`` is on) and the named action vocabulary
(``actions.vocabulary``). A ``--More--`` is paged through at once, the pages' messages joined
(BALROG's ``skip_more``). No action, or an action outside the vocabulary (counted invalid by the
base), plays ``esc``, BALROG's default action. The episode ends when the game does: death,
NLE's step cap (``max_episode_steps``), or ``no_progress_timeout`` steps without the game's clock
moving (these two are ``truncated``), or at the node's ``max_steps``. Each step's ``info`` carries
depth, experience level and BALROG's progression so far; the judge (``nethack.judge``) scores it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import numpy as np
from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.nethack import language, minihack, tty_image
from nodes.game.nethack.actions import DEFAULT_ACTION, NAMED, vocabulary
from nodes.game.nethack.progress import Progress

OBS_KEYS = ("glyphs", "blstats", "tty_chars", "tty_colors", "tty_cursor", "inv_strs", "inv_letters",
            "screen_descriptions")
MORE = 13
GOAL = ("Get as far as you can in NetHack: descend the dungeon and gain experience levels "
        "(BALROG's progression).")


def import_nle() -> Any:
    """NLE's gymnasium module, with a clear message where it is missing."""
    try:
        import gymnasium
        import nle  # noqa: F401  (registers NetHack*-v0)
    except ImportError as exc:
        raise RuntimeError("nethack.env needs the nle package: run `bash setup.sh` (it installs nle==1.3.0 "
                           "with --no-deps) or `pip install --no-deps nle==1.3.0`") from exc
    return gymnasium


def normalize(reply: str) -> str:
    """A reply as an action name: surrounding whitespace, quotes and backticks dropped (case kept:
    'a' and 'A' are different keys)."""
    return reply.strip().strip("`'\"").strip()


def _copy(obs: dict[str, Any]) -> dict[str, Any]:
    return {k: np.array(v) for k, v in obs.items()}


class NetHackEnv(EnvNode):
    """Publishes BALROG's NetHack view each decision and ``step`` after each action."""

    class Params(EnvParams):
        task: str = Field("NetHackChallenge-v0", description="the NLE env id (BALROG plays NetHackChallenge-v0), "
                          "or a MiniHack id (BALROG's: " + ", ".join(minihack.BALROG_TASKS) + ")")
        character: str = Field("@", description="role-race-gender-alignment, '@' for random (BALROG: '@')")
        max_episode_steps: int | None = Field(None, gt=0, description="NLE's own step cap (default BALROG's: "
                                              "100000 for NetHack, 100 for MiniHack)")
        no_progress_timeout: int = Field(150, gt=0, description="NetHack: NLE ends a game whose clock has not moved "
                                                                 "for this many steps (BALROG: 150)")
        skip_more: bool = Field(True, description="page through --More-- at once, joining the messages (BALROG)")
        prompt_mode: Literal["auto", "hybrid", "language"] = Field(
            "auto", description="the text view: hybrid (with the ASCII map), language (statistics instead; "
                                "BALROG's with images); auto: language when frames are on")

    env = "nethack"
    params: Params

    async def setup(self) -> None:
        gym = import_nle()
        from nle import nethack

        p = self.params
        self.minihack = minihack.is_minihack(p.task)
        self.seeded = True  # until the env refuses seeds (NetHackChallenge)
        common = {"character": p.character, "observation_keys": OBS_KEYS,
                  "disable_env_checker": True}  # NLE reuses its buffers, which the checker warns about
        if self.minihack:
            try:
                import minihack as _registers  # noqa: F401  (registers MiniHack-*)
            except ImportError as exc:
                raise RuntimeError("nethack.env: MiniHack tasks need the minihack package: run `bash setup.sh` "
                                   "(it installs minihack==1.0.2 with --no-deps)") from exc
            self._known(gym, p.task, "MiniHack-")
            try:
                self.game = gym.make(p.task, max_episode_steps=p.max_episode_steps or minihack.MAX_EPISODE_STEPS,
                                     **minihack.MAKE_KWARGS, **common)
            except ModuleNotFoundError as exc:  # Boxoban: its levels are a download
                raise ValueError(f"nethack.env param task: {p.task} cannot start here: {exc}") from None
            self.default_action = minihack.DEFAULT_ACTION
        else:
            self._known(gym, p.task, "NetHack")
            self.game = gym.make(p.task, max_episode_steps=p.max_episode_steps or 100_000,
                                 no_progress_timeout=p.no_progress_timeout, **common)
            self.default_action = DEFAULT_ACTION
        codes = [int(a) for a in self.game.unwrapped.actions]
        self.index_of = {code: i for i, code in enumerate(codes)}
        self.vocab = {name: code for name, code in vocabulary([int(a) for a in nethack.USEFUL_ACTIONS]).items()
                      if code in self.index_of}
        if self.minihack:  # BALROG's MiniHack list, in the order of the task's own action set
            self.vocab = {NAMED[c]: c for c in self.index_of if NAMED.get(c) in minihack.ACTION_NAMES}
        self.names = list(self.vocab)
        self.mode: language.Mode = ("language" if p.frames else "hybrid") if p.prompt_mode == "auto" \
            else p.prompt_mode
        self.obs: dict[str, Any] = {}
        self.progress = Progress()
        self.episode_return = 0.0
        self.last_reward = 0.0
        self.text_message = ""

    @staticmethod
    def _known(gym: Any, task: str, prefix: str) -> None:
        if task not in gym.registry:
            known = sorted(k for k in gym.registry if k.startswith(prefix))
            raise ValueError(f"nethack.env param task: unknown env {task!r}; known: {', '.join(known[:40])}"
                             + (" ..." if len(known) > 40 else ""))

    async def reset(self, episode: Episode) -> None:
        obs, _ = await asyncio.to_thread(self._reset, int(episode.seed) % 2**32)
        self.obs, self.progress, self.episode_return, self.last_reward = _copy(obs), Progress(), 0.0, 0.0
        self.text_message = language.message(obs["tty_chars"])
        self.progress.update(int(obs["blstats"][language.DEPTH]), int(obs["blstats"][language.XL]))

    def _reset(self, seed: int) -> Any:
        """NLE's ``reset(seed=)`` seeds only Gymnasium's generator, not NetHack's: its own seeds are set
        first where the env allows it (MiniHack), so an episode's seed replays its game. NetHackChallenge
        refuses seeds by its rules (as in BALROG): there every game is a fresh one."""
        if self.seeded:
            try:
                self.game.unwrapped.seed(core=seed, disp=seed, reseed=False)
            except RuntimeError as exc:  # "NetHackChallenge doesn't allow seed changes"
                self.seeded = False
                self.log.info("this env takes no seeds: its games do not replay from the episode seed",
                              task=self.params.task, why=str(exc))
        return self.game.reset(seed=seed)

    def observe(self) -> Observation:
        view = {**self.obs, "text_message": self.text_message}
        b = self.obs["blstats"]
        extra = {"template": "minihack", "task": self.params.task} if self.minihack else {}
        return {**extra, "actions": list(self.names), "idle": None,
                "goal": minihack.goal(self.params.task) if self.minihack else GOAL,
                "text": language.render(view, self.mode),
                "depth": int(b[language.DEPTH]), "experience_level": int(b[language.XL]),
                "progression": self.progress.progression}

    def render(self) -> Any:
        return tty_image.frame(self.obs["tty_chars"], self.obs["tty_colors"])

    def check_action(self, body: Any, obs: Observation) -> bool:
        """A name of the vocabulary, spaces and quotes around it forgiven (a model's bare reply)."""
        return isinstance(body, str) and normalize(body) in self.vocab

    async def step(self, action: str | None) -> StepResult:
        name = normalize(action) if action is not None else self.default_action
        name = name if name in self.vocab else self.default_action
        obs, reward, terminated, truncated, info = self.game.step(self.index_of[self.vocab[name]])
        text = language.message(obs["tty_chars"])
        while self.params.skip_more and "--More--" in text and not (terminated or truncated):
            text = text.replace("--More--", "\n")
            obs, more_reward, terminated, truncated, info = self.game.step(self.index_of[MORE])
            reward += more_reward
            text += language.message(obs["tty_chars"])
        self.text_message = text
        if int(obs["blstats"][language.DEPTH]) > 0:  # a finished game's last observation is blank: keep the last
            self.obs = _copy(obs)                     # living one (NLE also reuses its buffers, hence the copy)
            b = self.obs["blstats"]
            self.progress.update(int(b[language.DEPTH]), int(b[language.XL]))
        self.episode_return += float(reward)
        self.last_reward = float(reward)
        status = info.get("end_status")
        aborted = getattr(status, "name", "") == "ABORTED"
        done = bool(terminated or truncated)
        return StepResult(float(reward), done, self._info(played=name, end_status=getattr(status, "name", str(status)),
                                                          done=done), truncated=aborted or bool(truncated))

    def _info(self, *, played: str, end_status: str, done: bool) -> dict[str, Any]:
        b = self.obs["blstats"]
        p = self.progress
        info = {"world": "minihack" if self.minihack else "nethack", "task": self.params.task, "played": played,
                "depth": int(b[language.DEPTH]), "experience_level": int(b[language.XL]),
                "score": int(b[language.SCORE]), "gold": int(b[language.GOLD]), "time": int(b[language.TIME]),
                "progression": p.progression, "highest_achievement": p.highest_achievement,
                "episode_return": self.episode_return, "end_status": end_status}
        if self.minihack:
            info["success"] = minihack.success(self.last_reward)
        if done:
            info["end_reason"] = f"{end_status}: {self.text_message.strip()[:200]}"
        return info

    def metrics(self, last: Any) -> dict[str, Any]:
        p = self.progress
        if self.minihack:
            ok = minihack.success(self.last_reward)
            return {"progression": float(ok), "success": float(ok), "episode_return": self.episode_return}
        return {"progression": p.progression, "max_depth": p.max_depth,
                "max_experience_level": p.max_experience_level, "episode_return": self.episode_return}

    def action_names(self) -> list[str]:
        return list(self.names)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": list(self.names), "idle": None, "default_action": self.default_action,
                "task": self.params.task, "prompt_mode": self.mode, "frames": self.params.frames,
                "max_episode_steps": self.params.max_episode_steps}

    async def teardown(self) -> None:
        if getattr(self, "game", None) is not None:
            self.game.close()
