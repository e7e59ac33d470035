"""The shapes an exported record takes: one function per format, from an episode's decisions.

* ``chat``: one conversation per episode in OpenAI's chat fine-tuning shape: the rules, then each
  step's observation turn (its text and pictures) and the reply as the model wrote it.
* ``vab-bc``: VisualAgentBench's behaviour-cloning samples (spec visualagentbench.md §4), one per
  decision: the system prompt without its in-context examples, the history as the model was shown
  it joined with role tokens (``<|user|>``, ``<|assistant|>``) and line breaks, and one picture:
  the latest turn's, or, where the agent kept the history's pictures in view (VAB's CSS setting),
  all of them stacked vertically.
* ``hf``: the ``chat`` conversations as rows for TRL's SFT trainer (``messages`` whose image
  parts are placeholders, ``images`` in the same order).
* ``rollouts``: one line per decision, grouped by episode, in the shape RL trainers take: the
  prompt as sent and the completion as written, their token ids and the completion's logprobs
  where the model server gave them, the step's reward from the env's record, and the episode's
  return and final metrics.
"""

from __future__ import annotations

from typing import Any, Iterator

from kernel.tools.trainset.images import ImageSink
from kernel.tools.trainset.runs import Decision, Episode, Message

ROLE_TOKENS = {"system": "<|system|>", "user": "<|user|>", "assistant": "<|assistant|>"}


def text_of(message: Message) -> str:
    """A message's text parts joined; its pictures left out."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or () if p.get("type") == "text")


def _openai_content(ep: Episode, message: Message, sink: ImageSink) -> Any:
    content = message.get("content")
    if not isinstance(content, list):
        return content
    return [{"type": "image_url", "image_url": {"url": sink.ref(ep.run, p)}} if p.get("type") == "image"
            else {"type": "text", "text": str(p.get("text", ""))} for p in content]


def conversation(ep: Episode) -> list[Message]:
    """The episode as one conversation: the first decision's opening messages (the rules), then
    each decision's turn followed by its reply."""
    out = list(ep.decisions[0].head)
    for d in ep.decisions:
        out += [d.turn, {"role": "assistant", "content": d.response}]
    return out


def chat_record(ep: Episode, sink: ImageSink) -> dict[str, Any]:
    """One JSONL line of OpenAI's chat fine-tuning format."""
    return {"messages": [{"role": m["role"], "content": _openai_content(ep, m, sink)} for m in conversation(ep)]}


def hf_row(ep: Episode, sink: ImageSink) -> dict[str, Any]:
    """One row for TRL: text and image-placeholder parts, the pictures' bytes in order."""
    messages, images = [], []
    for m in conversation(ep):
        content = m.get("content")
        parts = []
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        else:
            for p in content or ():
                if p.get("type") == "image":
                    images.append({"bytes": sink.data(ep.run, p), "path": f"{p['sha256']}.png"})
                    parts.append({"type": "image", "text": None})
                else:
                    parts.append({"type": "text", "text": str(p.get("text", ""))})
        messages.append({"role": m["role"], "content": parts})
    return {"messages": messages, "images": images, "episode_id": ep.episode_id, "run": str(ep.run),
            "launch": ep.launch, "env": ep.env, "agent": ep.agent, "success": _success(ep)}


def _success(ep: Episode) -> float | None:
    value = ep.metrics.get("success")
    return float(value) if isinstance(value, (int, float)) else None


def _system(decision: Decision) -> str:
    """The rules without the in-context examples."""
    rules = next((text_of(m) for m in decision.head if m.get("role") == "system"), "")
    if decision.icl:
        rules = rules.replace(decision.icl, "")
        rules = "\n\n".join(p for p in rules.split("\n\n") if p.strip())
    return rules


def vab_samples(ep: Episode, sink: ImageSink) -> Iterator[dict[str, Any]]:
    """VAB's behaviour-cloning samples of one episode, one per decision."""
    for d in ep.decisions:
        history = [m for m in d.head if m.get("role") != "system"]
        joined = "\n".join(f"{ROLE_TOKENS.get(str(m.get('role')), '<|' + str(m.get('role')) + '|>')}\n{text_of(m)}"
                           for m in [*history, d.turn])
        latest = d.images([d.turn])
        earlier = d.images(history)
        shown = [*earlier, *latest] if earlier else latest
        image = None
        if shown:
            sha, data = sink.stacked(ep.run, shown)
            image = sink.put(sha, data)
        yield {"id": f"{ep.launch}/{ep.episode_id}/{d.t}", "system": _system(d), "input": joined,
               "output": d.response, "image": image, "stacked": len(shown) if len(shown) > 1 else 0,
               "env": ep.env, "episode_id": ep.episode_id, "t": d.t}


def rollout_lines(ep: Episode, group: int, sink: ImageSink) -> Iterator[dict[str, Any]]:
    """The episode's decisions as RL rollout steps (``group`` numbers the episode in the export)."""
    rewards = ep.rewards
    last = len(ep.decisions) - 1
    for i, d in enumerate(ep.decisions):
        t = d.t if isinstance(d.t, int) else i
        tokens = d.tokens
        yield {"group": group, "episode_id": ep.episode_id, "run": str(ep.run), "launch": ep.launch, "env": ep.env,
               "agent": ep.agent, "t": t,
               "prompt": [{"role": m["role"], "content": _openai_content(ep, m, sink)} for m in [*d.head, d.turn]],
               "completion": d.response,
               "prompt_ids": tokens.get("prompt_ids"), "completion_ids": tokens.get("completion_ids"),
               "logprobs": tokens.get("logprobs"),
               "reward": rewards[t] if rewards is not None and 0 <= t < len(rewards) else None,
               "done": i == last, "valid": d.valid,
               "return": sum(rewards) if rewards is not None else None, "metrics": ep.metrics}
