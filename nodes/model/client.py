"""The model node: any model behind the OpenAI chat-completions API, as one service on the bus.

GPT-4o, a vLLM server on a GPU and the embedded CPU model are all reached the same way (the official
``openai`` SDK against a ``base_url``), so swapping models is a launch-file edit. Agents call::

    reply = await self.request("model", "chat", {"messages": [...], "episode": ep.id})

and get ``{"text", "finish_reason", "usage", "latency_s", "cost_usd", "cached", "retries"}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any, Literal

import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernel.bus import tracing
from kernel.sdk.node import Node, NodeParams, service
from nodes.model.cache import ResponseCache, request_key
from nodes.model.images import openai_messages
from nodes.model.server import serve_error


class GarbledReply(ValueError):
    """The server answered 200 with something that is not a chat completion."""


RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError,
             openai.APIResponseValidationError, json.JSONDecodeError, GarbledReply)
NO_KEY = "none"  # api_key_env value for local servers that need no key


class ModelFailed(RuntimeError):
    """The model could not answer after the allowed retries (or refused the request)."""


class Prices(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_per_1m: float = Field(0.0, ge=0, description="USD per million prompt tokens")
    completion_per_1m: float = Field(0.0, ge=0, description="USD per million completion tokens")


SERVED_CONCURRENCY = 64
"""Requests in flight to a server the node starts (``serve``): vLLM decodes them as one batch, so
more in flight is more tokens a second. Measured with bench/model.py on the embedded server
(2 cores): 27, 36, 57 and 153 completion tokens/s at 8, 16, 32 and 64 concurrent requests."""
API_CONCURRENCY = 8
"""Requests in flight to a remote API: its rate limits, not batching, decide there."""


class ChatModelParams(NodeParams):
    model: str = Field("gpt-4o", description="the served model name")
    base_url: str | None = Field(None, description="the API root (default OpenAI's)")
    api_key_env: str = Field("OPENAI_API_KEY", description="the environment variable that holds the key "
                             f"({NO_KEY} for local servers that need none)")
    sampling: dict[str, Any] = Field(default_factory=dict, description="e.g. {temperature: 0, max_tokens: 512}; "
                                     "a request may override each")
    max_retries: int = Field(4, ge=0, description="retries of a failed or garbled call")
    backoff_s: float = Field(0.5, ge=0, description="first wait between retries (doubles, with jitter)")
    max_backoff_s: float = Field(20.0, ge=0, description="longest wait between retries")
    timeout_s: float = Field(120.0, gt=0, description="seconds one call may take")
    max_concurrency: int | None = Field(None, ge=1, description="requests in flight at once from this node "
                                        f"(default: {SERVED_CONCURRENCY} for a server it starts, which batches "
                                        f"them; {API_CONCURRENCY} for an API, where rate limits bite)")
    vision: bool = Field(True, description="send frames as images (false: the text renderings only)")
    image_format: Literal["png", "jpeg"] = Field("png", description="how frames are encoded")
    image_long_edge: int | None = Field(None, ge=1, description="downscale frames to this long edge (pixels)")
    prices: Prices = Field(default_factory=Prices, description="for cost accounting: {prompt_per_1m, "
                           "completion_per_1m} in USD")
    logprobs: bool = Field(False, description="ask for the reply's token logprobs, and from a vLLM server the prompt's "
                           "and the reply's token ids (return_token_ids), kept in the agent's step records for RL "
                           "rollouts (launch export --format rollouts)")
    cache: bool = Field(False, description="answer repeated requests from the response cache")
    cache_path: str | None = Field(None, description="the cache's SQLite file (default "
                                   "~/.cache/framebus/responses.sqlite)")
    serve: dict[str, Any] | None = Field(None, description="start and supervise a local server first (see "
                                         "nodes.model.server)")

    @field_validator("serve")
    @classmethod
    def _known_server(cls, serve: dict[str, Any] | None) -> dict[str, Any] | None:
        if serve is not None and (error := serve_error(serve)) is not None:
            raise ValueError(error)
        return serve


class ChatModel(Node):
    """A model behind the OpenAI chat-completions API (OpenAI, a vLLM server, the embedded CPU model)
    as the ``chat`` service, with retries, a concurrency limit, cost accounting and a response cache."""

    Params = ChatModelParams
    params: ChatModelParams

    @classmethod
    def preflight(cls, params: ChatModelParams) -> list[str]:
        env = params.api_key_env
        if env != NO_KEY and not params.serve and not os.environ.get(env):
            return [f"environment variable {env} is not set; the model {params.model!r} needs its "
                    f"API key there (or set api_key_env: none for a local server)"]
        return []

    async def setup(self) -> None:
        p = self.params
        self.model: str = p.model
        self.sampling: dict[str, Any] = dict(p.sampling)
        self.max_retries = p.max_retries
        self.backoff_s = p.backoff_s
        self.max_backoff_s = p.max_backoff_s
        self.vision = p.vision
        self.image_format = p.image_format
        self.image_long_edge = p.image_long_edge
        self.price_in = p.prices.prompt_per_1m / 1e6
        self.price_out = p.prices.completion_per_1m / 1e6
        self.limit = asyncio.Semaphore(p.max_concurrency or (SERVED_CONCURRENCY if p.serve else API_CONCURRENCY))
        self.server = None
        base_url = p.base_url
        if p.serve:
            from nodes.model.server import ManagedServer

            self.server = ManagedServer(dict(p.serve), log=self.log, on_event=self._server_event)
            base_url = await self.server.start()
            self.model = self.server.served_name
        env = p.api_key_env
        key = "unused" if env == NO_KEY or self.server else os.environ.get(env)
        if not key:
            raise RuntimeError(f"environment variable {env} is not set")
        self.client = AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=p.timeout_s)
        self.cache = ResponseCache(Path(p.cache_path or Path.home() / ".cache/framebus/responses.sqlite")) \
            if p.cache else None
        self.totals = _Usage()
        self.per_episode: dict[str, _Usage] = {}
        self._publish_totals()

    async def teardown(self) -> None:
        if self.cache is not None:
            self.cache.close()
        if self.server is not None:
            await self.server.stop()

    @service("chat")
    async def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        sampling = {**self.sampling, **(body.get("sampling") or {})}
        # Encoding frames (PNG/JPEG, base64), hashing the request and the cache's SQLite (a sync to
        # disk per write) take milliseconds: they run in threads, so this loop serves other calls.
        digests: list[str] = []
        messages = await asyncio.to_thread(openai_messages, body["messages"], self.image_format,
                                           self.image_long_edge, self.vision, digests)
        request = {"model": self.model, "messages": messages, **sampling}
        if self.params.logprobs:
            request["logprobs"] = True
            if self.server is not None or self.params.base_url:  # vLLM's own field; OpenAI's API refuses it
                request["extra_body"] = {**(request.get("extra_body") or {}), "return_token_ids": True}
        episode = body.get("episode")
        key = await asyncio.to_thread(request_key, request) if self.cache is not None else None
        hit = await asyncio.to_thread(self.cache.get, key) if key is not None else None  # type: ignore[union-attr]
        if hit is not None:
            self._account(episode, hit["usage"], 0.0, 0, cached=True)
            return {**hit, "latency_s": 0.0, "cost_usd": 0.0, "cached": True, "retries": 0, "image_sha256": digests}
        async with self.limit:
            reply, retries, latency = await self._call(request)
        cost = self._account(episode, reply["usage"], latency, retries, cached=False)
        tracing.set_attributes(**{  # OpenTelemetry's GenAI semantic conventions
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": self.model,
            "gen_ai.response.model": reply.get("model"), "gen_ai.request.temperature": sampling.get("temperature"),
            "gen_ai.request.max_tokens": sampling.get("max_tokens"),
            "gen_ai.usage.input_tokens": reply["usage"]["prompt_tokens"],
            "gen_ai.usage.output_tokens": reply["usage"]["completion_tokens"],
            "gen_ai.response.finish_reasons": [str(reply.get("finish_reason"))], "framebus.retries": retries,
            "framebus.cost_usd": cost})
        if key is not None:
            await asyncio.to_thread(self.cache.put, key, self.model, reply)  # type: ignore[union-attr]
        return {**reply, "latency_s": latency, "cost_usd": cost, "cached": False, "retries": retries,
                "image_sha256": digests}

    async def _call(self, request: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
        retries = 0
        while True:
            start = time.monotonic()
            try:
                response = await self.client.chat.completions.create(**request)
                if not getattr(response, "choices", None):
                    raise GarbledReply("the reply has no choices")
            except RETRYABLE as exc:
                if self.server is not None and not self.server.up:
                    # The managed server died: it is being started again (nodes.model.server). Wait
                    # for it and ask again; the wait is bounded there, and spends no retry budget.
                    retries += 1
                    self.totals.retries += 1
                    self.log.warning("model server is down; retrying once it is back", error=type(exc).__name__,
                                     retry=retries)
                    try:
                        await self.server.wait_up()
                    except Exception as gone:
                        self.totals.failures += 1
                        self._publish_totals()
                        raise ModelFailed(f"{self.model}: {gone}") from None
                    continue
                if retries >= self.max_retries:
                    self.totals.failures += 1
                    self._publish_totals()
                    raise ModelFailed(f"{self.model}: gave up after {retries} retries: "
                                      f"{type(exc).__name__}: {exc}") from None
                retries += 1
                self.totals.retries += 1
                delay = min(self.max_backoff_s, self.backoff_s * 2 ** (retries - 1)) * (0.5 + random.random())
                self.log.warning("model call failed; retrying", error=type(exc).__name__, retry=retries,
                                 delay_s=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying cannot help
                self.totals.failures += 1
                self._publish_totals()
                raise ModelFailed(f"{self.model}: {exc.status_code} {exc.message}") from None
            latency = time.monotonic() - start
            choice = response.choices[0]
            usage = response.usage
            reply = {"text": choice.message.content or "", "finish_reason": choice.finish_reason,
                     "model": response.model,
                     "usage": {"prompt_tokens": usage.prompt_tokens if usage else 0,
                               "completion_tokens": usage.completion_tokens if usage else 0}}
            if "logprobs" in request and (tokens := token_data(response)):
                reply["tokens"] = tokens
            return reply, retries, latency

    def _account(self, episode: str | None, usage: dict[str, int], latency: float, retries: int,
                 cached: bool) -> float:
        cost = 0.0 if cached else usage["prompt_tokens"] * self.price_in + usage["completion_tokens"] * self.price_out
        targets = [self.totals]
        if episode:
            targets.append(self.per_episode.setdefault(episode, _Usage()))
        for u in targets:
            u.add(usage, latency, cost, cached)
        if episode:
            self.per_episode[episode].retries += retries  # the totals counted them as they happened
        self._publish_totals()
        if episode:
            asyncio.ensure_future(self._report_episode(episode))
        return cost

    async def _report_episode(self, episode: str) -> None:
        u = self.per_episode[episode].as_dict()
        try:
            await self.report(episode, **{f"model_{k}": v for k, v in u.items()})
        except Exception as exc:  # an ended or unknown episode: the run-wide totals still count it
            self.log.debug("episode usage not recorded", episode=episode, error=str(exc))

    def _publish_totals(self) -> None:
        restarts = {"server_restarts": self.server.restarts} if self.server is not None else {}
        self.summarize("model", {**self.totals.as_dict(), **restarts})

    async def _server_event(self, kind: str, message: str) -> None:
        """A death or restart of the managed server: into the run's errors table and summary.json."""
        self._publish_totals()
        await self.record_error(kind, message)


def token_data(response: Any) -> dict[str, Any]:
    """What a server said about the reply's tokens: the logprob of each (OpenAI's ``logprobs``), and
    where vLLM was asked for them (``return_token_ids``) the prompt's and the reply's token ids."""
    choice = response.choices[0]
    out: dict[str, Any] = {}
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        out["logprobs"] = [float(c.logprob) for c in content]
        out["tokens"] = [c.token for c in content]
    prompt_ids = getattr(response, "prompt_token_ids", None)  # vLLM's fields beyond OpenAI's (pydantic extras)
    completion_ids = getattr(choice, "token_ids", None)
    if isinstance(prompt_ids, list):
        out["prompt_ids"] = [int(i) for i in prompt_ids]
    if isinstance(completion_ids, list):
        out["completion_ids"] = [int(i) for i in completion_ids]
    return out


class _Usage:
    __slots__ = ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "retries", "failures",
                 "cost_usd", "latency_s")

    def __init__(self) -> None:
        self.requests = self.cache_hits = self.prompt_tokens = self.completion_tokens = 0
        self.retries = self.failures = 0
        self.cost_usd = self.latency_s = 0.0

    def add(self, usage: dict[str, int], latency: float, cost: float, cached: bool) -> None:
        self.requests += 1
        self.cache_hits += int(cached)
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        self.cost_usd += cost
        self.latency_s += latency

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

