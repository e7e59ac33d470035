"""Episode ids: made and read in one place (kernel.bus.episode_ids), one spelling per episode."""

from __future__ import annotations

import pytest

from kernel.bus import messages
from kernel.bus.episode_ids import deal_span, episode_id, episode_index, episode_label

pytestmark = pytest.mark.unit


def test_an_id_reads_back_as_its_index_and_only_its_own_spelling_does():
    assert [episode_id(i) for i in (0, 42, 123456)] == ["ep00000", "ep00042", "ep123456"]
    assert [episode_index(episode_id(i)) for i in (0, 42, 123456)] == [0, 42, 123456]
    for other in ("ep42", "ep000042", "ep-0001", "ep0004x", "EP00042", "ep", "", "ep００００１", 42, None):
        assert episode_index(other) is None, other
    with pytest.raises(ValueError):
        episode_id(-1)


def test_the_control_messages_check_the_same_form_and_labels_and_spans_follow_it():
    assert messages.check("episode.end", {"episode": "ep00003", "status": "completed", "metrics": {}}) is None
    assert messages.check("episode.end", {"episode": "ep3", "status": "completed", "metrics": {}}) is not None
    assert episode_label("ep00007") == "7" and episode_label("warmup") == "warmup"
    assert deal_span(3) == "ep00000..ep00002" and deal_span(None).startswith("ep00000, ep00001")
