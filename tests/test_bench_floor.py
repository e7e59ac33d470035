"""bench/floor.py: both floors really pass the request to another process and back."""

from __future__ import annotations

import msgpack

from bench import floor


def test_both_floors_time_round_trips_to_another_process() -> None:
    request = [msgpack.packb({"actions": ["LEFT", "RIGHT"], "t": 0}), b"\0" * 1000]
    for loop in (False, True):
        times = floor.round_trips(request, 50, loop=loop)
        assert len(times) == 50
        assert all(0 < t < 1.0 for t in times)



def test_the_reader_floor_sends_the_record_to_a_third_process_and_is_refused_without_a_loop() -> None:
    import pytest

    request = [msgpack.packb({"actions": ["LEFT", "RIGHT"], "t": 0})]
    record = msgpack.packb({"episode": "ep0", "t": 0, "reward": 1.0})
    assert len(floor.round_trips(request, 50, loop=True, record=record)) == 50
    with pytest.raises(ValueError, match="event loops only"):
        floor.round_trips(request, 50, loop=False, record=record)
