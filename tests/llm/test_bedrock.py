"""BedrockClient against a wire fake: SigV4, event-stream frames, reasoning, errors."""

from __future__ import annotations

import json

import pytest

from agent_smith import (
    ConfigError,
    LlmApiError,
    LlmRequest,
    ParseError,
    ReasoningDelta,
    Runtime,
    SamplingParams,
    SystemMessage,
    ToolCallCompleted,
    ToolCallStarted,
    ToolMessage,
    TransportError,
    UserMessage,
    make_model,
)
from agent_smith.llm.bedrock import BedrockClient
from tests.support.aws_eventstream import converse_stream, event, exception
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER, reply_of

pytestmark = pytest.mark.usefixtures("aws_credentials")

REQUEST = LlmRequest((SystemMessage("Be brief."), UserMessage("Weather?")), (WEATHER,))
MODEL = "anthropic.claude-sonnet-4-5-v1:0"


@pytest.fixture
def model(llm_server: ScriptedLlmServer, runtime: Runtime) -> BedrockClient:
    return BedrockClient(llm_server.url, MODEL, runtime=runtime, cache=True)


def test_a_streamed_tool_round_is_signed_and_decoded_from_event_stream_frames(
    llm_server: ScriptedLlmServer, model: BedrockClient
) -> None:
    llm_server.script(Chunks(*converse_stream(calls=[("get_weather", {"city": "Oslo"})])))
    events = list(model.stream(REQUEST))
    assert [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)] == [
        ("tooluse_0", "get_weather")
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallCompleted)] == [{"city": "Oslo"}]
    reply = reply_of(events)
    assert reply.finish_reason == "tool_calls"
    assert reply.usage is not None and (reply.usage.prompt, reply.usage.cache_read) == (14, 4)
    assert llm_server.paths[0] == "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse-stream"
    headers = {k.lower(): v for k, v in llm_server.headers[0].items()}
    assert (
        headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
        and headers["authorization"].count("/us-west-2/bedrock/aws4_request") == 1
    )
    assert "x-amz-date" in headers
    sent = llm_server.requests[0]
    assert sent["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert sent["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    assert sent["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}


def test_signed_reasoning_is_replayed_with_the_tool_use(
    llm_server: ScriptedLlmServer, model: BedrockClient
) -> None:
    reasoning = [
        {"reasoningContent": {"text": "Look it up."}},
        {"reasoningContent": {"signature": "c2ln"}},
    ]
    use = {"toolUse": {"toolUseId": "tooluse_0", "name": "get_weather"}}
    frames = [
        event("messageStart", {"role": "assistant"}),
        *(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": d}) for d in reasoning),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockStart", {"contentBlockIndex": 1, "start": use}),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"city": "Rome"}'}}},
        ),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", {"usage": {"inputTokens": 9, "outputTokens": 4}}),
    ]
    llm_server.script(Chunks(*frames), Raw(200, json.dumps(_converse_text("Rainy."))))
    events = list(model.stream(REQUEST))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Look it up."]
    first = reply_of(events).message
    assert first.reasoning == "Look it up."
    history = (*REQUEST.messages, first, ToolMessage("tooluse_0", "get_weather", "rain"))
    assert model.complete(LlmRequest(history, REQUEST.tools)).message.content == "Rainy."
    turn = llm_server.requests[1]["messages"][1]
    assert turn["role"] == "assistant"
    assert turn["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "c2ln"}}
    }
    assert turn["content"][1] == {
        "toolUse": {"toolUseId": "tooluse_0", "name": "get_weather", "input": {"city": "Rome"}}
    }
    assert llm_server.requests[1]["messages"][2]["content"][0] == {
        "toolResult": {"toolUseId": "tooluse_0", "content": [{"text": "rain"}]}
    }


def _converse_text(text: str) -> dict[str, object]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
    }


def test_an_exception_frame_mid_stream_is_a_named_api_error(
    llm_server: ScriptedLlmServer, model: BedrockClient
) -> None:
    frames = converse_stream("Hello there")
    llm_server.script(Chunks(*frames[:2], exception("throttlingException", "Too many tokens")))
    with pytest.raises(
        LlmApiError, match=r"Amazon Bedrock .* sent an error in its stream \(throttlingException\)"
    ) as raised:
        list(model.stream(REQUEST))
    assert raised.value.http_status == 429


def test_an_http_error_is_named_by_x_amzn_error_type(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    model = BedrockClient(llm_server.url, MODEL, runtime=runtime, max_retries=0)
    llm_server.script(
        Raw(
            400,
            json.dumps({"message": "The provided model identifier is invalid."}),
            {
                "x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
            },
        )
    )
    with pytest.raises(
        LlmApiError,
        match=r"Amazon Bedrock .* answered HTTP 400 \(ValidationException\): The provided model",
    ):
        model.complete(REQUEST)


def test_a_cut_frame_and_a_bad_checksum_are_typed_errors(
    llm_server: ScriptedLlmServer, model: BedrockClient
) -> None:
    frames = converse_stream("Hello there")
    corrupt = bytearray(frames[1])
    corrupt[-1] ^= 0xFF
    llm_server.script(Chunks(*frames[:-1], frames[-1][:10]), Chunks(frames[0], bytes(corrupt)))
    with pytest.raises(TransportError, match=r"Amazon Bedrock .* ended before messageStop"):
        list(model.stream(REQUEST))
    with pytest.raises(ParseError, match=r"Amazon Bedrock .* bad event-stream frame"):
        list(model.stream(REQUEST))


def test_a_guardrail_stop_is_a_typed_error(
    llm_server: ScriptedLlmServer, model: BedrockClient
) -> None:
    llm_server.script(Chunks(*converse_stream("Sorry", stop="guardrail_intervened")))
    with pytest.raises(LlmApiError, match=r"stopped \(guardrail_intervened\)"):
        list(model.stream(REQUEST))


def test_structured_output_is_refused_and_typed_output_uses_a_tool(model: BedrockClient) -> None:
    assert model.capabilities.native_output is False
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    with pytest.raises(ConfigError, match="no native structured output"):
        model.body(LlmRequest((UserMessage("hi"),), sampling=SamplingParams(response_format=fmt)))


def test_the_provider_name_builds_a_bedrock_client(llm_server: ScriptedLlmServer) -> None:
    built = make_model("bedrock", llm_server.url, MODEL)
    assert built.capabilities.provider == "aws.bedrock"
