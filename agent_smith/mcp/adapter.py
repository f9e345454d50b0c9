"""MCP tools as agent tools: ``mcp_<alias>__<tool>`` plus ``mcp_<alias>__read_resource``.

Each adapted tool closes over its client, so routing is unambiguous when an
agent holds several servers. When the server announces ``tools/list_changed``
the client refreshes ``client.tools`` before telling its hook, so an agent
that re-runs :func:`adapt_client_tools` from the hook sees the new list.

Names must match the OpenAI function-name pattern ``^[a-zA-Z0-9_-]{1,64}$``,
but MCP tool names and aliases need not (``files.read``, ``a/b``). Every
other character becomes ``_``; an alias part longer than 24 characters, or a
name longer than 64, is cut and ends in ``_`` plus 8 hex digits of a hash of
the original, so the same server always gives the same names. Each
:class:`McpTool` keeps its ``remote_name``: calls go to the name the server
listed. Two tools whose names collide once sanitised are both kept (the
later one gets the hash suffix) with a warning. A tool that must run as a
task (SEP-1686) is started as one and waited for within the call's budget.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from typing import Any

from ..errors import AgentSmithError, AgentTimeoutError
from ..tools.base import Tool, ToolContext, ToolOptions, ToolResult, ToolSchema
from .client import McpClient
from .tasks import McpTask

log = logging.getLogger(__name__)

#: Smallest timeout given to a call when the caller's budget is (nearly) spent.
MIN_CALL_TIMEOUT = 0.001
#: How long cancelling a task may take once its caller gave up.
_CANCEL_TIMEOUT = 5.0
#: The longest function name the OpenAI API accepts.
MAX_NAME_LENGTH = 64
_MAX_ALIAS_LENGTH = 24  # leaves the tool part at least 30 characters
_HASH_LENGTH = 8
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def tool_prefix(alias: str) -> str:
    """The prefix every adapted tool of server ``alias`` carries."""
    return f"mcp_{_fit(alias, _MAX_ALIAS_LENGTH)}__"


def adapted_name(alias: str, tool: str) -> str:
    """The agent-side name of MCP tool ``tool`` of server ``alias`` (see the module docstring)."""
    prefix = tool_prefix(alias)
    return prefix + _fit(tool, MAX_NAME_LENGTH - len(prefix))


def adapt_client_tools(client: McpClient) -> list[Tool]:
    """The client's (filtered) tools and its resource reader, as agent tools."""
    reader = ReadResourceTool(client)
    taken = {reader.name}
    tools: list[Tool] = []
    for remote in client.tools:
        name = adapted_name(client.alias, remote.name)
        if name in taken:
            unique = _with_hash(name, remote.name, len(name) + 1 + _HASH_LENGTH)
            log.warning(
                "MCP server %s: tool %r becomes %r, which would collide with another tool;"
                " it is called %r",
                client.alias,
                remote.name,
                name,
                unique,
            )
            if unique in taken:  # the server listed the same name twice
                log.warning("MCP server %s listed tool %r twice", client.alias, remote.name)
                continue
            name = unique
        taken.add(name)
        tools.append(McpTool(client, remote, name=name))
    tools.append(reader)
    return tools


def _fit(text: str, limit: int) -> str:
    """``text`` with invalid characters as ``_``, at most ``limit`` long."""
    clean = _INVALID.sub("_", text)
    return clean if len(clean) <= limit else _with_hash(clean, text, limit)


def _with_hash(name: str, original: str, limit: int) -> str:
    """``name`` plus ``_<hash of original>``, cut so the whole is at most ``limit`` (and 64)."""
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()
    room = min(limit, MAX_NAME_LENGTH) - _HASH_LENGTH - 1
    return f"{name[:room]}_{digest[:_HASH_LENGTH]}"


class McpTool(Tool):
    """One MCP tool; ``invoke`` calls it within the context's budget and cancel token."""

    def __init__(self, client: McpClient, remote: ToolSchema, *, name: str | None = None) -> None:
        self._client = client
        #: The tool's name on the server, which calls use (``name`` may be sanitised).
        self.remote_name = remote.name
        self._schema = ToolSchema(
            name=name or adapted_name(client.alias, remote.name),
            description=remote.description,
            parameters=remote.parameters,
        )
        self._options = ToolOptions(requires_approval=client.config.needs_approval(remote.name))

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._options

    def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timeout = max(ctx.budget, MIN_CALL_TIMEOUT)
        info = self._client.tool_info(self.remote_name)
        if info is not None and info.task_support == "required":
            return self._as_task(args, ctx, timeout)
        return self._client.call_tool(self.remote_name, args, timeout=timeout, cancel=ctx.cancel)

    def _as_task(self, args: dict[str, Any], ctx: ToolContext, timeout: float) -> ToolResult:
        """A tool that must run as a task: start it, wait within the budget, fetch the result.

        Running out of budget or being cancelled cancels the task on the server.
        """
        deadline = time.monotonic() + timeout
        handle = self._client.call_tool(
            self.remote_name, args, timeout=timeout, cancel=ctx.cancel, task=True
        )
        unregister = ctx.cancel.on_cancel(lambda: _quietly_cancel(handle))
        try:
            handle.wait(timeout=max(deadline - time.monotonic(), MIN_CALL_TIMEOUT))
            ctx.cancel.raise_if_cancelled(f"MCP task {handle.task_id}")
            return handle.result(timeout=max(deadline - time.monotonic(), MIN_CALL_TIMEOUT))
        except AgentTimeoutError:
            _quietly_cancel(handle)
            raise
        finally:
            unregister()


def _quietly_cancel(handle: McpTask) -> None:
    try:
        handle.cancel(timeout=_CANCEL_TIMEOUT)
    except AgentSmithError as err:  # the task may have ended meanwhile; the caller is told anyway
        log.debug("cancelling MCP task %s failed: %s", handle.task_id, err)


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
        self._options = ToolOptions(requires_approval=client.config.require_approval is True)

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._options

    def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timeout = max(ctx.budget, MIN_CALL_TIMEOUT)
        return ToolResult(content=self._client.read_resource(str(args["uri"]), timeout=timeout))
