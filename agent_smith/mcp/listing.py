"""What an MCP server offers, listed and kept current: its tools, resources and prompts.

:meth:`Offerings.list_everything` runs on each new connection, after its
handshake; a ``list_changed`` notification lists one kind again
(:meth:`Offerings.refresher`). ``<kind>/list`` may come in pages: every
page is fetched, following ``nextCursor``, and a cursor seen before is
refused (a server going round in circles). Tools pass the config's
allow/deny filter; a failing ``tools/list`` fails the connection unless
``tools_required`` is off. Resources and prompts are listed only when the
server's capabilities name them, and a failure there leaves the list empty.

Each list is replaced whole once fetched, so readers on other threads see
the old list or the new one, never half of either.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import McpError, McpProtocolError
from ..tools.base import ToolSchema
from .catalog import (
    PromptInfo,
    ResourceInfo,
    ToolInfo,
    parse_prompt,
    parse_resource,
    parse_tool,
    parse_tool_info,
)
from .http_headers import header_params

if TYPE_CHECKING:
    from .config import ServerConfig
    from .connection import Connection

log = logging.getLogger(__name__)


class ListCall(Protocol):
    """The client's request path (``RequestPath.request``): method, params, a pinned connection."""

    def __call__(
        self, method: str, params: dict[str, Any] | None, *, conn: Connection | None
    ) -> dict[str, Any]: ...


class Offerings:
    """The tools, resources and prompts of the server of ``config``, as last listed.

    ``call`` sends each list request; ``current`` is the connection whose
    capabilities say what to list when no connection is given.
    """

    def __init__(
        self, config: ServerConfig, *, call: ListCall, current: Callable[[], Connection]
    ) -> None:
        self._config = config
        self._call = call
        self._current = current
        self.tools: list[ToolSchema] = []
        self.tool_infos: dict[str, ToolInfo] = {}
        self.resources: list[ResourceInfo] = []
        self.prompts: list[PromptInfo] = []

    def list_everything(self, conn: Connection) -> None:
        """List all three on a new connection ``conn`` (its handshake done)."""
        self.refresh_tools(conn)
        self.refresh_resources(conn)
        self.refresh_prompts(conn)

    def refresh_tools(self, conn: Connection | None = None) -> list[ToolSchema]:
        """List the tools again; the new list."""
        tools, infos = self._list_tools(conn)
        self.tools, self.tool_infos = tools, infos
        return tools

    def refresh_resources(self, conn: Connection | None = None) -> None:
        self.resources = [parse_resource(r) for r in self._optional_list("resources", conn)]

    def refresh_prompts(self, conn: Connection | None = None) -> None:
        self.prompts = [parse_prompt(p) for p in self._optional_list("prompts", conn)]

    def refresher(self, method: str) -> Callable[[], object] | None:
        """The refresh a ``list_changed`` notification ``method`` asks for; None for others."""
        if method == "notifications/tools/list_changed":
            return self.refresh_tools
        if method == "notifications/resources/list_changed":
            return self.refresh_resources
        if method == "notifications/prompts/list_changed":
            return self.refresh_prompts
        return None

    def _list_tools(self, conn: Connection | None) -> tuple[list[ToolSchema], dict[str, ToolInfo]]:
        alias = self._config.alias
        try:
            raw = self._list_all("tools", conn)
        except McpError as err:
            if self._config.tools_required:
                raise
            log.warning("MCP server %s: tools/list failed (%s); no tools", alias, err)
            return [], {}
        tools: list[ToolSchema] = []
        infos: dict[str, ToolInfo] = {}
        headers: dict[str, dict[str, str]] = {}
        for item in raw:
            tool = parse_tool(alias, item)
            params = header_params(item.get("inputSchema"))
            if params is None:
                log.warning(
                    "MCP server %s: tool %s has an invalid x-mcp-header; left out", alias, tool.name
                )
            elif self._config.allows(tool.name):
                tools.append(tool)
                infos[tool.name] = parse_tool_info(item)
                headers[tool.name] = params
        (conn or self._current()).transport.describe_tools(headers)
        return tools, infos

    def _optional_list(self, kind: str, conn: Connection | None) -> list[dict[str, Any]]:
        if kind not in (conn or self._current()).capabilities:
            return []
        try:
            return self._list_all(kind, conn)
        except McpError as err:
            log.warning("MCP server %s: %s/list failed (%s); empty", self._config.alias, kind, err)
            return []

    def _list_all(self, kind: str, conn: Connection | None) -> list[dict[str, Any]]:
        """Every page of ``<kind>/list``, following ``nextCursor`` (each page via ``call``)."""
        alias = self._config.alias
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params = {"cursor": cursor} if cursor is not None else None
            result = self._call(f"{kind}/list", params, conn=conn)
            page = result.get(kind)
            if not isinstance(page, list) or not all(isinstance(i, dict) for i in page):
                raise McpProtocolError(
                    f"MCP server {alias!r}: {kind}/list result has no list of {kind}",
                    server=alias,
                )
            items.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                return items
            if not isinstance(cursor, str) or cursor in seen:
                raise McpProtocolError(
                    f"MCP server {alias!r}: {kind}/list gave a bad or repeated nextCursor",
                    server=alias,
                )
            seen.add(cursor)
