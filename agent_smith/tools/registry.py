"""The tool registry: tools by name, their options, schemas in insertion order."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ConfigError
from .base import Tool, ToolOptions, ToolSchema


class ToolRegistry:
    """An ordered name -> tool map; the order is the order schemas are sent in.

    Not thread-safe: an agent changes its registry only between turns.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Tool, ToolOptions]] = {}

    def add(self, tool: Tool, options: ToolOptions | None = None) -> None:
        """Register ``tool``; ConfigError if its name is taken.

        ``options`` default to the tool's own ``tool.options``.
        """
        name = tool.name
        if name in self._entries:
            raise ConfigError(f"a tool named {name!r} is already registered")
        self._entries[name] = (tool, options if options is not None else tool.options)

    def replace(self, tool: Tool, options: ToolOptions | None = None) -> None:
        """Register ``tool``, overwriting one of the same name in its position."""
        self._entries[tool.name] = (tool, options if options is not None else tool.options)

    def remove(self, name: str) -> None:
        """Unregister ``name``; ConfigError if there is no such tool."""
        if self._entries.pop(name, None) is None:
            raise ConfigError(f"no tool named {name!r} is registered")

    def find(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        entry = self._entries.get(name)
        return entry[0] if entry is not None else None

    def options(self, name: str) -> ToolOptions:
        """The registration options of ``name`` (defaults for an unknown name)."""
        entry = self._entries.get(name)
        return entry[1] if entry is not None else ToolOptions()

    def schemas(self) -> tuple[ToolSchema, ...]:
        """Every tool's schema, in insertion order."""
        return tuple(tool.schema for tool, _ in self._entries.values())

    def names(self) -> list[str]:
        """Tool names in insertion order."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Tool]:
        return iter([tool for tool, _ in self._entries.values()])

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"
