"""ResponsesClient against a wire fake: events, call ids, reasoning items replayed, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import (
    AssistantMessage,
    LlmApiError,
    LlmRequest,
    ProviderData,
    ReasoningDelta,
    ResponsesClient,
    Runtime,
    SamplingParams,
    SystemMessage,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolMessage,
    TransportError,
    TruncatedReplyError,
    UserMessage,
)
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER, reply_of, responses_events, sse
from tests.support.recordings import payloads

REQUEST = LlmRequest((SystemMessage("Be brief."), UserMessage("Weather?")), (WEATHER,))
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Look the weather up."}],
    "encrypted_content": "gAAAAABo-encrypted",
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_abc",
    "name": "get_weather",
    "arguments": '{"city":"Oslo"}',
    "status": "completed",
}
TEXT = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Snow in Oslo.", "annotations": []}],
}


@pytest.fixture
def model(llm_server: ScriptedLlmServer, runtime: Runtime) -> ResponsesClient:
    return ResponsesClient(
        llm_server.url, "gpt-wire", api_key="sk-secret", store=False, runtime=runtime
    )


def test_a_streamed_call_with_reasoning_yields_events_and_keeps_the_reasoning_item(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    llm_server.script(Chunks(*responses_events([REASONING, CALL])))
    events = list(model.stream(REQUEST))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Look the weather up."]
    assert [(e.id, e.name, e.index) for e in events if isinstance(e, ToolCallStarted)] == [
        ("call_abc", "get_weather", 0)
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallCompleted)] == [{"city": "Oslo"}]
    reply = reply_of(events)
    assert reply.finish_reason == "tool_calls"
    assert reply.message.provider_data == ProviderData("openai.responses", {"items": [REASONING]})
    assert reply.message.reasoning == "Look the weather up."
    usage = reply.usage
    assert usage is not None and (usage.prompt, usage.completion, usage.cache_read) == (30, 12, 8)
    assert usage.reasoning == 5


def test_the_reasoning_item_goes_back_before_the_call_and_its_output(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    llm_server.script(
        Chunks(*responses_events([REASONING, CALL])), Chunks(*responses_events([TEXT]))
    )
    first = reply_of(model.stream(REQUEST)).message
    history = (*REQUEST.messages, first, ToolMessage("call_abc", "get_weather", "snow"))
    events = list(model.stream(LlmRequest(history, REQUEST.tools)))
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "Snow in Oslo."
    assert reply_of(events).message.content == "Snow in Oslo."
    sent = llm_server.requests[1]
    assert sent["instructions"] == "Be brief."
    assert sent["input"] == [
        {"type": "message", "role": "user", "content": "Weather?"},
        REASONING,
        {
            "type": "function_call",
            "call_id": "call_abc",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
        {"type": "function_call_output", "call_id": "call_abc", "output": "snow"},
    ]
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    assert sent["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather.",
            "parameters": WEATHER.parameters,
        }
    ]
    headers = {k.lower(): v for k, v in llm_server.headers[1].items()}
    assert headers["authorization"] == "Bearer sk-secret"


def test_another_providers_data_is_dropped(model: ResponsesClient) -> None:
    foreign = AssistantMessage("earlier", provider_data=ProviderData("anthropic", {"blocks": [1]}))
    items = model.body(LlmRequest((UserMessage("a"), foreign)), stream=False)["input"]
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "earlier"}],
    }
    assert len(items) == 2


def test_complete_reads_a_whole_response(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [TEXT],
    }
    llm_server.script(Raw(200, json.dumps(body)))
    reply = model.complete(REQUEST)
    assert (reply.message.content, reply.finish_reason, reply.response_id) == (
        "Snow in Oslo.",
        "stop",
        "resp_1",
    )


def test_json_schema_output_goes_as_text_format(model: ResponsesClient) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": "thing", "schema": schema, "strict": True},
    }
    request = LlmRequest(
        (UserMessage("hi"),), sampling=SamplingParams(response_format=fmt, max_tokens=9)
    )
    body = model.body(request, stream=False)
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "thing", "schema": schema, "strict": True}
    }
    assert body["max_output_tokens"] == 9


# -- errors -------------------------------------------------------------------


def test_an_incomplete_response_is_a_truncated_reply_error(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    llm_server.script(Chunks(*responses_events([TEXT], status="incomplete")))
    with pytest.raises(TruncatedReplyError, match="max_output_tokens"):
        list(model.stream(REQUEST))


def test_a_failed_response_and_an_error_event_are_api_errors(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    failed = {
        "id": "r",
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "boom"},
    }
    llm_server.script(
        Chunks(sse("response.failed", {"type": "response.failed", "response": failed})),
        Chunks(
            responses_events([TEXT])[0],
            sse("error", {"type": "error", "code": "rate_limit_exceeded", "message": "too fast"}),
        ),
    )
    with pytest.raises(LlmApiError, match=r"OpenAI Responses API .*: boom"):
        list(model.stream(REQUEST))
    with pytest.raises(
        LlmApiError, match=r"OpenAI Responses API .* sent an error in its stream.*too fast"
    ):
        list(model.stream(REQUEST))


def test_a_stream_without_its_completed_event_is_a_transport_error(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    llm_server.script(Chunks(*responses_events([TEXT])[:-1]))
    with pytest.raises(TransportError, match=r"OpenAI Responses API .* \(no response.completed\)"):
        list(model.stream(REQUEST))


def _as_refusal(value: Any) -> Any:
    """``value`` with every ``output_text`` part and text event made a refusal's."""
    if isinstance(value, list):
        return [_as_refusal(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "output_text":
        return {"type": "refusal", "refusal": value["text"]}
    renamed = {
        "response.output_text.delta": "response.refusal.delta",
        "response.output_text.done": "response.refusal.done",
    }
    out = {k: _as_refusal(v) for k, v in value.items() if k != "logprobs"}
    if value.get("type") in renamed:
        out["type"] = renamed[value["type"]]
    if out.get("type") == "response.refusal.done":
        out["refusal"] = out.pop("text")
    return out


def refused_stream() -> list[dict[str, Any]]:
    """The recorded file-search stream with its answer turned into a refusal.

    No recording of a streamed refusal was found (fixtures/SOURCES.md): every
    frame is the recorded one but the message part, which becomes a refusal
    part, its text deltas ``response.refusal.delta`` and its annotations gone.
    """
    frames = [json.loads(line) for line in payloads("vercel-ai--responses-file-search.chunks.txt")]
    kept = [f for f in frames if f["type"] != "response.output_text.annotation.added"]
    return [_as_refusal(f) for f in kept]


def test_a_streamed_refusal_arrives_as_text_that_adds_up_to_the_reply(
    llm_server: ScriptedLlmServer, model: ResponsesClient
) -> None:
    frames = refused_stream()
    refusal = next(f["refusal"] for f in frames if f["type"] == "response.refusal.done")
    llm_server.script(Chunks("".join(f"data: {json.dumps(f)}\n\n" for f in frames)))
    events = list(model.stream(REQUEST))
    reply = reply_of(events)
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == refusal
    assert reply.message.content == refusal and refusal.startswith("According to the document")
    assert reply.finish_reason == "content_filter"
    (completed,) = [f for f in frames if f["type"] == "response.completed"]
    llm_server.script(Raw(200, json.dumps(completed["response"])))
    whole = model.complete(REQUEST)
    assert (whole.message.content, whole.finish_reason) == (refusal, "content_filter")
