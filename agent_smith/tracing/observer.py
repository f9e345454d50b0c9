"""The OpenTelemetry implementation of the observer seam (:mod:`agent_smith.observer`).

``agent_smith/__init__.py`` installs :data:`OTEL_OBSERVER` when the package
is imported. While the application does not trace (:func:`.otel.tracer` is
None) each method returns the seam's shared no-op observation after that one
check, and nothing else of tracing is imported: the span modules load with
the first live span.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..observer import (
    NO_CHAT,
    NO_MCP,
    NO_TOOL,
    ChatClientFacts,
    ChatObservation,
    ChatRequestFacts,
    JsonObject,
    McpObservation,
    McpServerFacts,
    Observer,
    ToolFacts,
    ToolObservation,
)
from .agent_span import approval, compaction_event, guardrail_verdict
from .otel import api, tracer

if TYPE_CHECKING:
    from ..messages import ToolCall
    from ..runtime import Runtime


class OtelObserver(Observer):
    """Spans for LLM calls, tool calls and MCP requests while the application traces."""

    __slots__ = ()

    def on_chat_start(
        self, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> ChatObservation:
        t = tracer()
        if t is None:
            return NO_CHAT
        return _live().ChatSpan(t, client, request, body)

    def on_tool_start(self, call: ToolCall, tool: ToolFacts, runtime: Runtime) -> ToolObservation:
        t = tracer()
        if t is None:
            return NO_TOOL
        return _live().ToolSpan(t, call, tool, runtime.trace_content)

    def on_tool_rejected(self, call: ToolCall, problem: str, runtime: Runtime) -> None:
        t = tracer()
        if t is not None:
            _live().rejected_tool(t, call, problem, runtime)

    def on_tool_raised(self, error: BaseException) -> None:
        if tracer() is not None:
            _live().tool_raised(error)

    def on_mcp_request(
        self, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> McpObservation:
        t = tracer()
        if t is None:
            return NO_MCP
        return _live().McpSpan(t, server, method, params)

    def on_approval(
        self, call: ToolCall, decision: str, *, asked: bool, waited: float = 0.0
    ) -> None:
        approval(call, decision)

    def on_guardrail(self, stage: str, name: str, action: str, call_id: str | None) -> None:
        guardrail_verdict(stage, name, action, call_id)

    def on_compaction(
        self, replaced: int, kept: int, tokens_before: int, tokens_after: int
    ) -> None:
        compaction_event(replaced, kept, tokens_before, tokens_after)

    def inject(self, headers: dict[str, str]) -> None:
        if tracer() is not None:
            api().inject(headers)


OTEL_OBSERVER = OtelObserver()


class _Spans:
    """The span modules' entry points, imported with the first live span."""

    def __init__(self) -> None:
        from . import chat_span, mcp_span, tool_span

        self.ChatSpan = chat_span.ChatSpan
        self.ToolSpan = tool_span.ToolSpan
        self.McpSpan = mcp_span.McpSpan
        self.rejected_tool = tool_span.rejected_tool
        self.tool_raised = tool_span.tool_raised


_spans: _Spans | None = None


def _live() -> _Spans:
    global _spans
    if _spans is None:
        _spans = _Spans()  # two threads may both build it: the same functions either way
    return _spans
