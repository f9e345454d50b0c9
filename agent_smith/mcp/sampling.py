"""A ready-made sampling handler: the server's ``sampling/createMessage`` answered by your model.

``SamplingHandler(model)`` turns the server's messages (text, tool uses,
tool results), system prompt, ``maxTokens``, ``temperature``,
``stopSequences``, ``tools`` and ``toolChoice`` into one chat request for
``model`` (an :class:`~agent_smith.LlmClient`, or anything with its
``complete(request)``), and the reply into the spec's result: text, or
``tool_use`` blocks with ``stopReason: "toolUse"``. The optional ``approve``
hook sees the request's params first (a person reviewing what the server
wants to ask the model); False declines it, which the server receives as an
error answer. Pass it as ``McpClient.connect(..., sampling_handler=...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import McpError
from ..llm.request import LlmRequest, LlmResponse, SamplingParams
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from ..tools.base import ToolSchema

#: The JSON-RPC code of a sampling request the user declined (the spec's convention).
USER_REJECTED = -1


class CompletesChat(Protocol):
    """What the handler needs of a model: one blocking completion."""

    def complete(self, request: LlmRequest) -> LlmResponse: ...


class SamplingHandler:
    """Answers sampling requests with ``model``, after ``approve`` (if given) says yes."""

    #: Tells the client to declare ``sampling.tools``: requests may carry tools.
    supports_tools = True

    def __init__(
        self, model: CompletesChat, *, approve: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self._model = model
        self._approve = approve

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._approve is not None and not self._approve(params):
            raise McpError("the user declined the sampling request", server="", rpc_code=-1)
        reply = self._model.complete(sampling_request(params))
        return sampling_result(reply)


def sampling_request(params: dict[str, Any]) -> LlmRequest:
    """The chat request a ``sampling/createMessage`` asks for."""
    messages: list[Message] = []
    system = params.get("systemPrompt")
    if isinstance(system, str) and system:
        messages.append(SystemMessage(system))
    for entry in params.get("messages") or []:
        messages.extend(_messages(entry))
    tools = tuple(
        ToolSchema(
            name=str(t.get("name", "")),
            description=str(t.get("description") or ""),
            parameters=t.get("inputSchema") or {"type": "object", "properties": {}},
        )
        for t in params.get("tools") or []
        if isinstance(t, dict)
    )
    choice = params.get("toolChoice")
    mode = choice.get("mode") if isinstance(choice, dict) else None
    stop = params.get("stopSequences")
    temperature = params.get("temperature")
    max_tokens = params.get("maxTokens")
    return LlmRequest(
        messages=tuple(messages),
        tools=tools,
        tool_choice=mode if mode in ("auto", "required", "none") and tools else None,
        sampling=SamplingParams(
            temperature=float(temperature) if isinstance(temperature, (int, float)) else None,
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
            stop=tuple(s for s in stop if isinstance(s, str)) if isinstance(stop, list) else (),
        ),
    )


def sampling_result(reply: LlmResponse) -> dict[str, Any]:
    """The ``sampling/createMessage`` result for the model's reply."""
    message = reply.message
    model = reply.model or "unknown"
    if message.tool_calls:
        blocks: list[dict[str, Any]] = []
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
            for c in message.tool_calls
        )
        return {"role": "assistant", "content": blocks, "model": model, "stopReason": "toolUse"}
    stop = "maxTokens" if reply.finish_reason == "length" else "endTurn"
    return {
        "role": "assistant",
        "content": {"type": "text", "text": message.content},
        "model": model,
        "stopReason": stop,
    }


def _messages(entry: Any) -> list[Message]:
    """One sampling message as chat messages (tool results become tool messages)."""
    if not isinstance(entry, dict):
        return []
    blocks = entry.get("content")
    blocks = blocks if isinstance(blocks, list) else [blocks]
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    if entry.get("role") == "assistant":
        calls = tuple(
            ToolCall(id=str(b.get("id")), name=str(b.get("name")), arguments=b.get("input") or {})
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_use"
        )
        return [AssistantMessage(content="\n".join(texts), tool_calls=calls)]
    out: list[Message] = [
        ToolMessage(
            tool_call_id=str(b.get("toolUseId")),
            name="",
            content="\n".join(
                str(c.get("text", "")) for c in b.get("content") or [] if isinstance(c, dict)
            ),
        )
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    other = [b for b in blocks if isinstance(b, dict) and b.get("type") in ("image", "audio")]
    if texts or other:
        described = [f"[{b['type']}: {b.get('mimeType', 'unknown type')}]" for b in other]
        out.append(UserMessage("\n".join([*texts, *described])))
    return out
