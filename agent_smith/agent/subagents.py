"""Sub-agents: child agents the model calls as tools (seed §14).

A :class:`SubAgentSpec` describes a child agent as a *factory*: a
:class:`SubAgentTool` may run many times, concurrently, so every invocation
builds fresh state — a new memory (``memory_factory()`` or a ``FullMemory``),
new tools (every factory called again) — and a new :class:`Agent` that
lives for that one call. The model sees one argument, ``task``; the child's
final answer is the tool result.

Where the parent comes from. The tool needs its caller (the agent whose
model asked for it) only at invoke time, and gets it from
``ToolContext.agent``, which the dispatcher fills in. So one tool object
works wherever a tool can go — ``Agent(tools=[...])``, ``add_tool``, a
skill's tools, or a spec's ``tool_factories`` for nesting — and the parent
is never frozen at construction: a nested ``SubAgentTool`` built by a
factory runs under the child that called it, at the child's depth.
:meth:`Agent.add_subagent` is the one-line way to register one.

The child is built with :meth:`Agent.spawn_child`, which gives it

* depth = caller's depth + 1, so its own tool calls (and sub-agents) run on
  the next depth's worker pool — no wait cycle between levels (see
  :mod:`agent_smith._internal.pool`);
* the caller's :class:`~agent_smith.agent.tree.AgentTree`: one thread-safe
  iteration budget (``tree_max_iterations`` of the root's config) for every
  agent of the tree, and the tree's cancellation;
* cancellation linked to the call's ``ctx.cancel`` (a timeout or a cancelled
  parent) and to the tree, so cancelling the root stops every live
  descendant with ``CancelledError``;
* hooks that report its events to the caller's ``on_subagent_event`` as
  ``SubAgentEvent(name=spec.name, depth, event, invocation, parent)``, with
  an id of its own per invocation and the caller's id as ``parent``; a
  grandchild's events pass up unchanged, already tagged with their own;
* its usage added to the caller's turn when its send ends (finished,
  stopped or failed), so the root's ``usage`` covers the whole tree and
  counts against each ancestor's ``max_total_tokens``.

Failures are tool results, never exceptions out of the parent's loop:

* depth limit — a caller at depth ``d`` may start a child only while
  ``d < caller.config.max_subagent_depth`` (default 3: children at depths
  1-3; 0 disables sub-agents). Beyond it the model gets an error result.
* a child that stops (``AgentStopped``: its own ``max_iterations``, the
  tree's ``tree_iterations``, a deadline, ...) or fails (an LLM error) gives
  an error result naming the sub-agent and the condition; the parent's model
  sees it and may carry on. When the tree budget is spent the parent's own
  next round stops too, so the root ends with
  ``AgentStopped(condition="tree_iterations")``.

``spec.config`` ``None`` means the child inherits the caller's config
(including ``max_subagent_depth``). MCP clients in ``spec.mcp_clients`` are
shared, not owned: their tools are adapted afresh for each child, but the
child does not take over the client's event hook (several children may use
one client at once, and its owner keeps its events).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import AgentSmithError, AgentStopped, CancelledError, ConfigError
from ..mcp.adapter import adapt_client_tools
from ..memory import FullMemory, Memory
from ..steps import current_steps
from ..tools.base import (
    ApprovalMarker,
    JsonObject,
    Tool,
    ToolContext,
    ToolOptions,
    ToolResult,
    ToolSchema,
    check_tool_name,
)
from ..tools.convert import to_json_value
from .agent import Agent
from .config import AgentConfig
from .output import OutputMode, check_output_options

if TYPE_CHECKING:
    from ..llm.model import ChatModel
    from ..mcp.client import McpClient

log = logging.getLogger("agent_smith.agent")

#: A callable that makes one fresh tool (a Tool or a plain function) per call.
ToolFactory = Callable[[], "Tool | Callable[..., Any]"]

_TASK_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "description": "Instruction for the sub-agent"},
    },
    "required": ["task"],
}


@dataclass(frozen=True)
class SubAgentSpec:
    """How to build a sub-agent; every invocation builds a fresh one from it.

    ``name`` is the tool name the model sees (1-64 letters, digits, ``_`` or
    ``-``) and the name its events are tagged with; ``description`` tells the
    model when to use it. ``tool_factories`` are called once per invocation,
    each returning a new tool (a :class:`Tool` or a plain function).
    ``memory_factory`` makes the child's memory (default ``FullMemory``).
    ``config`` ``None``: the calling agent's config. ``requires_approval``
    (``True`` or a predicate of the call's arguments) makes each invocation
    wait for approval, like a tool's. With ``output_type`` the child's turn
    must end in a valid value of that type (``output_mode`` as for
    :meth:`Agent.send`), returned to the parent as JSON text plus
    ``structured``.
    """

    name: str
    description: str
    system_prompt: str = ""
    tool_factories: Sequence[ToolFactory] = ()
    mcp_clients: Sequence[McpClient] = ()
    memory_factory: Callable[[], Memory] | None = None
    config: AgentConfig | None = None
    requires_approval: ApprovalMarker = False
    output_type: Any = None
    output_mode: OutputMode | None = None

    def __post_init__(self) -> None:
        check_tool_name(self.name, kind="sub-agent")
        ToolOptions(requires_approval=self.requires_approval)  # ConfigError if it is no marker
        check_output_options(self.output_type, self.output_mode)
        object.__setattr__(self, "tool_factories", tuple(self.tool_factories))
        object.__setattr__(self, "mcp_clients", tuple(self.mcp_clients))


class SubAgentTool(Tool):
    """A tool that runs a fresh sub-agent built from ``spec`` on the given ``task``.

    ``llm`` ``None``: the calling agent's client. ``timeout`` (seconds) is the
    call's default tool timeout; without it the caller's
    ``default_tool_timeout`` applies, which a sub-agent doing several rounds
    may need more than.
    """

    def __init__(
        self,
        spec: SubAgentSpec,
        llm: ChatModel | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ConfigError(f"sub-agent {spec.name!r}: timeout must be positive")
        self.spec = spec
        self._llm = llm
        # Idempotent: in a durable turn the child's turn is a child workflow whose steps are
        # recorded, so running the call again after a crash replays them and goes on.
        self._options = ToolOptions(
            timeout=timeout, requires_approval=spec.requires_approval, idempotent=True
        )
        self._schema = ToolSchema(spec.name, spec.description, _TASK_SCHEMA)

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    @property
    def options(self) -> ToolOptions:
        return self._options

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        spec = self.spec
        parent = ctx.agent
        if not isinstance(parent, Agent):  # None: called outside an agent's loop
            return ToolResult(
                f"sub-agent {spec.name!r} can only run as a tool call of an agent",
                is_error=True,
            )
        limit = parent.config.max_subagent_depth
        if parent.depth >= limit:
            log.info(
                "agent %s: sub-agent %s refused at depth %d (max_subagent_depth %d)",
                parent.name,
                spec.name,
                parent.depth + 1,
                limit,
            )
            return ToolResult(
                f"sub-agent depth limit reached: {spec.name!r} would run at depth "
                f"{parent.depth + 1}, max_subagent_depth is {limit}",
                is_error=True,
            )
        return current_steps().subturn(lambda: self._run_child(parent, str(args["task"]), ctx))

    def _run_child(self, parent: Agent, task: str, ctx: ToolContext) -> ToolResult:
        """A fresh sub-agent's turn on ``task``: its answer as the call's result."""
        spec = self.spec
        child = parent.spawn_child(
            name=spec.name,
            system_prompt=spec.system_prompt,
            tools=self._fresh_tools(),
            memory=spec.memory_factory() if spec.memory_factory is not None else FullMemory(),
            config=spec.config,
            llm=self._llm,
            cancel=ctx.cancel,
        )
        log.debug("agent %s: sub-agent %s starts at depth %d", parent.name, spec.name, child.depth)
        try:
            answer = child.send(task, output_type=spec.output_type, output_mode=spec.output_mode)
        except AgentStopped as err:
            return ToolResult(
                f"sub-agent {spec.name!r} stopped ({err.condition}): {err}",
                is_error=True,
                structured={"subagent": spec.name, "stopped": err.condition},
            )
        except CancelledError as err:
            return ToolResult(f"sub-agent {spec.name!r} was cancelled: {err}", is_error=True)
        except AgentSmithError as err:
            return ToolResult(f"sub-agent {spec.name!r} failed: {err}", is_error=True)
        finally:
            child.close()
        if spec.output_type is None:
            return ToolResult(answer.content)
        value = to_json_value(answer.output)
        return ToolResult(json.dumps(value, ensure_ascii=False), structured=value)

    def _fresh_tools(self) -> list[Tool | Callable[..., Any]]:
        tools: list[Tool | Callable[..., Any]] = [make() for make in self.spec.tool_factories]
        for client in self.spec.mcp_clients:
            tools.extend(adapt_client_tools(client))
        return tools

    def __repr__(self) -> str:
        return f"SubAgentTool({self.spec.name!r})"
