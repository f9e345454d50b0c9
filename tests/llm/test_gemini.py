"""GeminiClient against a wire fake: CRLF SSE without [DONE], thought signatures, errors."""

from __future__ import annotations

import json

import pytest

from agent_smith import (
    GeminiClient,
    LlmApiError,
    LlmRequest,
    ReasoningDelta,
    Runtime,
    SamplingParams,
    SystemMessage,
    TokenDelta,
    ToolCallStarted,
    ToolMessage,
    ToolSchema,
    TransportError,
    UserMessage,
)
from agent_smith.llm.gemini import gemini_schema
from agent_smith.llm.gemini_reply import GeminiStreamDecoder
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER, gemini_chunks, reply_of

REQUEST = LlmRequest((SystemMessage("Be brief."), UserMessage("Weather?")), (WEATHER,))
# A Gemini 3 reply with signatures in each documented place: on a call, on text, on an
# empty part; plus a thought summary part.
SIGNED_PARTS = [
    {"text": "I should look it up.", "thought": True},
    {
        "functionCall": {"id": "fc-7", "name": "get_weather", "args": {"city": "Oslo"}},
        "thoughtSignature": "sigCall",
    },
    {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
    {"text": "Checking.", "thoughtSignature": "sigText"},
    {"text": "", "thoughtSignature": "sigEmpty"},
]


def crlf(*chunks: dict[str, object]) -> Chunks:
    return Chunks(*(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks))


def chunk(parts: list[dict[str, object]], finish: str | None = None) -> dict[str, object]:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-wire"}


@pytest.fixture
def model(llm_server: ScriptedLlmServer, runtime: Runtime) -> GeminiClient:
    return GeminiClient(llm_server.url, "gemini-wire", api_key="AIza-secret", runtime=runtime)


def test_signatures_go_back_exactly_where_they_came(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(
        crlf(chunk(SIGNED_PARTS[:1]), chunk(SIGNED_PARTS[1:], "STOP")),
        crlf(*gemini_chunks("Sunny in both.")),
    )
    events = list(model.stream(REQUEST))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["I should look it up."]
    assert [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)] == [
        ("fc-7", "get_weather"),
        ("gemini_call_1", "get_weather"),  # the model gave no id: one is made up
    ]
    first = reply_of(events)
    assert first.finish_reason == "tool_calls" and first.message.content == "Checking."
    history = (
        *REQUEST.messages,
        first.message,
        ToolMessage("fc-7", "get_weather", "snow"),
        ToolMessage("gemini_call_1", "get_weather", "sun"),
    )
    answer = reply_of(model.stream(LlmRequest(history, REQUEST.tools)))
    assert answer.message.content == "Sunny in both."
    sent = llm_server.requests[1]
    assert sent["contents"][1] == {"role": "model", "parts": SIGNED_PARTS}
    assert sent["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"result": "snow"},
                    "id": "fc-7",
                }
            },
            {"functionResponse": {"name": "get_weather", "response": {"result": "sun"}}},
        ],
    }
    assert sent["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert llm_server.paths[1] == "/v1beta/models/gemini-wire:streamGenerateContent?alt=sse"
    assert {k.lower(): v for k, v in llm_server.headers[1].items()}[
        "x-goog-api-key"
    ] == "AIza-secret"


def test_usage_counts_thoughts_and_cached_tokens(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(crlf(*gemini_chunks("Hello there")))
    events = list(model.stream(REQUEST))
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "Hello there"
    usage = reply_of(events).usage
    assert usage is not None
    assert (usage.prompt, usage.completion, usage.total, usage.cache_read) == (10, 8, 18, 4)
    assert usage.reasoning == 3  # the thoughts, counted in the completion too


def test_complete_posts_to_generate_content(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(Raw(200, json.dumps(gemini_chunks("Whole reply.", pieces=False)[0])))
    reply = model.complete(REQUEST)
    assert (reply.message.content, reply.response_id) == ("Whole reply.", "gem-resp-1")
    assert llm_server.paths[0] == "/v1beta/models/gemini-wire:generateContent"


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL"])
def test_a_finish_reason_other_than_stop_is_a_typed_error(
    reason: str, llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(crlf(chunk([{"text": "I "}]), chunk([], reason)))
    with pytest.raises(LlmApiError, match=rf"Gemini API .* finishReason {reason}"):
        list(model.stream(REQUEST))


def test_a_blocked_prompt_is_a_typed_error(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(Raw(200, json.dumps({"promptFeedback": {"blockReason": "SAFETY"}})))
    with pytest.raises(LlmApiError, match=r"prompt was blocked \(SAFETY\)"):
        model.complete(REQUEST)


def test_max_tokens_is_a_length_finish(llm_server: ScriptedLlmServer, model: GeminiClient) -> None:
    llm_server.script(crlf(chunk([{"text": "cut"}], "MAX_TOKENS")))
    assert reply_of(model.stream(REQUEST)).finish_reason == "length"


def test_an_error_body_keeps_its_status_and_details(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    error = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"},
                {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "message": "x"},
            ],
        }
    }
    llm_server.script(Raw(400, json.dumps(error)))
    with pytest.raises(
        LlmApiError,
        match=r"Gemini API .* answered HTTP 400 \(INVALID_ARGUMENT\): API key not valid.*"
        r" \(details: API_KEY_INVALID, LocalizedMessage\)",
    ) as raised:
        model.complete(REQUEST)
    assert "AIza-secret" not in str(raised.value)


def test_a_stream_without_a_finish_reason_is_a_transport_error(
    llm_server: ScriptedLlmServer, model: GeminiClient
) -> None:
    llm_server.script(crlf(chunk([{"text": "Hello"}])))
    with pytest.raises(TransportError, match=r"Gemini API .* ended before a finishReason"):
        list(model.stream(REQUEST))


def test_the_decoder_survives_a_split_at_every_byte() -> None:
    body = "".join(
        f"data: {json.dumps(c)}\r\n\r\n" for c in gemini_chunks("Sunny in Oslo today.")
    ).encode()
    whole = list(GeminiStreamDecoder(endpoint="e").events([body]))
    split = list(
        GeminiStreamDecoder(endpoint="e").events(body[i : i + 1] for i in range(len(body)))
    )
    assert split == whole


def test_tool_choice_thinking_and_typed_output_in_the_body(
    model: GeminiClient, runtime: Runtime
) -> None:
    thinking = GeminiClient(
        "http://127.0.0.1:9", "g", thinking_budget=1024, include_thoughts=True, runtime=runtime
    )
    schema = {
        "type": "object",
        "properties": {"city": {"$ref": "#/$defs/City"}, "note": {"type": ["string", "null"]}},
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {
            "City": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "additionalProperties": False,
            }
        },
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    request = LlmRequest(
        (UserMessage("hi"),),
        (WEATHER, ToolSchema("now", "The time.")),
        sampling=SamplingParams(response_format=fmt, max_tokens=50),
        tool_choice={"type": "function", "function": {"name": "now"}},
    )
    body = thinking.body(request)
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["now"]}
    }
    assert body["tools"][0]["functionDeclarations"][1] == {
        "name": "now",
        "description": "The time.",
    }
    config = body["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 1024, "includeThoughts": True}
    assert config["maxOutputTokens"] == 50 and config["responseMimeType"] == "application/json"
    assert config["responseSchema"] == {
        "type": "object",
        "properties": {
            "city": {"type": "object", "properties": {"name": {"type": "string"}}},
            "note": {"type": "string", "nullable": True},
        },
        "required": ["city"],
    }
    assert gemini_schema({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == {
        "nullable": True,
        "type": "integer",
    }
