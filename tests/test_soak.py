"""Soak runs with their thresholds (``bash setup.sh test --soak``): bench/soak.py's measurements, asserted.

* 100k one-step hello episodes: the launcher's resident memory at the 99k mark is within 10% of the
  10k mark (it grew by ~0.6 KB per episode when the episode book kept every record in memory), and
  each node's too; every episode is in the book once.
* a flood of a million malformed messages at a paused run's kernel and environment: each one is
  counted as refused, the world still steps under it, memory stays put, and every episode completes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import soak

pytestmark = pytest.mark.soak


@pytest.mark.timeout(1500)
def test_launcher_and_node_memory_stay_flat_over_100k_episodes(tmp_path: Path) -> None:
    result = soak.memory(tmp_path / "run", episodes=100_000)
    assert result["returncode"] == 0 and result["status"] == "completed", result["log_tail"]
    assert result["episodes_completed"] == result["episodes_in_book"] == result["episodes_unique"] == 100_000
    assert result["measured_from_episode"] <= 11_000 and result["measured_to_episode"] >= 98_000, result
    print({name: (r["rss_mb_first"], r["rss_mb_last"], r["growth_pct"]) for name, r in result["rss"].items()})
    for name in ("launcher", *soak.NODES):
        assert result["rss"][name]["growth_pct"] <= 10.0, (name, result["rss"])


@pytest.mark.timeout(900)
def test_a_million_malformed_messages_are_all_refused_and_counted_and_the_run_completes(tmp_path: Path) -> None:
    result = soak.flood(tmp_path / "run", messages=1_000_000, deadline_s=240.0)
    assert result["returncode"] == 0 and result["status"] == "completed", result["log_tail"]
    # ZeroMQ took most of the flood (a DEALER to a ROUTER waits, never drops), and the peers counted
    # each message it took, under the flooder's identity
    assert result["sent"]["kernel"] >= 500_000 and result["sent"]["env"] >= 150_000, result["sent"]
    assert result["all_counted"], (result["sent"], result["refused"])
    assert result["steps_under_flood"] >= 3
    assert result["episodes_completed"] == result["episodes_unique"] == result["episodes_asked"]
    # queues are bounded: the flood stays in the flooder's memory, not in the kernel's or the env's
    for name, before in result["rss_mb_before"].items():
        assert result["rss_mb_worst"][name] < before + 64, (name, result["rss_mb_before"], result["rss_mb_worst"])
