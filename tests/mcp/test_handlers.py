"""The ready-made handlers: elicitation (form defaults, URL mode) and sampling with a model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import McpClient
from agent_smith.errors import McpError
from agent_smith.llm.request import LlmRequest, LlmResponse
from agent_smith.mcp.elicitation import Elicitation, form_defaults
from agent_smith.mcp.sampling import SamplingHandler
from agent_smith.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from tests.mcp.scripted import ScriptedServer

Connect = Callable[..., McpClient]

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "nick": {"type": "string"},
    },
}


def test_form_mode_accepts_with_the_schemas_defaults() -> None:
    answer = Elicitation()({"message": "who?", "requestedSchema": SCHEMA})
    assert answer == {"action": "accept", "content": {"name": "John Doe", "age": 30}}
    assert form_defaults("m", {}) == {}


def test_url_mode_opens_the_url_and_declares_both_modes(scripted: Connect) -> None:
    opened: list[str] = []
    handler = Elicitation(url=lambda message, url: opened.append(url) or True)
    params = {"mode": "url", "url": "https://pay.example/x", "message": "pay", "elicitationId": "1"}
    assert handler(params) == {"action": "accept"} and opened == ["https://pay.example/x"]
    assert Elicitation(form=None)(params) == {"action": "decline"}  # no URL callback
    server = ScriptedServer()
    scripted(server, elicitation_handler=handler, protocol="legacy")
    assert server.sent[0]["params"]["capabilities"]["elicitation"] == {"form": {}, "url": {}}


class FakeModel:
    def __init__(self, reply: AssistantMessage) -> None:
        self.reply = reply
        self.requests: list[LlmRequest] = []

    def complete(self, request: LlmRequest) -> LlmResponse:
        self.requests.append(request)
        return LlmResponse(
            self.reply, "tool_calls" if self.reply.tool_calls else "stop", model="m1"
        )


def test_sampling_with_tools_is_answered_by_the_model() -> None:
    model = FakeModel(AssistantMessage(tool_calls=(ToolCall("c2", "lookup", {"q": "x"}),)))
    params: dict[str, Any] = {
        "systemPrompt": "be brief",
        "maxTokens": 50,
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "find x"}},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c1", "name": "lookup", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "toolUseId": "c1",
                        "content": [{"type": "text", "text": "none"}],
                    }
                ],
            },
        ],
        "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "auto"},
    }
    result = SamplingHandler(model)(params)
    assert result == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "c2", "name": "lookup", "input": {"q": "x"}}],
        "model": "m1",
        "stopReason": "toolUse",
    }
    (request,) = model.requests
    assert [type(m).__name__ for m in request.messages] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolMessage",
    ]
    assert isinstance(request.messages[1], UserMessage) and request.messages[1].content == "find x"
    assert isinstance(request.messages[3], ToolMessage) and request.messages[3].content == "none"
    assert request.sampling.max_tokens == 50 and request.tool_choice == "auto"
    assert [t.name for t in request.tools] == ["lookup"]


def test_a_declined_sampling_request_is_the_servers_error_answer(scripted: Connect) -> None:
    model = FakeModel(AssistantMessage("hi"))
    handler = SamplingHandler(model, approve=lambda params: False)
    with pytest.raises(McpError, match="declined"):
        handler({"messages": []})
    server = ScriptedServer()
    scripted(server, sampling_handler=handler, protocol="legacy")
    assert server.sent[0]["params"]["capabilities"]["sampling"] == {"tools": {}}
    server.push({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}})
    answer = server.wait_for_answers({7})[7]
    assert answer["error"]["code"] == -1 and model.requests == []
    text = SamplingHandler(model)(
        {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}]}
    )
    assert text["content"] == {"type": "text", "text": "hi"} and text["stopReason"] == "endTurn"


def test_a_handler_that_does_not_answer_in_time_becomes_an_error_answer(
    scripted: Connect,
) -> None:
    release = threading.Event()

    def stuck(params: dict[str, Any]) -> dict[str, Any]:
        release.wait(10)
        return {"action": "decline"}

    try:
        server = ScriptedServer()
        scripted(server, elicitation_handler=stuck, handler_timeout=0.2, protocol="legacy")
        server.push({"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {}})
        answer = server.wait_for_answers({5})[5]
        assert answer["error"]["code"] == -32603 and "within 0.2s" in answer["error"]["message"]
        # 2026-07-28: the call that needed the input fails instead of hanging.
        wants = {
            "resultType": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create"}},
        }
        modern = ScriptedServer(
            {
                "server/discover": lambda p: {
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                },
                "tools/call": lambda p: wants,
            }
        )
        client = scripted(modern, elicitation_handler=stuck, handler_timeout=0.2)
        with pytest.raises(McpError, match=r"within 0\.2s"):
            client.call_tool("echo", {})
    finally:
        release.set()
