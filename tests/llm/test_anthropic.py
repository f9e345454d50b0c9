"""AnthropicClient against a wire fake: the SSE grammar, replayed blocks, errors, retries."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agent_smith import (
    AnthropicClient,
    AssistantMessage,
    Finished,
    LlmApiError,
    LlmRequest,
    ParseError,
    ProviderData,
    ReasoningDelta,
    RetryPolicy,
    Runtime,
    SamplingParams,
    SystemMessage,
    TokenDelta,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolMessage,
    ToolSchema,
    TransportError,
    UserMessage,
)
from agent_smith.llm.anthropic_reply import AnthropicStreamDecoder
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER, anthropic_events, reply_of, sse

NOW = ToolSchema("now", "The time.")  # no parameters
THINKING = {"type": "thinking", "thinking": "The user wants weather.", "signature": "EqQBCkYI=="}
REQUEST = LlmRequest((SystemMessage("Be brief."), UserMessage("Weather?")), (WEATHER, NOW))


@pytest.fixture
def model(llm_server: ScriptedLlmServer, runtime: Runtime) -> AnthropicClient:
    return AnthropicClient(llm_server.url, "claude-wire", api_key="sk-ant-secret", runtime=runtime)


def thinking_then_two_calls() -> Chunks:
    return Chunks(
        *anthropic_events(
            [
                THINKING,
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}},
            ],
            stop_reason="tool_use",
            usage={"cache_read_input_tokens": 100, "cache_creation_input_tokens": 7},
        )
    )


def test_a_streamed_tool_round_keeps_signed_thinking_and_parallel_calls(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    llm_server.script(thinking_then_two_calls())
    events = list(model.stream(REQUEST))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["The user wants weather."]
    assert [(e.id, e.name, e.index) for e in events if isinstance(e, ToolCallStarted)] == [
        ("toolu_1", "get_weather", 0),
        ("toolu_2", "now", 1),
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallCompleted)] == [
        {"city": "Oslo"},
        {},  # a tool without parameters: one empty partial_json
    ]
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.finish_reason == "tool_calls"
    message = finished.response.message
    assert message.reasoning == "The user wants weather."
    assert message.provider_data == ProviderData("anthropic", {"blocks": [THINKING]})
    usage = finished.usage
    assert usage is not None
    assert (usage.prompt, usage.completion, usage.cache_read, usage.cache_write) == (
        132,
        42,
        100,
        7,
    )
    assert finished.response.model == "claude-wire"


def test_the_signed_thinking_goes_back_verbatim_before_the_tool_use_blocks(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    llm_server.script(
        thinking_then_two_calls(), Chunks(*anthropic_events([{"type": "text", "text": "Sunny."}]))
    )
    first = reply_of(model.stream(REQUEST)).message
    history = (
        *REQUEST.messages,
        first,
        ToolMessage("toolu_1", "get_weather", "sunny"),
        ToolMessage("toolu_2", "now", "noon"),
    )
    answer = reply_of(model.stream(LlmRequest(history, REQUEST.tools)))
    assert answer.message.content == "Sunny."
    sent = llm_server.requests[1]
    assert sent["system"] == "Be brief."
    assert sent["messages"][1] == {
        "role": "assistant",
        "content": [
            THINKING,
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}},
        ],
    }
    assert sent["messages"][2] == {  # both results in one user turn
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "noon"},
        ],
    }
    headers = {k.lower(): v for k, v in llm_server.headers[1].items()}
    assert headers["x-api-key"] == "sk-ant-secret" and headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers


def test_redacted_thinking_and_server_tool_blocks_pass_through_and_are_never_run(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}
    search = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "oslo"},
    }
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    llm_server.script(
        Chunks(*anthropic_events([redacted, search, found, {"type": "text", "text": "Snow."}]))
    )
    events = list(model.stream(REQUEST))
    assert not [e for e in events if isinstance(e, ToolCallStarted)]
    message = events[-1].response.message  # type: ignore[union-attr]
    assert message.tool_calls == () and message.content == "Snow."
    text = {"type": "text", "text": "Snow."}  # a server tool ran: the reply is kept whole
    assert message.replay_for("anthropic") == {
        "blocks": [redacted, search, found, text],
        "whole": True,
    }


def test_a_server_tool_turn_goes_back_in_its_order_unless_its_text_was_rewritten(
    model: AnthropicClient,
) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    said = [{"type": "text", "text": "Looking. "}, search, found, {"type": "text", "text": "Snow."}]
    data = ProviderData("anthropic", {"blocks": said, "whole": True})
    kept = AssistantMessage("Looking. Snow.", provider_data=data)
    rewritten = AssistantMessage("[redacted]", provider_data=data)  # by an output guardrail
    for turn, sent in (
        (kept, said),
        (rewritten, [search, found, {"type": "text", "text": "[redacted]"}]),
    ):
        body = model.body(LlmRequest((UserMessage("a"), turn, UserMessage("b"))), stream=False)
        assert body["messages"][1] == {"role": "assistant", "content": sent}


def test_another_providers_data_and_reasoning_are_dropped(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    llm_server.script(Chunks(*anthropic_events([{"type": "text", "text": "ok"}])))
    foreign = AssistantMessage(
        "earlier", reasoning="hidden", provider_data=ProviderData("gcp.gemini", {"sig": "x"})
    )
    list(model.stream(LlmRequest((UserMessage("a"), foreign, UserMessage("b")))))
    assert llm_server.requests[0]["messages"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "earlier"},
        {"role": "user", "content": "b"},
    ]


def test_complete_reads_a_whole_message(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-wire",
        "content": [THINKING, {"type": "tool_use", "id": "t1", "name": "now", "input": {}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    llm_server.script(Raw(200, json.dumps(body)))
    reply = model.complete(REQUEST)
    assert reply.message.tool_calls == (ToolCall("t1", "now", {}),)
    assert reply.message.replay_for("anthropic") == {"blocks": [THINKING]}
    assert reply.finish_reason == "tool_calls" and reply.response_id == "msg_1"


def test_caching_marks_system_last_tool_and_latest_turn(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    model = AnthropicClient(llm_server.url, cache=True, thinking_budget=2048, runtime=runtime)
    llm_server.script(Chunks(*anthropic_events([{"type": "text", "text": "ok"}])))
    list(model.stream(REQUEST))
    sent = llm_server.requests[0]
    ephemeral = {"type": "ephemeral"}
    assert sent["system"] == [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}]
    assert [t.get("cache_control") for t in sent["tools"]] == [None, ephemeral]
    assert sent["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["max_tokens"] == 4096


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ({"type": "function", "function": {"name": "now"}}, {"type": "tool", "name": "now"}),
    ],
)
def test_tool_choice_maps_to_anthropics_forms(
    choice: object, wire: object, model: AnthropicClient
) -> None:
    request = LlmRequest(REQUEST.messages, REQUEST.tools, tool_choice=choice)  # type: ignore[arg-type]
    assert model.body(request, stream=False)["tool_choice"] == wire


def test_a_json_schema_goes_as_output_config(model: AnthropicClient) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    body = model.body(
        LlmRequest((UserMessage("hi"),), sampling=SamplingParams(response_format=fmt)), stream=False
    )
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}


# -- errors -------------------------------------------------------------------


def test_an_error_event_mid_stream_is_an_overloaded_api_error(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    events = anthropic_events([{"type": "text", "text": "Hello there"}])
    error = sse(
        "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    llm_server.script(Chunks(*events[:4], error))
    seen: list[object] = []
    with pytest.raises(
        LlmApiError,
        match=r"Anthropic API .* sent an error in its stream \(overloaded_error\): Overloaded",
    ) as raised:
        for event in model.stream(REQUEST):
            seen.append(event)
    assert raised.value.http_status == 529
    assert [e.text for e in seen if isinstance(e, TokenDelta)] == ["Hello"]
    assert len(llm_server.requests) == 1  # never retried after a streamed byte


@pytest.mark.parametrize("status", [429, 529])
def test_429_and_529_are_retried_after_what_retry_after_says(
    status: int, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    waits: list[float] = []
    model = AnthropicClient(
        llm_server.url, runtime=runtime, retry_policy=RetryPolicy(sleep=waits.append)
    )
    kind = "rate_limit_error" if status == 429 else "overloaded_error"
    body = json.dumps({"type": "error", "error": {"type": kind, "message": "slow down"}})
    llm_server.script(
        Raw(status, body, {"retry-after": "2"}),
        Chunks(*anthropic_events([{"type": "text", "text": "ok"}])),
    )
    assert reply_of(model.stream(REQUEST)).message.content == "ok"
    assert waits == [2.0]


def test_an_html_error_page_is_an_api_error_naming_anthropic(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    model = AnthropicClient(llm_server.url, runtime=runtime, api_key="sk-ant-secret", max_retries=0)
    page = "<html><body><h1>502 Bad Gateway</h1> key sk-ant-secret</body></html>"
    llm_server.script(Raw(502, page, {"Content-Type": "text/html"}))
    with pytest.raises(LlmApiError, match=r"Anthropic API .* answered HTTP 502: <html>") as raised:
        model.complete(REQUEST)
    assert "sk-ant-secret" not in str(raised.value) + raised.value.body_excerpt


def test_a_stream_cut_before_message_stop_is_a_transport_error(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    llm_server.script(Chunks(*anthropic_events([{"type": "text", "text": "Hello"}])[:-2]))
    with pytest.raises(TransportError, match=r"Anthropic API .* ended in the middle of its reply"):
        list(model.stream(REQUEST))


def test_malformed_json_is_a_parse_error_naming_anthropic(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    events = anthropic_events([{"type": "text", "text": "Hello"}])
    llm_server.script(Chunks(events[0], "event: content_block_start\ndata: {not json\n\n"))
    with pytest.raises(ParseError, match=r"from Anthropic API .* is not valid JSON"):
        list(model.stream(REQUEST))


def test_unknown_events_are_skipped_as_anthropic_asks(
    llm_server: ScriptedLlmServer, model: AnthropicClient
) -> None:
    events = anthropic_events([{"type": "text", "text": "Hello"}])
    novel = sse("content_block_flourish", {"type": "content_block_flourish", "index": 0})
    llm_server.script(Chunks(events[0], novel, *events[1:]))
    assert list(model.stream(REQUEST))[-1].response.message.content == "Hello"  # type: ignore[union-attr]


def test_a_delta_for_a_block_that_never_started_is_a_parse_error() -> None:
    delta = sse(
        "content_block_delta",
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}},
    )
    with pytest.raises(ParseError, match="never started"):
        list(AnthropicStreamDecoder(endpoint="e").events([delta.encode()]))


def test_the_decoder_survives_a_split_at_every_byte() -> None:
    body = "".join(
        anthropic_events([THINKING, {"type": "text", "text": "Sunny in Oslo."}])
    ).encode()
    whole = list(AnthropicStreamDecoder(endpoint="e").events([body]))
    split = list(AnthropicStreamDecoder(endpoint="e").events(_bytes(body)))
    assert split == whole


def _bytes(body: bytes) -> Iterator[bytes]:
    for i in range(len(body)):
        yield body[i : i + 1]
