"""The ids the kernel deals episodes under (``ep00042`` for index 42): made and read here only, so
the kernel's deck, the results store, the control messages' checks, GraphEnv's seeds and the
report's labels all agree on one form. An id is the index zero-padded to at least five digits;
any other spelling of a number (``ep42``, ``ep000042``) is no dealt id, since it would name the
same episode under a second key."""

from __future__ import annotations

PREFIX = "ep"
DIGITS = 5
PATTERN = rf"^{PREFIX}\d{{{DIGITS},}}$"
"""The form, for schema checks (kernel.bus.messages); :func:`episode_index` also refuses a padding
other than the one :func:`episode_id` writes."""


def episode_id(index: int) -> str:
    """The id of the episode dealt at ``index``."""
    if index < 0:
        raise ValueError(f"an episode index is 0 or more, not {index}")
    return f"{PREFIX}{index:0{DIGITS}d}"


def episode_index(eid: object) -> int | None:
    """The index of a dealt episode's id; None for anything else (another string, or no string)."""
    if not isinstance(eid, str) or not eid.startswith(PREFIX):
        return None
    digits = eid[len(PREFIX):]
    if not (digits.isascii() and digits.isdigit()):
        return None
    index = int(digits)
    return index if episode_id(index) == eid else None


def episode_label(eid: str) -> str:
    """A short label for a plot's axis: the index of a dealt id, else the id as it is."""
    index = episode_index(eid)
    return eid if index is None else str(index)


def deal_span(total: int | None) -> str:
    """The ids a run of ``total`` episodes deals, in words."""
    if total:
        return f"{episode_id(0)}..{episode_id(total - 1)}"
    return f"{episode_id(0)}, {episode_id(1)}, ... (no end)"
