"""End-to-end smoke test of LlmClient against the scripted loopback server."""

from __future__ import annotations

from agent_smith import (
    Finished,
    LlmClient,
    LlmRequest,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSchema,
    UserMessage,
)
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def test_complete_and_stream_return_the_same_reply(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Text("hello there"), Text("hello there"))
    client = LlmClient(llm_server.url, "m")
    request = LlmRequest((UserMessage("hi"),))

    whole = client.complete(request)
    events = list(client.stream(request))

    assert whole.message.content == "hello there"
    assert [e.text for e in events if isinstance(e, TokenDelta)] == ["hello", " there"]
    assert isinstance(events[-1], Finished)
    assert events[-1].response == whole
    assert (whole.response_id, whole.model) == ("chatcmpl-test", "m")  # as the server said


def test_stream_assembles_tool_calls(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Calls(("add", {"a": 1, "b": "x"})))
    client = LlmClient(llm_server.url)
    request = LlmRequest((UserMessage("hi"),), tools=(ToolSchema("add"),))

    events = list(client.stream(request))

    assert events[0] == ToolCallStarted("call_0", "add", 0)
    assert events[1] == ToolCallCompleted(0, {"a": 1, "b": "x"})
    final = events[-1]
    assert isinstance(final, Finished)
    assert final.finish_reason == "tool_calls"
    assert final.response.message.tool_calls[0].arguments == {"a": 1, "b": "x"}
