"""Prompt templates: one YAML file per environment family, so prompts are data users can read and
swap (``template: my_prompts.yaml``) without touching the agent.

A template has these keys (all text is ``str.format``-ed with the observation's fields):

* ``system``: the rules, the goal and the allowed actions (p_sys);
* ``io``: ``{online: ..., global: ...}``, the output format each planning mode asks for (p_io);
* ``cot``: ``{on: ..., off: ...}``, whether the model should reason before answering (p_cot);
* ``icl``: a worked example, sent when in-context examples are switched on;
* ``first`` / ``next``: the user turn for the first and for every later observation; ``{observation}``
  is the text rendering in text mode and a short pointer to the image in image mode;
* ``regenerate``: the turn sent after a reply that could not be parsed;
* ``parser``: ``{online: NAME, global: NAME}`` from ``nodes.agent.parsers``;
* ``kept_reply``: how the model's past replies stay in the chat history, a name from
  ``nodes.agent.parsers.KEPT_REPLIES`` (``whole``, the default; VAB keeps its processed reply, for
  Minecraft with the THOUGHT cut to five lines: ``vab_minecraft``);
* ``defaults``: agent params this environment wants unless the launch file says otherwise;
* ``history``: ``{intro: ..., step: ...}`` switches the memory to V-MAGE's
  (``nodes.agent.memory.StepMemory``): one user message per call with the last ``am`` decisions'
  pictures, each followed by ``step`` (fields ``ago``, ``reasoning``, ``action``, ``info``), then the
  current picture and ``first``/``next``; without it the memory is a multi-turn chat (``ChatMemory``).

Fields available to the text: ``actions`` (comma-separated), ``actions_lettered`` (``A) 'x' B) 'y'``),
``goal``, ``text``, ``t``, ``env``, and any other scalar in the observation.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from nodes.agent.memory import HistoryText
from nodes.agent.parsers import Parser, get_kept_reply, get_parser

BUNDLED = Path(__file__).with_name("templates")
_KEYS = {"system", "io", "cot", "icl", "first", "next", "regenerate", "parser", "defaults", "description", "history",
         "kept_reply"}


class TemplateError(ValueError):
    """A template file is missing, malformed or refers to an unknown field."""


@dataclass(frozen=True)
class Template:
    name: str
    source: Path
    system: str
    io: dict[str, str]
    cot: dict[str, str]
    first: str
    next: str
    regenerate: str
    parsers: dict[str, str]
    icl: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)
    history: HistoryText | None = None
    kept_reply: str = "whole"

    def parser(self, planning: str) -> Parser:
        return get_parser(self.parsers[planning])

    def keep(self, reply: str) -> str:
        """The reply as the chat history keeps it (``kept_reply``)."""
        return get_kept_reply(self.kept_reply)(reply)

    def render(self, key: str, text: str, fields: Mapping[str, Any]) -> str:
        try:
            return string.Formatter().vformat(text, (), _Fields(fields))
        except KeyError as exc:
            raise TemplateError(f"{self.source}: {key} uses the field {{{exc.args[0]}}}, which the observation "
                                f"does not have (it has: {', '.join(sorted(fields))})") from None


class _Fields(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> Any:
        raise KeyError(key)


def fields_of(obs: Mapping[str, Any]) -> dict[str, Any]:
    """The template fields for one observation."""
    actions = [str(a) for a in obs.get("actions") or []]
    out = {k: v for k, v in obs.items() if isinstance(v, (str, int, float, bool))}
    out.update(actions=", ".join(actions),
               # 26 letters at most: a lettered benchmark (KidGym) has a few options; a long list (the
               # household's calls) is for the {actions} field, and must not break the others
               actions_lettered=" ".join(f"{letter}) '{a}'" for letter, a in zip(string.ascii_uppercase, actions)),
               goal=obs.get("goal", ""), text=obs.get("text", ""), t=obs.get("t", 0), env=obs.get("env", ""))
    return out


def load_template(name_or_path: str) -> Template:
    """A bundled template by name (``sokoban``) or a YAML file by path."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = BUNDLED / f"{name_or_path}.yaml"
        if not path.exists():
            names = sorted(p.stem for p in BUNDLED.glob("*.yaml"))
            raise TemplateError(f"no bundled prompt template {name_or_path!r}; bundled: {', '.join(names)} "
                                f"(or give the path of a .yaml file)")
    if not path.exists():
        raise TemplateError(f"prompt template file {path} does not exist")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: a template is a mapping of {', '.join(sorted(_KEYS))}")
    if unknown := set(data) - _KEYS:
        raise TemplateError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(_KEYS))}")
    for key in ("system", "io", "first", "next", "parser"):
        if key not in data:
            raise TemplateError(f"{path}: missing key {key!r}")
    for key in ("first", "next"):
        if "{observation}" not in data[key]:
            raise TemplateError(f"{path}: {key} must contain {{observation}}, where the observation goes")
    cot = _cot_lines(path, data.get("cot"))
    parsers = dict(data["parser"]) if isinstance(data["parser"], dict) else {"online": data["parser"]}
    kept_reply = data.get("kept_reply", "whole")
    try:
        get_kept_reply(kept_reply)
    except (ValueError, TypeError) as exc:
        raise TemplateError(f"{path}: kept_reply: {exc}") from None
    for mode, parser in parsers.items():
        try:
            get_parser(parser)
        except ValueError as exc:
            raise TemplateError(f"{path}: parser.{mode}: {exc}") from None
    return Template(
        name=path.stem, source=path, system=data["system"], io=dict(data["io"]),
        cot=cot, first=data["first"], next=data["next"],
        regenerate=data.get("regenerate", "That reply did not follow the output format. Answer again, "
                                          "following the format exactly."),
        parsers=parsers, icl=data.get("icl", ""), defaults=dict(data.get("defaults") or {}),
        history=_history(path, data.get("history")), kept_reply=kept_reply,
    )


def _history(path: Path, raw: Any) -> HistoryText | None:
    """The ``history`` texts, checked here so a typo in a field fails on load, not mid-episode."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"intro", "step"} or not all(isinstance(v, str) for v in raw.values()):
        raise TemplateError(f"{path}: history must be a mapping with the texts intro and step")
    try:
        raw["step"].format(ago=1, reasoning="{}", action="", info="")
    except (KeyError, IndexError, ValueError) as exc:
        raise TemplateError(f"{path}: history.step: {exc!r}; its fields are ago, reasoning, action and info") from None
    return HistoryText(intro=raw["intro"], step=raw["step"])


def _cot_lines(path: Path, raw: Any) -> dict[str, str]:
    """The ``cot`` mapping with string keys: YAML 1.1 reads an unquoted ``on:``/``off:`` as true/false,
    and a lookup of "on" would then find nothing and drop the line from every prompt."""
    if raw is None:
        return {"on": "", "off": ""}
    if not isinstance(raw, dict):
        raise TemplateError(f"{path}: cot must be a mapping with the keys on and off")
    lines: dict[str, str] = {}
    for key, text in raw.items():
        name = {True: "on", False: "off"}.get(key, key) if isinstance(key, bool) else key
        if name not in ("on", "off"):
            raise TemplateError(f"{path}: cot.{key}: unknown key; allowed: on, off")
        if not isinstance(text, str):
            raise TemplateError(f"{path}: cot.{name} must be text")
        lines[name] = text
    return {"on": lines.get("on", ""), "off": lines.get("off", "")}
