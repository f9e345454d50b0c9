"""An agent's tools: its own, its active skills' and its MCP servers', as one registry.

The model sees one effective :class:`ToolRegistry`, rebuilt whenever a part
changes (seed §12.3), in this order:

1. base tools (``add_tool``), in registration order;
2. skill tools, in activation order, named ``<normalized_skill>__<tool>``;
3. MCP tools (``mcp_<alias>__<tool>``): the agent's own clients in binding
   order, then each active skill's clients in activation order (a client
   bound twice is listed once).

A later tool with a name already taken replaces the earlier one, with a
warning; since the registry is rebuilt from the parts, a tool shadowed by a
skill is visible again once that skill is deactivated. A rebuild makes a new
registry object, so a turn that is dispatching calls keeps a stable view.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..errors import SkillError
from ..tools.base import JsonObject, Tool, ToolContext, ToolOptions, ToolResult, ToolSchema
from ..tools.registry import ToolRegistry

# The MCP and skills packages load only once an agent uses them: most agents
# have neither, and they are a good part of the import time (docs/benchmarks.md).
if TYPE_CHECKING:
    from ..mcp.client import McpClient
    from ..mcp.config import ServerConfig
    from ..mcp.events import McpEvent
    from ..mcp.jsonrpc import RequestHandler
    from ..runtime import Runtime
    from ..skills import Skill

log = logging.getLogger("agent_smith.skill")

_LIST_CHANGED = "notifications/tools/list_changed"


class PrefixedTool(Tool):
    """A skill's tool under its ``<skill>__<tool>`` name; everything else delegated."""

    __slots__ = ("_inner", "_schema")

    def __init__(self, inner: Tool, name: str) -> None:
        self._inner = inner
        self._schema = dataclasses.replace(inner.schema, name=name)

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._inner.options

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        return self._inner.invoke(args, ctx)


class McpHook:
    """The hook a tool set installs on an MCP client (runs on the client's event thread).

    On ``tools/list_changed`` (the client has already refreshed its list) the
    client's tools are re-adapted; every event then goes to ``on_event``.
    """

    __slots__ = ("client", "toolset")

    def __init__(self, toolset: ToolSet, client: McpClient | None = None) -> None:
        self.toolset = toolset
        self.client = client

    def __call__(self, event: McpEvent) -> None:
        client = self.client
        if client is not None and getattr(event, "method", None) == _LIST_CHANGED:
            log.info("MCP server %s changed its tools", client.alias)
            self.toolset.client_tools_changed(client)
        self.toolset._on_mcp_event(event)


class ToolSet:
    """Base tools, active skills and bound MCP clients, and the registry they make.

    Every MCP client in the set (the agent's own and the active skills') gets
    an :class:`McpHook` that forwards its events to ``on_mcp_event``; a client
    that leaves the set gets its hook removed.
    """

    def __init__(self, *, on_mcp_event: Callable[[McpEvent], None]) -> None:
        self._on_mcp_event = on_mcp_event
        self._lock = threading.RLock()
        self._base = ToolRegistry()
        self._skills: dict[str, Skill] = {}  # normalized name -> skill, activation order
        self._clients: list[McpClient] = []
        self._adapted: dict[int, list[Tool]] = {}  # id(client) -> its adapted tools
        self._effective: ToolRegistry | None = None

    # -- parts ---------------------------------------------------------------

    def add_tool(self, tool: Tool, options: ToolOptions | None = None) -> None:
        """Add a base tool; ConfigError if a base tool has that name."""
        with self._lock:
            self._base.add(tool, options)
            self._effective = None

    def remove_tool(self, name: str) -> None:
        """Remove a base tool; ConfigError if there is none of that name."""
        with self._lock:
            self._base.remove(name)
            self._effective = None

    def add_client(self, client: McpClient) -> None:
        """Expose an MCP client's tools (once, however often it is added)."""
        with self._lock:
            if any(c is client for c in self._clients):
                return
            if not self._is_bound(client):  # a skill's client is hooked already
                self._bind(client)
            self._clients.append(client)
            self._effective = None

    def connect(
        self,
        config: ServerConfig,
        *,
        runtime: Runtime,
        elicitation_handler: RequestHandler | None,
        sampling_handler: RequestHandler | None,
        roots_handler: RequestHandler | None,
    ) -> McpClient:
        """Connect to an MCP server and add the client (the caller closes it)."""
        from ..mcp.client import McpClient

        # Hooked from the start so the CONNECTED event reaches on_mcp_event too.
        hook = self.new_hook()
        client = McpClient.connect(
            config,
            hook=hook,
            runtime=runtime,
            elicitation_handler=elicitation_handler,
            sampling_handler=sampling_handler,
            roots_handler=roots_handler,
        )
        hook.client = client
        self.add_client(client)
        return client

    def clients(self) -> list[McpClient]:
        """The agent's own MCP clients (not the skills')."""
        with self._lock:
            return list(self._clients)

    def activate(self, skill: Skill, *, context_max_bytes: int) -> None:
        """Activate ``skill`` (again: it moves to the end); SkillError if it cannot be."""
        from ..skills import normalize_skill_name, skill_context_bytes

        key = normalize_skill_name(skill.name)
        size = skill_context_bytes(skill)
        if size > context_max_bytes:
            raise SkillError(
                f"skill {skill.name!r}: context is {size} bytes, over the "
                f"{context_max_bytes}-byte limit (skill_context_max_bytes)",
                skill_name=skill.name,
            )
        with self._lock:
            old = self._skills.pop(key, None)
            self._skills[key] = skill
            for client in skill.mcp_clients:
                if not self._is_bound(client, besides=skill) and (
                    old is None or not any(c is client for c in old.mcp_clients)
                ):
                    self._bind(client)
            if old is not None:
                self._release(old)
            self._effective = None
        log.info("skill %r activated (%d tools)", skill.name, len(skill.tools))

    def deactivate(self, name: str) -> Skill:
        """Deactivate the skill called ``name``; SkillError if it is not active."""
        from ..skills import normalize_skill_name

        key = normalize_skill_name(name)
        with self._lock:
            skill = self._skills.pop(key, None)
            if skill is None:
                raise SkillError(f"skill {name!r} is not active", skill_name=name)
            self._release(skill)
            self._effective = None
        log.info("skill %r deactivated", skill.name)
        return skill

    def unbind_all(self) -> None:
        """Unbind every client (the agent is closing); the parts stay as they are."""
        with self._lock:
            clients = self._all_clients()
        for client in clients:
            self._unbind(client)

    def skills(self) -> list[Skill]:
        """Active skills in activation order."""
        with self._lock:
            return list(self._skills.values())

    def skill_tool_names(self) -> frozenset[str]:
        """The names of the active skills' tools: their own and their MCP servers' only."""
        registry = self.registry()
        with self._lock:
            names = {f"{key}__{t.name}" for key, s in self._skills.items() for t in s.tools}
            for skill in self._skills.values():
                for client in skill.mcp_clients:
                    if not any(c is client for c in self._clients):
                        names.update(t.name for t in self._adapted.get(id(client), ()))
        return frozenset(name for name in names if name in registry)

    def system_prompt(self, base: str) -> str:
        """``base`` with the active skills' sections (seed §12.4)."""
        with self._lock:
            skills = list(self._skills.values())
        if not skills:
            return base
        from ..skills import compose_system_prompt

        return compose_system_prompt(base, skills)

    def client_tools_changed(self, client: McpClient) -> None:
        """Re-adapt ``client``'s tools at the next rebuild (after ``list_changed``)."""
        with self._lock:
            self._adapted.pop(id(client), None)
            self._effective = None

    def new_hook(self) -> McpHook:
        """A hook to pass to ``McpClient.connect``; set its ``client`` once connected."""
        return McpHook(self)

    # -- the effective registry ----------------------------------------------

    def registry(self) -> ToolRegistry:
        """The effective registry; do not mutate it."""
        effective = self._effective
        if effective is not None:
            return effective
        with self._lock:
            if self._effective is None:
                self._effective = self._build()
            return self._effective

    def _build(self) -> ToolRegistry:
        registry = ToolRegistry()
        for tool in self._base:
            registry.add(tool, self._base.options(tool.name))
        for key, skill in self._skills.items():
            for tool in skill.tools:
                _put(registry, PrefixedTool(tool, f"{key}__{tool.name}"), f"skill {skill.name!r}")
        for client in self._all_clients():
            adapted = self._adapted.get(id(client))
            if adapted is None:
                from ..mcp.adapter import adapt_client_tools

                adapted = self._adapted[id(client)] = adapt_client_tools(client)
            for tool in adapted:
                _put(registry, tool, f"MCP server {client.alias!r}")
        live = {id(c) for c in self._all_clients()}
        for stale in [k for k in self._adapted if k not in live]:
            del self._adapted[stale]
        return registry

    def _all_clients(self) -> list[McpClient]:
        seen: list[McpClient] = []
        for client in _chain(self._clients, *(s.mcp_clients for s in self._skills.values())):
            if not any(c is client for c in seen):
                seen.append(client)
        return seen

    def _is_bound(self, client: McpClient, *, besides: Skill | None = None) -> bool:
        if any(c is client for c in self._clients):
            return True
        return any(
            c is client for s in self._skills.values() if s is not besides for c in s.mcp_clients
        )

    def _bind(self, client: McpClient) -> None:
        client.set_hook(McpHook(self, client))

    def _unbind(self, client: McpClient) -> None:
        client.set_hook(None)

    def _release(self, skill: Skill) -> None:
        for client in skill.mcp_clients:
            if not self._is_bound(client, besides=skill):
                self._unbind(client)


def _put(registry: ToolRegistry, tool: Tool, source: str) -> None:
    if tool.name in registry:
        log.warning("tool %r from %s replaces an earlier tool of that name", tool.name, source)
        registry.replace(tool)
    else:
        registry.add(tool)


def _chain(*groups: Iterable[McpClient]) -> Iterable[McpClient]:
    for group in groups:
        yield from group
