"""The ``execute_tool {tool}`` span: one tool call, current in the worker that runs it.

The worker already runs in the dispatching turn's context (the pool carries
it over), so the span is a child of the turn's ``invoke_agent`` span; it is
current while the tool runs, so a sub-agent started by the tool, an MCP
request or the application's own spans nest under it. A call the dispatcher
gives up on (timeout, cancellation) has its span ended then, with
``error.type`` ``timeout`` or ``cancelled``; whatever the tool returns later
is not recorded. A call refused before it runs (unknown tool, arguments that
do not fit the schema) gets a span of its own too, ``invalid_tool_call``.
"""

from __future__ import annotations

import sys
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, TypeVar

from ..logs import redact
from ..observer import NO_TOOL, ToolFacts, ToolObservation, ToolResultFacts
from .names import (
    CANCELLED,
    EXECUTE_TOOL,
    INVALID_TOOL_CALL,
    OPERATION_NAME,
    TIMEOUT,
    TOOL_CALL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_CALL_RESULT,
    TOOL_DESCRIPTION,
    TOOL_ERROR,
    TOOL_NAME,
    TOOL_TYPE,
)
from .otel import api
from .span import Attributes, LiveHandle, LiveSpan, error_type

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from ..messages import ToolCall
    from ..runtime import Runtime

T = TypeVar("T", bound=ToolResultFacts)


# The span of the tool call running in this context, for tools that catch
# their own exceptions (``@tool`` functions turn them into error results).
_current: ContextVar[ToolObservation] = ContextVar("agent_smith_tool_span", default=NO_TOOL)


def tool_raised(error: BaseException) -> None:
    """The running tool call (if traced) raised ``error``, which becomes its error result."""
    _current.get().raised(error)


def rejected_tool(t: Tracer, call: ToolCall, problem: str, runtime: Runtime) -> None:
    """Record a call refused before it ran (``problem`` is the message the model gets)."""
    live = ToolSpan(t, call, None, runtime.trace_content)._live
    live.end(INVALID_TOOL_CALL, str(redact(problem)) if live.content else None)


class ToolSpan(LiveHandle, ToolObservation):
    """The span of ``call`` to ``tool``, started when made, to be entered on the worker."""

    __slots__ = ("_error", "_token")

    def __init__(self, t: Tracer, call: ToolCall, tool: ToolFacts | None, content: bool) -> None:
        attributes: Attributes = {
            OPERATION_NAME: EXECUTE_TOOL,
            TOOL_NAME: call.name,
            TOOL_CALL_ID: call.id,
        }
        if tool is not None:
            attributes[TOOL_TYPE] = _tool_type(tool)
            description = tool.schema.description
            if description:
                attributes[TOOL_DESCRIPTION] = description
        name = f"{EXECUTE_TOOL} {call.name}"
        kind = api().SpanKind.INTERNAL
        super().__init__(LiveSpan(t, name, kind, attributes, content=content, attach=True))
        self._error: BaseException | None = None
        self._token: Token[ToolObservation] | None = None
        if self._live.content:
            from . import content as text

            self._live.set({TOOL_CALL_ARGUMENTS: text.tool_arguments(call)})

    def _entered(self) -> None:
        self._token = _current.set(self)

    def _leaving(self, error: BaseException | None) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None

    def raised(self, error: BaseException) -> None:
        self._error = error

    def finish(self, result: T) -> T:
        live = self._live
        if self._error is not None:
            live.end(error_type(self._error), live.describe(self._error))
        elif result.is_error:
            live.end(TOOL_ERROR, str(redact(result.content)) if live.content else None)
        elif live.content:
            from . import content as text

            live.set({TOOL_CALL_RESULT: text.tool_result(result)})
        return result

    def abandon(self, *, timed_out: bool) -> None:
        self._live.end(TIMEOUT if timed_out else CANCELLED)


def _tool_type(tool: ToolFacts) -> str:
    """``extension`` for an MCP server's tools (run elsewhere), ``function`` for ours."""
    adapter = sys.modules.get("agent_smith.mcp.adapter")  # loaded wherever an MCP tool exists
    if adapter is not None and isinstance(tool, (adapter.McpTool, adapter.ReadResourceTool)):
        return "extension"
    return "function"
