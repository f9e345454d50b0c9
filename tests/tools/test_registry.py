"""ToolRegistry: insertion order, duplicates, replace, find, options."""

from __future__ import annotations

import pytest

from agent_smith import ConfigError, ToolOptions
from agent_smith.tools import ToolRegistry, make_tool


def _named(name: str, timeout: float | None = None):  # type: ignore[no-untyped-def]
    def f() -> str:
        return name

    return make_tool(f, name=name, timeout=timeout)


def test_schemas_come_back_in_insertion_order() -> None:
    registry = ToolRegistry()
    for name in ("zeta", "alpha", "mid"):
        registry.add(_named(name))
    assert [s.name for s in registry.schemas()] == ["zeta", "alpha", "mid"]
    assert registry.names() == ["zeta", "alpha", "mid"]
    assert [t.name for t in registry] == ["zeta", "alpha", "mid"]
    assert len(registry) == 3
    assert "alpha" in registry
    assert "beta" not in registry


def test_adding_a_duplicate_name_is_a_config_error() -> None:
    registry = ToolRegistry()
    registry.add(_named("a"))
    with pytest.raises(ConfigError, match="'a'"):
        registry.add(_named("a"))


def test_replace_overwrites_in_place_or_appends() -> None:
    registry = ToolRegistry()
    first, second = _named("a"), _named("b")
    registry.add(first)
    registry.add(second)
    newer = _named("a", timeout=3)
    registry.replace(newer)
    assert registry.names() == ["a", "b"]
    assert registry.find("a") is newer
    registry.replace(_named("c"))
    assert registry.names() == ["a", "b", "c"]


def test_find_remove_and_options() -> None:
    registry = ToolRegistry()
    registry.add(_named("a", timeout=2))
    registry.add(_named("b"), ToolOptions(timeout=9))
    assert registry.options("a") == ToolOptions(timeout=2)
    assert registry.options("b") == ToolOptions(timeout=9)
    assert registry.options("missing") == ToolOptions()
    assert registry.find("missing") is None
    registry.remove("a")
    assert registry.find("a") is None
    with pytest.raises(ConfigError):
        registry.remove("a")
