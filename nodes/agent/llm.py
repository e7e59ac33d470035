"""The LLM agent: observation -> prompt -> model node -> parsed action, with memory and planning.

It reaches its model only through the model node's ``chat`` service, so the same agent plays with
GPT-4o, a vLLM server or the embedded CPU model; and it learns the environment only from the
observation (``docs/environments.md``), so one class plays every pack, with a prompt template per
environment family. Browser environments get VisualWebArena's setting (``nodes.agent.webepisode``):
a single-turn prompt with the previous action only, pretty host names and VWA's early stops.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from kernel.bus import tracing
from kernel.sdk.node import Message, Node, NodeParams, RemoteError, RequestTimeout, on_input
from nodes.agent.memory import ALL, ChatMemory, StepMemory, Turn, window
from nodes.agent.parsers import get_parser
from nodes.agent.records import StepRecords
from nodes.agent.templates import Template, fields_of, load_template
from nodes.agent.webactions import HostMap
from nodes.agent.webepisode import EarlyStopLimits, WebEpisode, browser_template, load_image, stop_action

STOP = {"stop": True}


Window = Annotated[int, Field(ge=0)] | Literal["all"]


class LLMParams(NodeParams):
    model: str = Field("model", description="the id of the model node to ask (its chat service)")
    template: str | None = Field(None, description="a bundled prompt template name or a YAML path; default: the "
                                 "observation's env family (kidgym/CL -> kidgym)")
    planning: Literal["online", "global"] = Field(
        "online", description="online: a model call per step; global: one call on the first observation returns "
        "the whole action sequence, played one per step, then the agent stops the episode")
    history: bool = Field(True, description="false: no memory at all (am 0, om 1)")
    am: Window | None = Field(None, description="action memory window (past actions shown); default the "
                              "template's, else 5; all for a memory task")
    om: Window | None = Field(None, description="observation memory window; default the template's, else 1; "
                              "all for a memory task")
    cot: bool = Field(True, description="ask for chain-of-thought before the action")
    icl: bool = Field(False, description="include the template's in-context examples")
    images: bool | Literal["auto"] = Field("auto", description="send frames: auto (when the observation has "
                                           "them), true, or false (text renderings only)")
    regenerate: int = Field(2, ge=0, description="extra model calls after an unparsable reply")
    parser: str | None = Field(None, description="another action parser than the template's (first_mention "
                               "suits small models that will not keep to a format)")
    on_invalid: Literal["skip", "idle", "random", "end"] = Field(
        "skip", description="after an unusable reply: skip (no action), idle (the environment's idle action), "
        "random (once invalid_after in a row were unusable) or end (stop the episode after invalid_after)")
    invalid_after: int = Field(3, ge=1, description="unusable replies in a row before random/end apply")
    sampling: dict[str, Any] = Field(default_factory=dict, description="per-request sampling params for the "
                                     "model node (temperature, max_tokens, ...)")
    model_timeout_s: float = Field(600.0, gt=0, description="seconds to wait for one model reply")
    system_role: bool = Field(True, description="put the rules in a system message; false: in the first user "
                              "turn, for models without a system role")
    ife_share: float = Field(0.9, ge=0, le=1, description="share of invalid replies that flags an "
                             "instruction-following error")
    ife_min_steps: int = Field(10, ge=0, description="steps an episode needs before the IFE flag applies")
    hosts: dict[str, str] = Field(default_factory=dict, description="browser environments: pretty base URL -> "
                                  "local base URL, e.g. {'http://classifieds.com': 'http://127.0.0.1:9980'}; the model "
                                  "sees the pretty names and the URLs in its actions are mapped back")
    max_text_chars: int | None = Field(None, ge=1, description="browser environments: cut the observation text "
                                       "to this many characters; default the template's (VWA: 3840 tokens, "
                                       "about 15360 characters; 640 tokens for short-context models)")
    early_stop: EarlyStopLimits = Field(default_factory=EarlyStopLimits, description="browser environments: "
                                        "VWA's early stops (max_steps, parse_failures, repeats); on_invalid does "
                                        "not apply there, an unreadable reply is sent as no action")

    @field_validator("hosts")
    @classmethod
    def _host_map(cls, hosts: dict[str, str]) -> dict[str, str]:
        HostMap(hosts)  # ValueError naming the entry that is not a base URL or not one-to-one
        return hosts

    @field_validator("parser")
    @classmethod
    def _known_parser(cls, name: str | None) -> str | None:
        if name is not None:
            get_parser(name)  # ValueError naming the allowed parsers
        return name


class LLMAgent(Node):
    """Plays any environment pack through a model node: observation -> prompt (a template per
    environment family) -> the model node's ``chat`` service -> parsed action."""

    inputs = ("obs",)
    outputs = ("action",)
    Params = LLMParams
    params: LLMParams

    async def setup(self) -> None:
        p = self.params
        self.model_id: str = p.model
        self.planning: str = p.planning
        self.policy: str = p.on_invalid
        self.invalid_after = p.invalid_after
        self.sampling: dict[str, Any] = dict(p.sampling)
        self.timeout = p.model_timeout_s
        self.ife_share = p.ife_share
        self.ife_min_steps = p.ife_min_steps
        self.template: Template | None = load_template(p.template) if p.template else None
        self.records = StepRecords(self)
        self._icl_text = ""  # the rendered in-context examples of the current system prompt, if shown
        # copies of a replica group (agent-0, agent-1, ...) report under one name, so episodes compare
        self.metric_prefix = self.id.removesuffix(f"-{p.replica}") if p.replica is not None else self.id
        self.episode: str | None = None
        self.hosts = HostMap(p.hosts)
        self.web: WebEpisode | None = None

    async def teardown(self) -> None:
        self.records.close()

    def _setting(self, key: str, default: Any) -> Any:
        """A param the launch file set, else the template's wish, else ``default``."""
        if key in self.params.model_fields_set:
            return getattr(self.params, key)
        assert self.template is not None
        return self.template.defaults.get(key, default)

    def _new_episode(self, obs: dict[str, Any]) -> None:
        if self.template is None or (not self.params.template and self.template.name != _default_template(obs)):
            self.template = load_template(_default_template(obs))
        memory_task = bool(obs.get("memory"))
        history = self._setting("history", True)
        am = window(self._setting("am", ALL if memory_task else 5), "am") if history else 0
        om = window(self._setting("om", ALL if memory_task else 1), "om") if history else 1
        if memory_task and "am" not in self.params.model_fields_set:
            am = om = ALL
        images = self._setting("images", "auto")
        self.images = bool(obs.get("frame") is not None) if images == "auto" else bool(images)
        # a template with history texts asks for V-MAGE's single-message history; the others keep the chat
        history_text = self.template.history
        self.memory: ChatMemory = (StepMemory(am, om, self.images, history_text) if history_text
                                                else ChatMemory(am, om, self.images))
        self.regenerate = int(self._setting("regenerate", 2))
        self.cot = bool(self._setting("cot", True))
        self.icl = bool(self._setting("icl", False))
        self.episode = obs.get("episode")
        self.plan: list[Any] | None = None
        self.stats = Counter[str]()
        self.chosen = Counter[str]()
        self.invalid_streak = 0
        self.rng = random.Random(zlib.crc32(f"{self.seed}/{self.id}/{self.episode}".encode()))
        self.web = None
        if _family(obs) == "browser":
            if self.planning != "online":
                raise ValueError("a browser environment is played online (VWA's setting); planning: global "
                                 "has no meaning there")
            self.web = WebEpisode(self.hosts, self.params.early_stop, self._setting("max_text_chars", None))

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        obs = msg.body
        if isinstance(views := obs.get("views"), dict) and self.id in views:
            obs = {**obs, "text": views[self.id]}  # a multi-agent world's view for this agent alone
        if obs.get("episode") != self.episode or obs.get("t") == 0 or self.template is None:
            # (an episode that starts at step 0 again was abandoned and is being replayed: no memory of it)
            self._new_episode(obs)
        record: dict[str, Any] = {"episode": self.episode, "t": obs.get("t"), "mode": self.planning}
        with tracing.root_span("agent.step", **{"framebus.agent": self.id, "framebus.episode": self.episode,
                                                "framebus.step": obs.get("t")}):
            if self.web is not None:
                action, record = await self._browse(obs)
            elif self.planning == "global":
                if self.plan is None:
                    found, record = await self._decide(obs, "global")
                    self.plan = list(found) or [self._invalid(obs)]
                action = self.plan.pop(0) if self.plan else {**STOP, "reason": "plan finished"}
            else:
                found, record = await self._decide(obs, "online")
                action = found[0] if found else self._invalid(obs)
            self.records.write({**record, "sent": action})
            tracing.set_attributes(**{"framebus.action": str(action), "framebus.valid": bool(record.get("valid"))})
            await self.publish("action", action, step=msg.step)

    async def _decide(self, obs: dict[str, Any], mode: str) -> tuple[list[str], dict[str, Any]]:
        """Ask the model (with bounded regeneration) and parse; counts the step and returns the
        actions found with the step's record."""
        assert self.template is not None
        tpl = self.template
        fields = {**fields_of(obs), "observation": "{observation}"}
        key = "first" if not self.memory.turns else "next"
        if self.memory.turns:  # what the env said after the last decision's action belongs to that decision
            self.memory.turns[-1].info = str(obs["info"]) if obs.get("info") is not None else None
        prompt = tpl.render(key, getattr(tpl, key), fields)
        if self.web is not None:
            self.memory.add(self.web.turn(prompt, obs, self.images))
        else:
            frames = [f for f in (*(obs.get("frames") or ()), obs.get("frame")) if f is not None]
            labels = obs.get("frame_labels")
            if labels is not None:  # the env names each picture, and its text (code, HTML, feedback) is more
                # than a rendering of them: both go to the model (WebUI, VAB-CSS)
                self.memory.add(Turn(prompt=prompt, text=str(obs.get("text", "")), frames=frames,
                                     labels=[str(label) for label in labels], keep_text=True))
            elif obs.get("text_history"):  # the env's words stay meaningful once the picture is gone (VAB embodied)
                self.memory.add(Turn(prompt=prompt, text=str(obs.get("text", "")), frames=frames, keep_text=True,
                                     text_history=True))
            else:
                self.memory.add(Turn(prompt=prompt, text=str(obs.get("text", "")), frames=frames))
        head = self._head(obs, mode)
        parser = get_parser(self.params.parser) if self.params.parser else tpl.parser(mode)
        allowed = [str(a) for a in obs.get("actions") or []]
        retry: list[tuple[str, str]] = []
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        latency = cost = 0.0
        reply_text, error, found = "", None, []
        messages: list[dict[str, Any]] = []
        calls = 0
        seen: list[str] | None = None
        tokens: dict[str, Any] | None = None
        for _attempt in range(1 + self.regenerate):
            messages = self.memory.messages(head, retry)
            try:
                reply = await self.request(self.model_id, "chat", {
                    "messages": messages, "episode": self.episode, "sampling": self.sampling}, timeout=self.timeout)
            except (RemoteError, RequestTimeout) as exc:
                error = str(exc)
                self.log.warning("model call failed", episode=self.episode, t=obs.get("t"), error=error)
                break
            calls += 1
            reply_text = reply["text"]
            seen = reply.get("image_sha256")
            tokens = reply.get("tokens")
            for k in usage:
                usage[k] += int(reply["usage"].get(k, 0))
            latency += float(reply.get("latency_s", 0.0))
            cost += float(reply.get("cost_usd", 0.0))
            found = parser(reply_text, allowed)
            if found:
                break
            retry.append((reply_text, tpl.render("regenerate", tpl.regenerate, fields)))
        self.memory.turns[-1].reply = tpl.keep(reply_text)  # the record below keeps the reply as written
        self.stats["decisions"] += 1
        self.stats["unparsable"] += int(not found)
        self.stats["regenerations"] += max(0, calls - 1)
        self.stats["model_errors"] += int(error is not None)
        if found:
            self.invalid_streak = 0
            self.chosen[found[0]] += 1
        else:
            self.invalid_streak += 1
        record = {
            "episode": self.episode, "t": obs.get("t"), "mode": mode, "prompt": await self.records.prompt(messages),
            "response": reply_text, "attempts": calls, "actions": found,
            "action": found[0] if found else None, "valid": bool(found), "error": error, "usage": usage,
            "latency_s": round(latency, 4), "cost_usd": cost,
        }
        if seen is not None:  # what the model node says it sent: the hashes of the encoded pictures
            record["seen_images"] = seen
        if tokens:  # the reply's (last call's) token ids and logprobs, where the launch file asked for them
            record["tokens"] = tokens
        if self._icl_text:  # the in-context examples of the system prompt, which a training set leaves out
            record["icl"] = self._icl_text
        await self._report()
        return found, record

    async def _browse(self, obs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """One VWA step: stop early if stuck, else ask the model about the observation with pretty
        host names and send its action with the local ones (None for an unreadable reply)."""
        web = self.web
        assert web is not None
        if web.goal_images is None:
            web.goal_images = []
            refs = [str(r) for r in obs.get("goal_images") or ()] if self.images else []
            for i, ref in enumerate(refs, start=1):
                try:
                    web.goal_images.append(await asyncio.to_thread(load_image, ref, self.hosts))
                except (OSError, ValueError) as exc:  # also urllib's errors and Pillow's unreadable files
                    web.image_error = f"input image {i} ({ref[:120]}) could not be loaded: {exc}"
                    self.log.warning("input image not loaded", episode=self.episode, error=web.image_error)
                    break
        record: dict[str, Any] = {"episode": self.episode, "t": obs.get("t"), "mode": "online"}
        if web.image_error is not None:
            return stop_action(f"ERROR: {web.image_error}"), {**record, "error": web.image_error}
        if (reason := web.early_stop()) is not None:
            self.stats["early_stops"] += 1
            await self._report()
            return stop_action(f"Early stop: {reason}"), {**record, "early_stop": reason}
        found, record = await self._decide(web.shown(obs), "online")
        if record["error"] is not None:
            return stop_action(f"ERROR: {record['error']}"), record
        return web.took(found[0] if found else None, record["response"]), record

    def _head(self, obs: dict[str, Any], mode: str) -> list[dict[str, Any]]:
        assert self.template is not None
        tpl = self.template
        fields = fields_of(obs)
        parts = [tpl.render("system", tpl.system, fields), tpl.render(f"io.{mode}", tpl.io[mode], fields),
                 tpl.render("cot", tpl.cot.get("on" if self.cot else "off", ""), fields)]
        self._icl_text = ""
        if self.icl and tpl.icl:
            self._icl_text = tpl.render("icl", tpl.icl, fields).strip()
            parts.append(self._icl_text)
        text = "\n\n".join(p.strip() for p in parts if p and p.strip())
        if self.params.system_role:
            return [{"role": "system", "content": text}]
        return [{"role": "user", "content": text}, {"role": "assistant", "content": "Understood."}]

    def _invalid(self, obs: dict[str, Any]) -> Any:
        """What to send when the model gave nothing usable, per ``on_invalid``."""
        if self.policy == "idle":
            return obs.get("idle")
        if self.policy == "random" and self.invalid_streak >= self.invalid_after and obs.get("actions"):
            return self.rng.choice(list(obs["actions"]))
        if self.policy == "end" and self.invalid_streak >= self.invalid_after:
            return {**STOP, "reason": f"{self.invalid_streak} unusable replies in a row"}
        return None

    async def _report(self) -> None:
        """Per-episode agent metrics, sent every step so they are in before the judge closes it."""
        n = self.stats["decisions"]
        unparsable = self.stats["unparsable"] / n if n else 0.0
        top = max(self.chosen.values(), default=0) / n if n else 0.0
        ife = unparsable > self.ife_share or (n >= self.ife_min_steps and top > self.ife_share)
        assert self.episode is not None
        values = {"decisions": n, "unparsable": self.stats["unparsable"], "regenerations": self.stats["regenerations"],
                  "model_errors": self.stats["model_errors"], "top_action_share": round(top, 4), "ife": int(ife)}
        if self.web is not None:
            values["early_stop"] = self.stats["early_stops"]  # 1 when VWA's early stop ended the episode
        try:
            await self.report(self.episode, **{f"{self.metric_prefix}_{k}": v for k, v in values.items()})
        except (RemoteError, RequestTimeout) as exc:  # an episode the judge already closed
            self.log.debug("agent metrics not recorded", episode=self.episode, error=str(exc))


def _default_template(obs: dict[str, Any]) -> str:
    """The bundled template for an observation: the one it names (``template``, for an env whose
    levels need different prompts), else its env family's; for a browser the one of its observation
    setting (Set-of-Marks, accessibility tree, or the tree with a screenshot), for WebUI the one of
    its mode (global or online)."""
    if isinstance(suggested := obs.get("template"), str) and suggested:
        return suggested  # the env names its level's template (V-MAGE: one per action set)
    family = _family(obs)
    if family == "webui":  # WebUI's two settings ask for different replies (Global vs Online's revisions)
        return "webui_online" if obs.get("mode") == "online" else "webui_global"
    return browser_template(obs) if family == "browser" else family


def _family(obs: dict[str, Any]) -> str:
    env = str(obs.get("env") or "")
    if not env:
        raise ValueError("the observation names no env, so no prompt template can be chosen; set the agent's "
                         "template param")
    return env.split("/", 1)[0]
