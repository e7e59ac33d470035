"""Batching gain of the embedded model server, measured through framebus's model node in one run.

Completion tokens per second of 16 concurrent chat requests vs the same requests one at a time,
against the managed embedded server (SmolLM2-135M-Instruct on vLLM's CPU build, given every core). The server
decodes the concurrent requests as one batch, so the ratio shows what an agent graph with many
environments gains over a single one.

    python bench/model.py [--json] [--concurrency 16] [--tokens 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.testing import Harness  # noqa: E402

PROMPTS = ["Describe a sokoban level.", "Name three football tactics.", "Explain what a judge node does.",
           "Write a haiku about robots.", "List four colours.", "What is a launch file?",
           "Give advice to a new player.", "Summarise the rules of chess."]


async def measure(concurrency: int, tokens: int) -> dict[str, float]:
    async with Harness(quiet=True) as h:
        h.add("model", "nodes.model.client:ChatModel", params={
            "serve": {"kind": "vllm-cpu", "omp_cpus": "all"}, "api_key_env": "none", "vision": False, "max_concurrency": concurrency,
            # a fixed length per answer, so both sides decode the same number of tokens
            "sampling": {"max_tokens": tokens, "temperature": 0.0, "extra_body": {"ignore_eos": True}}})
        probe = h.probe()
        t0 = time.monotonic()
        await h.start(ready_timeout=900)
        startup = time.monotonic() - t0

        def body(i: int) -> dict:
            return {"messages": [{"role": "user", "content": f"{PROMPTS[i % len(PROMPTS)]} ({i})"}]}

        await probe.request("model", "chat", body(-1), timeout=300)  # warm up
        t = time.monotonic()
        sequential = [await probe.request("model", "chat", body(i), timeout=300) for i in range(4)]
        seq_s = time.monotonic() - t
        t = time.monotonic()
        concurrent = await asyncio.gather(*(probe.request("model", "chat", body(100 + i), timeout=600)
                                            for i in range(concurrency)))
        conc_s = time.monotonic() - t
    seq_tokens = sum(r["usage"]["completion_tokens"] for r in sequential)
    conc_tokens = sum(r["usage"]["completion_tokens"] for r in concurrent)
    seq_tps, conc_tps = seq_tokens / seq_s, conc_tokens / conc_s
    return {"sequential_tokens_per_s": round(seq_tps, 2), "concurrent_tokens_per_s": round(conc_tps, 2),
            "concurrency_speedup": round(conc_tps / seq_tps, 2), "concurrency": concurrency,
            "completion_tokens": tokens, "server_startup_s": round(startup, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    out = asyncio.run(measure(args.concurrency, args.tokens))
    if args.json:
        print(json.dumps(out))
    else:
        print(f"one at a time: {out['sequential_tokens_per_s']:.1f} completion tokens/s; "
              f"{out['concurrency']} concurrent: {out['concurrent_tokens_per_s']:.1f} tokens/s "
              f"-> speedup {out['concurrency_speedup']:.1f}x (server start {out['server_startup_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
