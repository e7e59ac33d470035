"""``launch export RUN... --format chat|vab-bc|hf --out DIR``: run folders to a training set.

The set is built in a folder beside ``DIR`` and moved into place when it is whole, so a stopped
export leaves no half set behind and an export again replaces the last one. ``manifest.json``
says what went in: the runs and their launch files, the filters, the counts.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from kernel.bus.resultsdb import FILENAME
from kernel.tools.trainset import formats
from kernel.tools.trainset.images import ImageSink, Mode
from kernel.tools.trainset.runs import Episode, ExportError, Filters, RunSummary, read_run
from kernel.tools.trainset.splice import splice_recovery

FORMATS = ("chat", "vab-bc", "hf", "rollouts")
SHARD_ROWS = 500
"""Rows per parquet shard of the ``hf`` format."""


def parse_mix(items: Sequence[str]) -> dict[str, int]:
    """``css=3`` -> {"css": 3}: each record of that env family is written 3 times in all."""
    mix = {}
    for text in items:
        key, sep, value = text.partition("=")
        try:
            times = int(value)
            if not sep or not key.strip() or times < 1:
                raise ValueError
        except ValueError:
            raise ExportError(f"--mix {text!r}: expected FAMILY=TIMES with TIMES a whole number >= 1, e.g. css=3") from None
        mix[key.strip()] = times
    return mix


def _count(run: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{run / FILENAME}?mode=ro", uri=True)
        try:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0  # read_run says what is wrong with it


def export_training(runs: Sequence[Path], fmt: str, out: Path, *, filters: Filters = Filters(), images: Mode = "files",
                    mix: Mapping[str, int] | None = None, splice: bool = False,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Write the training set; returns the manifest. ``progress(done, total)`` after each episode.
    With ``splice``, failed and successful episodes of a task are joined first where their pack
    says how (kernel.tools.trainset.splice); the filters then apply to what that gives."""
    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: allowed are {', '.join(FORMATS)} (and jsonl, csv for one row per episode)")
    if not runs:
        raise ExportError("no run folder given")
    if images == "inline" and fmt == "hf":
        raise ExportError("--images inline: the hf format keeps pictures inside the dataset already; leave it out")
    mix = dict(mix or {})
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "manifest.json").exists())):
        raise ExportError(f"--out {out}: exists and is not an earlier export (no manifest.json in it); "
                          f"choose a new folder")
    start = time.monotonic()
    summaries = [RunSummary(path=Path(r), launch="") for r in runs]
    total = sum(_count(Path(r)) for r in runs)
    partial = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
    except OSError as exc:
        raise ExportError(f"--out {out}: cannot make the set's folder beside it: {exc}") from None
    sink = ImageSink(partial, images)
    done = 0
    families: set[str] = set()

    joined: list[dict[str, Any]] = []
    reading = dataclasses.replace(filters, success=False, min_metrics={}) if splice else filters

    def read() -> Iterator[Episode]:
        nonlocal done
        for summary in summaries:
            before = summary.episodes
            for ep in read_run(summary.path, reading, summary):
                families.add(ep.family)
                yield ep
                if progress is not None and summary.episodes != before:
                    done += summary.episodes - before
                    before = summary.episodes
                    progress(done, total)
            done += summary.episodes - before

    def episodes() -> Iterator[Episode]:
        if not splice:
            yield from read()
            return
        spliced, found = splice_recovery(read())
        joined.extend(found)
        yield from (ep for ep in spliced if filters.keeps(ep))

    try:
        counts = _write(fmt, episodes(), partial, sink, mix)
        unknown = sorted(set(mix) - families)
        if unknown:
            raise ExportError(f"--mix names {', '.join(unknown)}, an env family none of the exported episodes has "
                              f"(they have: {', '.join(sorted(families)) or 'none'})")
        manifest = {
            "format": fmt, "images": images if fmt != "hf" else "dataset", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "runs": [{"path": str(s.path.resolve()), "launch": s.launch, "episodes": s.episodes, "exported": s.kept,
                      "decisions": s.decisions, "agents": s.agents} for s in summaries],
            "filters": filters.as_dict(), "mix": mix, **({"spliced": joined} if splice else {}),
            "counts": {**counts, "images": len(sink.written)},
            "seconds": round(time.monotonic() - start, 2),
        }
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(partial, out)
        return manifest
    except OSError as exc:  # a full disk, a file where a folder goes: said with the file, nothing half written
        raise ExportError(f"--out {out}: the export stopped, nothing was written there: {exc}") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _write(fmt: str, episodes: Iterator[Episode], out: Path, sink: ImageSink, mix: Mapping[str, int]) -> dict[str, int]:
    if fmt == "hf":
        return _write_hf(episodes, out, sink, mix)
    name = {"chat": "chat.jsonl", "vab-bc": "vab_bc.jsonl", "rollouts": "rollouts.jsonl"}[fmt]
    n_episodes = n_records = 0
    with open(out / name, "w") as data, open(out / "index.jsonl", "w") as index:
        for ep in episodes:
            n_episodes += 1
            times = mix.get(ep.family, 1)
            if fmt == "chat":
                records = [formats.chat_record(ep, sink)]
            elif fmt == "vab-bc":
                records = list(formats.vab_samples(ep, sink))
            else:
                records = list(formats.rollout_lines(ep, n_episodes - 1, sink))
            for record in records:
                line = json.dumps(record, ensure_ascii=False) + "\n"
                about = json.dumps({"run": str(ep.run), "launch": ep.launch, "env": ep.env, "agent": ep.agent,
                                    "episode_id": ep.episode_id, "status": ep.status, "metrics": ep.metrics,
                                    **({"t": record["t"]} if "t" in record else {})}, default=str) + "\n"
                for _ in range(times):
                    data.write(line)
                    index.write(about)
                    n_records += 1
    return {"episodes": n_episodes, "records": n_records}


def hf_features() -> Any:
    from datasets import Features, Image, List, Value

    part = {"type": Value("string"), "text": Value("string")}
    return Features({
        "messages": List({"role": Value("string"), "content": List(part)}),
        "images": List(Image()),
        "episode_id": Value("string"), "run": Value("string"), "launch": Value("string"), "env": Value("string"),
        "agent": Value("string"), "success": Value("float64"),
    })


def _write_hf(episodes: Iterator[Episode], out: Path, sink: ImageSink, mix: Mapping[str, int]) -> dict[str, int]:
    """Parquet shards written as the rows come (memory holds one shard's pictures at most), then the
    dataset ``datasets`` builds from them, saved for ``load_from_disk``."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    features = hf_features()
    schema = features.arrow_schema
    shards = out / "parquet"
    shards.mkdir()
    n_episodes = n_rows = 0
    written: list[Path] = []
    chunk: list[dict[str, Any]] = []

    def flush() -> None:
        path = shards / f"part-{len(written):05d}.parquet"
        pq.write_table(pa.Table.from_pylist(chunk, schema=schema), path)
        written.append(path)
        chunk.clear()

    for ep in episodes:
        n_episodes += 1
        row = features.encode_example(formats.hf_row(ep, sink))
        for _ in range(mix.get(ep.family, 1)):
            n_rows += 1
            chunk.append(row)
            if len(chunk) >= SHARD_ROWS:
                flush()
    if chunk or not written:
        flush()
    named = []
    for i, path in enumerate(written):  # the names Hugging Face's hub gives shards, now that the count is known
        final = shards / f"train-{i:05d}-of-{len(written):05d}.parquet"
        path.rename(final)
        named.append(str(final))
    cache = out / ".cache"
    ds = datasets.Dataset.from_parquet(named, features=features, cache_dir=str(cache))
    ds.save_to_disk(str(out / "dataset"))
    del ds
    shutil.rmtree(cache, ignore_errors=True)
    return {"episodes": n_episodes, "records": n_rows}
