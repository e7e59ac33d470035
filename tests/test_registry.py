"""Resolving a node's ``uses``: what a node process does at start, without the launch-file loader."""

from __future__ import annotations

import pytest

from kernel.sdk.registry import UnknownNodeType, load_node_class, resolve_uses


def test_resolve_uses() -> None:
    assert resolve_uses("json:JSONDecoder") == "json:JSONDecoder"
    assert resolve_uses("hello.env") == "nodes.game.hello:CountdownEnv"
    with pytest.raises(UnknownNodeType) as info:
        resolve_uses("hello.envv")
    assert info.value.suggestion == "hello.env"
    assert "hello.agent" in info.value.allowed


def test_load_node_class() -> None:
    assert load_node_class("hello.env").__name__ == "CountdownEnv"
    with pytest.raises(TypeError, match="not a framebus Node"):
        load_node_class("json:JSONDecoder")
