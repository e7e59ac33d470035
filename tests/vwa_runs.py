"""Running a VWA-format task list through a gold launch file (vwa_gold.yaml, forge_gold.yaml): the
tasks are renumbered in order into a file, the env node's ``tasks`` point at it, ``launch run`` plays
them and each episode's metrics come back in task order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import launch


def run_tasks(launch_file: Path, tmp_path: Path, tasks: list[dict[str, Any]], name: str,
              timeout: float = 170) -> list[dict[str, Any]]:
    """The episodes' metrics (and status) in task order, after ``launch run`` of ``launch_file`` on ``tasks``."""
    tasks = [{**t, "task_id": i, "source_task_id": t["task_id"]} for i, t in enumerate(tasks)]
    file = tmp_path / f"{name}.json"
    file.write_text(json.dumps(tasks))
    config = yaml.safe_load(launch_file.read_text())
    next(n for n in config["nodes"] if n["id"] == "env")["params"]["tasks"] = [str(file)]
    config["run"]["episodes"] = len(tasks)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / name
    result = launch("run", str(path), "--out", str(out), timeout=timeout)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(records) == len(tasks), records
    return [{**r["metrics"], "status": r["status"]}
            for _, r in sorted(((int(r["metrics"]["task_id"]), r) for r in records), key=lambda x: x[0])]
