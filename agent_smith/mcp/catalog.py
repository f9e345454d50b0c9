"""What a server offers, as listed: server info, resources, prompts, tool schemas.

Parsers for the entries of ``initialize``, ``tools/list``, ``resources/list``
and ``prompts/list``; ``raw`` fields keep whatever is not modelled here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import McpProtocolError
from ..tools.base import ToolSchema


@dataclass(frozen=True)
class ServerInfo:
    """Who the server says it is; ``raw`` is its whole ``initialize`` result."""

    name: str
    version: str
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceInfo:
    """One entry of ``resources/list``; ``raw`` keeps fields not modelled here."""

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PromptInfo:
    """One entry of ``prompts/list``; ``arguments`` as the server declared them."""

    name: str
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolInfo:
    """What ``tools/list`` says of a tool beyond its schema: title, icons, output schema.

    ``icons`` are the server's icon objects (``src``, ``mimeType``, ``sizes``,
    ``theme``); ``annotations`` its behaviour hints (``readOnlyHint``, ...);
    ``task_support`` whether calls may (or must) run as tasks.
    """

    name: str
    title: str | None = None
    icons: list[dict[str, Any]] = field(default_factory=list)
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    task_support: str = "forbidden"  # or "optional", "required" (SEP-1686)
    raw: dict[str, Any] = field(default_factory=dict)


def parse_tool_info(item: dict[str, Any]) -> ToolInfo:
    icons = item.get("icons")
    output = item.get("outputSchema")
    annotations = item.get("annotations")
    execution = item.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return ToolInfo(
        name=str(item.get("name", "")),
        title=_opt_str(item.get("title")),
        icons=[i for i in icons if isinstance(i, dict)] if isinstance(icons, list) else [],
        output_schema=output if isinstance(output, dict) else None,
        annotations=annotations if isinstance(annotations, dict) else {},
        task_support=support if support in ("optional", "required") else "forbidden",
        raw=item,
    )


def parse_tool(alias: str, item: dict[str, Any]) -> ToolSchema:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise McpProtocolError(f"MCP server {alias!r} listed a tool without a name", server=alias)
    schema = item.get("inputSchema")
    if not isinstance(schema, dict):
        schema = {"type": "object", "properties": {}}
    description = item.get("description")
    return ToolSchema(
        name=name,
        description=description if isinstance(description, str) else "",
        parameters=schema,
    )


def parse_resource(item: dict[str, Any]) -> ResourceInfo:
    return ResourceInfo(
        uri=str(item.get("uri", "")),
        name=str(item.get("name", "")),
        description=_opt_str(item.get("description")),
        mime_type=_opt_str(item.get("mimeType")),
        raw=item,
    )


def parse_prompt(item: dict[str, Any]) -> PromptInfo:
    arguments = item.get("arguments")
    if not isinstance(arguments, list):
        arguments = []
    return PromptInfo(
        name=str(item.get("name", "")),
        description=_opt_str(item.get("description")),
        arguments=[a for a in arguments if isinstance(a, dict)],
        raw=item,
    )


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
