"""MCP client spans: one per request (``tools/call echo``, ``tools/list``...), conventions' names.

The span is current while the request runs, so the Streamable HTTP
transport's POST carries its ``traceparent`` header (the transport reads the
answer on a thread of its own, started in this context). The trace context
also goes into the request's ``params._meta``, as the MCP conventions
recommend, so a stdio server can continue the trace too. ``tools/call``
spans are also GenAI ``execute_tool`` operations; a result with ``isError``
gives ``error.type`` ``tool_error``; a JSON-RPC error gives its code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..observer import JsonObject, McpObservation, McpServerFacts
from .names import (
    EXECUTE_TOOL,
    JSONRPC_REQUEST_ID,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_RESOURCE_URI,
    MCP_SERVER,
    MCP_TRANSPORT,
    NETWORK_PROTOCOL_NAME,
    NETWORK_TRANSPORT,
    OPERATION_NAME,
    PROMPT_NAME,
    RPC_RESPONSE_STATUS_CODE,
    TOOL_ERROR,
    TOOL_NAME,
)
from .otel import api
from .span import Attributes, LiveHandle, LiveSpan, rpc_code, server_attributes

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer


class McpSpan(LiveHandle, McpObservation):
    """The client span of one request ``method`` to ``server``, started when made."""

    __slots__ = ("_tool_call",)

    def __init__(
        self, t: Tracer, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> None:
        transport = str(server.transport)  # ServerConfig settled it: "stdio" for a command
        attributes: Attributes = {
            MCP_METHOD_NAME: method,
            MCP_SERVER: server.alias,
            MCP_TRANSPORT: transport,
        }
        if transport == "stdio":
            attributes[NETWORK_TRANSPORT] = "pipe"
        else:
            attributes.update({NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "http"})
            attributes.update(server_attributes(server.url or ""))
        target = params.get("name") if params else None
        name = method
        if method == "tools/call" and isinstance(target, str):
            attributes.update({OPERATION_NAME: EXECUTE_TOOL, TOOL_NAME: target})
            name = f"{method} {target}"
        elif method == "prompts/get" and isinstance(target, str):
            attributes[PROMPT_NAME] = target
            name = f"{method} {target}"
        elif method == "resources/read" and params and isinstance(params.get("uri"), str):
            attributes[MCP_RESOURCE_URI] = params["uri"]
        self._tool_call = method == "tools/call"
        kind = api().SpanKind.CLIENT
        super().__init__(LiveSpan(t, name, kind, attributes, content=False, attach=True))

    def _leaving(self, error: BaseException | None) -> None:
        code = rpc_code(error)
        if code is not None:
            self._live.set({RPC_RESPONSE_STATUS_CODE: str(code)})

    def propagate(self, params: JsonObject | None) -> JsonObject | None:
        carrier: dict[str, str] = {}
        api().inject(carrier, context=self._live.context)
        if not carrier:
            return params
        params = dict(params or {})
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
        return params

    def sent(self, request_id: int, protocol_version: str) -> None:
        attributes: Attributes = {JSONRPC_REQUEST_ID: str(request_id)}
        if protocol_version:
            attributes[MCP_PROTOCOL_VERSION] = protocol_version
        self._live.set(attributes)

    def finish(self, result: JsonObject) -> JsonObject:
        if self._tool_call and result.get("isError") is True:
            self._live.end(TOOL_ERROR)
        return result
