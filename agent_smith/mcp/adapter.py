"""MCP tools as agent tools: ``mcp_<alias>__<tool>`` plus ``mcp_<alias>__read_resource``.

Each adapted tool closes over its client, so routing is unambiguous when an
agent holds several servers. When the server announces ``tools/list_changed``
the client refreshes ``client.tools`` before telling its hook, so an agent
that re-runs :func:`adapt_client_tools` from the hook sees the new list.
"""

from __future__ import annotations

from typing import Any

from ..tools.base import Tool, ToolContext, ToolResult, ToolSchema
from .client import McpClient

#: Smallest timeout given to a call when the caller's budget is (nearly) spent.
MIN_CALL_TIMEOUT = 0.001


def tool_prefix(alias: str) -> str:
    """The prefix every adapted tool of server ``alias`` carries."""
    return f"mcp_{alias}__"


def adapt_client_tools(client: McpClient) -> list[Tool]:
    """The client's (filtered) tools and its resource reader, as agent tools."""
    tools: list[Tool] = [McpTool(client, schema) for schema in client.tools]
    tools.append(ReadResourceTool(client))
    return tools


class McpTool(Tool):
    """One MCP tool; ``invoke`` calls it within the context's budget and cancel token."""

    def __init__(self, client: McpClient, remote: ToolSchema) -> None:
        self._client = client
        self.remote_name = remote.name
        self._schema = ToolSchema(
            name=tool_prefix(client.alias) + remote.name,
            description=remote.description,
            parameters=remote.parameters,
        )

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self._client.call_tool(
            self.remote_name,
            args,
            timeout=max(ctx.budget, MIN_CALL_TIMEOUT),
            cancel=ctx.cancel,
        )


class ReadResourceTool(Tool):
    """The synthetic ``mcp_<alias>__read_resource(uri)`` tool."""

    def __init__(self, client: McpClient) -> None:
        self._client = client
        known = ", ".join(r.uri for r in client.resources[:20])
        description = f"Read a resource of MCP server {client.alias!r} by URI."
        if known:
            description += f" Known resources: {known}."
        self._schema = ToolSchema(
            name=tool_prefix(client.alias) + "read_resource",
            description=description,
            parameters={
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "The resource URI."}},
                "required": ["uri"],
            },
        )

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timeout = max(ctx.budget, MIN_CALL_TIMEOUT)
        return ToolResult(content=self._client.read_resource(str(args["uri"]), timeout=timeout))
