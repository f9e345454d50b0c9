"""The in-process test model: scripted replies, a responder function, stream events."""

from __future__ import annotations

import pytest

from agent_smith import (
    AssistantMessage,
    CancellationSource,
    CancelledError,
    ChatModel,
    ConfigError,
    Finished,
    LlmApiError,
    LlmClient,
    LlmRequest,
    TestModel,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
    UserMessage,
)
from agent_smith.llm.testing import call

REQUEST = LlmRequest((UserMessage("hello there"),))


def test_the_test_model_and_the_http_client_are_both_chat_models() -> None:
    assert isinstance(TestModel(), ChatModel)
    assert isinstance(LlmClient("http://127.0.0.1:9"), ChatModel)
    assert LlmClient("http://127.0.0.1:9", "m").capabilities.provider == "openai"


def test_replies_are_played_in_order_and_every_request_is_kept() -> None:
    weather = call("get_weather", city="Paris")
    model = TestModel([weather, "It is sunny."])
    first = model.complete(REQUEST)
    assert first.finish_reason == "tool_calls"
    assert first.message.tool_calls == (weather,)
    second = model.complete(REQUEST)
    assert (second.message.content, second.finish_reason) == ("It is sunny.", "stop")
    assert model.requests == [REQUEST, REQUEST]
    assert model.remaining == 0
    with pytest.raises(ConfigError, match="no reply left for request 3"):
        model.complete(REQUEST)


def test_a_scripted_error_is_raised_and_a_whole_message_is_kept_as_is() -> None:
    failing = LlmApiError("boom", http_status=500)
    kept = AssistantMessage("done", reasoning="thought about it")
    model = TestModel([failing, kept])
    with pytest.raises(LlmApiError, match="boom"):
        model.complete(REQUEST)
    reply = model.complete(REQUEST).message
    assert (reply.content, reply.reasoning) == ("done", "thought about it")
    assert reply.usage is not None and reply.usage.prompt > 0


def test_a_responder_sees_each_request() -> None:
    model = TestModel(respond=lambda request: f"you said {request.messages[-1].content}")
    assert model.complete(REQUEST).message.content == "you said hello there"
    with pytest.raises(ConfigError, match="replies or respond"):
        TestModel(["x"], respond=lambda request: "y")


def test_streaming_yields_what_a_server_would() -> None:
    model = TestModel(["Hello from the test model.", [call("a", x=1), call("b")]])
    events = list(model.stream(REQUEST))
    text = "".join(e.text for e in events if isinstance(e, TokenDelta))
    assert text == "Hello from the test model."
    assert isinstance(events[-1], Finished) and events[-1].response.message.content == text
    events = list(model.stream(REQUEST))
    assert [(e.name, e.index) for e in events if isinstance(e, ToolCallStarted)] == [
        ("a", 0),
        ("b", 1),
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallCompleted)] == [{"x": 1}, {}]
    assert isinstance(events[-1], Finished) and events[-1].finish_reason == "tool_calls"


def test_a_cancelled_token_stops_the_reply() -> None:
    source = CancellationSource()
    source.cancel()
    model = TestModel(["never"])
    with pytest.raises(CancelledError):
        model.complete(REQUEST, cancel=source.token)
    with pytest.raises(CancelledError):
        list(model.stream(REQUEST, cancel=source.token))
