"""OllamaClient against a wire fake: NDJSON lines, whole tool calls, thinking, errors."""

from __future__ import annotations

import json

import pytest

from agent_smith import (
    AssistantMessage,
    LlmApiError,
    LlmRequest,
    OllamaClient,
    ReasoningDelta,
    Runtime,
    SamplingParams,
    TokenDelta,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolMessage,
    TransportError,
    UserMessage,
)
from agent_smith.llm.ollama import OllamaDecoder
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.provider_wire import WEATHER, ollama_lines, reply_of

REQUEST = LlmRequest((UserMessage("Weather?"),), (WEATHER,))


def line(**fields: object) -> str:
    return json.dumps({"model": "qwen3", "created_at": "2026-01-01T00:00:00Z", **fields}) + "\n"


@pytest.fixture
def model(llm_server: ScriptedLlmServer, runtime: Runtime) -> OllamaClient:
    return OllamaClient(
        llm_server.url,
        "qwen3",
        think=True,
        keep_alive="10m",
        options={"num_ctx": 8192},
        runtime=runtime,
    )


def test_thinking_text_and_a_whole_tool_call_line_stream_as_events(
    llm_server: ScriptedLlmServer, model: OllamaClient
) -> None:
    llm_server.script(
        Chunks(
            line(
                message={"role": "assistant", "content": "", "thinking": "Need weather."},
                done=False,
            ),
            line(
                message={
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
                        {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}},
                    ],
                },
                done=False,
            ),
            line(
                message={"role": "assistant", "content": ""},
                done=True,
                done_reason="stop",
                prompt_eval_count=20,
                eval_count=7,
            ),
        )
    )
    events = list(model.stream(REQUEST))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Need weather."]
    assert [(e.name, e.index) for e in events if isinstance(e, ToolCallStarted)] == [
        ("get_weather", 0),
        ("get_weather", 1),
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallCompleted)] == [
        {"city": "Oslo"},
        {"city": "Rome"},
    ]
    reply = reply_of(events)
    assert reply.finish_reason == "tool_calls"  # done_reason says "stop" even after calls
    assert reply.message.reasoning == "Need weather."
    assert reply.usage is not None and (reply.usage.prompt, reply.usage.completion) == (20, 7)
    sent = llm_server.requests[0]
    assert (sent["think"], sent["keep_alive"], sent["options"], sent["stream"]) == (
        True,
        "10m",
        {"num_ctx": 8192},
        True,
    )
    assert llm_server.paths[0] == "/api/chat"
    assert model.capabilities.context_size == 8192


def test_tool_results_go_back_by_tool_name_with_object_arguments(
    llm_server: ScriptedLlmServer, model: OllamaClient
) -> None:
    llm_server.script(Raw(200, ollama_lines("Snow.", stream=False)[0]))
    history = (
        UserMessage("Weather?"),
        AssistantMessage(
            "", (ToolCall("call_0", "get_weather", {"city": "Oslo"}),), reasoning="hidden"
        ),
        ToolMessage("call_0", "get_weather", "snow"),
    )
    reply = model.complete(LlmRequest(history, REQUEST.tools))
    assert (reply.message.content, reply.finish_reason) == ("Snow.", "stop")
    assert llm_server.requests[0]["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "content": "snow", "tool_name": "get_weather"},
    ]
    assert llm_server.requests[0]["stream"] is False


def test_typed_output_and_sampling_go_in_format_and_options(model: OllamaClient) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    sampling = SamplingParams(
        temperature=0.0,
        max_tokens=64,
        stop=("END",),
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    )
    body = model.body(LlmRequest((UserMessage("hi"),), sampling=sampling), stream=False)
    assert body["format"] == schema
    assert body["options"] == {
        "num_ctx": 8192,
        "temperature": 0.0,
        "num_predict": 64,
        "stop": ["END"],
    }


def test_an_error_line_mid_stream_is_an_api_error(
    llm_server: ScriptedLlmServer, model: OllamaClient
) -> None:
    llm_server.script(
        Chunks(
            line(message={"role": "assistant", "content": "Hel"}, done=False),
            json.dumps(
                {"error": "an error was encountered while running the model: unexpected EOF"}
            )
            + "\n",
        )
    )
    seen: list[object] = []
    with pytest.raises(
        LlmApiError, match=r"Ollama .* sent an error in its stream: an error was encountered"
    ):
        for event in model.stream(REQUEST):
            seen.append(event)
    assert [e.text for e in seen if isinstance(e, TokenDelta)] == ["Hel"]


def test_an_error_status_keeps_ollamas_message(
    llm_server: ScriptedLlmServer, model: OllamaClient
) -> None:
    llm_server.script(
        Raw(404, json.dumps({"error": "model 'qwen3' not found, try pulling it first"}))
    )
    with pytest.raises(LlmApiError, match=r"Ollama .* answered HTTP 404: model 'qwen3' not found"):
        model.complete(REQUEST)


def test_a_stream_without_its_done_line_is_a_transport_error(
    llm_server: ScriptedLlmServer, model: OllamaClient
) -> None:
    llm_server.script(Chunks(*ollama_lines("Hello there")[:-1]))
    with pytest.raises(TransportError, match=r"Ollama .* ended before its done line"):
        list(model.stream(REQUEST))


def test_the_decoder_survives_a_split_at_every_byte() -> None:
    body = "".join(ollama_lines("Sunny in Oslo today.")).encode()
    whole = list(OllamaDecoder(endpoint="e").events([body]))
    split = list(OllamaDecoder(endpoint="e").events(body[i : i + 1] for i in range(len(body))))
    assert split == whole
    assert reply_of(whole).message.content == "Sunny in Oslo today."


def test_ollama_host_is_the_default_server(
    monkeypatch: pytest.MonkeyPatch, runtime: Runtime
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:9000")
    assert (
        OllamaClient(model="m", runtime=runtime).capabilities.server_url
        == "http://gpu-box:9000/api/chat"
    )
