"""The ``launch export`` side of the training formats: options in, a progress bar, a closing line."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kernel.tools.trainset.runs import ExportError, Filters, parse_min_metric
from kernel.tools.trainset.write import export_training, parse_mix


def export_command(args: argparse.Namespace, console: Console) -> int:
    if args.out is None:
        raise ExportError(f"--format {args.format} writes a folder: give it with --out DIR")
    filters = Filters(success=args.success, min_metrics=dict(parse_min_metric(m) for m in args.min_metric),
                      envs=tuple(args.env), agents=tuple(args.agent))
    mix = parse_mix(args.mix)
    if args.format == "hf":
        try:
            import datasets
        except ImportError:
            raise ExportError("--format hf needs the datasets package: pip install 'framebus[train]'") from None
        datasets.disable_progress_bars()  # one bar: ours
    with Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("export", total=None)
        manifest = export_training(args.run, args.format, args.out, filters=filters, images=args.images, mix=mix,
                                   splice=args.splice_recovery,
                                   progress=lambda done, total: bar.update(task, completed=done, total=total))
    counts = manifest["counts"]
    for j in manifest.get("spliced", ()):
        console.print(f"joined {escape(j['failed'])} (failed) and {escape(j['succeeded'])} (succeeded) on "
                      f"{escape(str(j['task']))}: {j['decisions']} decisions", highlight=False, soft_wrap=True)
    console.print(f"{escape(str(args.out))}: {counts['records']} {args.format} records from {counts['episodes']} "
                  f"episodes of {len(manifest['runs'])} run(s), {counts['images']} pictures, "
                  f"{manifest['seconds']} s (manifest.json: {escape(json.dumps(manifest['filters']))})",
                  highlight=False, soft_wrap=True)
    return 0
