"""The client against exchanges recorded from a real llama.cpp server.

The recordings under ``recordings/`` were made by
``scripts/record_llama_exchanges.py`` (llama.cpp's server through xllamacpp,
the tiny scripted model): bodies exactly as the server sent them. They are
replayed here by a real HTTP server on 127.0.0.1, streamed replies frame by
frame as llama.cpp flushes them, so these tests need neither xllamacpp nor
the model; tests/integration/test_llama_server.py pins the same behaviours
against the live server where it can produce them.

Two behaviours are not recorded because this server never produces them on
demand: the 503 a stand-alone llama-server answers while its model loads
(xllamacpp only listens once the model is loaded), and a kept-alive
connection dropped just as the next request goes out (the integration test
provokes it on the real server too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    AssistantMessage,
    Finished,
    LlmApiError,
    LlmClient,
    LlmRequest,
    RetryPolicy,
    Runtime,
    StreamEvent,
    TokenDelta,
    TokenUsage,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolMessage,
    ToolSchema,
    TruncatedReplyError,
    UserMessage,
)
from tests.support.llm_server import Chunks, Drop, Raw, ScriptedLlmServer

pytestmark = pytest.mark.usefixtures("no_thread_leak")

RECORDINGS = Path(__file__).parent / "recordings"
GREETING = "Hello from the tiny test model."
WEATHER = ToolSchema(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
ASK = UserMessage("What is the weather in Paris?")
#: llama-server's answer while a model loads (its source: unavailable_error).
LOADING = '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}'


def recording(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDINGS / f"{name}.json").read_text("utf-8"))
    return data


def replay(name: str) -> Raw | Chunks:
    """The recorded reply as the scripted server's reply: JSON whole, SSE frame by frame."""
    rec = recording(name)
    body: str = rec["body"]
    if rec["content_type"].startswith("text/event-stream"):
        frames = [f"{frame}\n\n" for frame in body.split("\n\n") if frame.strip()]
        return Chunks(*frames)
    return Raw(rec["status"], body, {"Content-Type": rec["content_type"]})


def recorded_usage(name: str) -> TokenUsage:
    body = recording(name)["body"]
    if body.startswith("data:"):
        frames = [json.loads(line[6:]) for line in body.splitlines() if line[6:].startswith("{")]
        usage = next(f["usage"] for f in frames if "usage" in f)
    else:
        usage = json.loads(body)["usage"]
    cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
    return TokenUsage(
        usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"], cache_read=cached
    )


def recorded_arguments(name: str) -> str:
    """The first tool call's arguments text, joined from its stream fragments if streamed."""
    body = recording(name)["body"]
    if not body.startswith("data:"):
        return str(
            json.loads(body)["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        )
    text = ""
    for line in body.splitlines():
        if line[6:].startswith("{"):
            for choice in json.loads(line[6:])["choices"]:
                for call in choice["delta"].get("tool_calls", []):
                    text += call.get("function", {}).get("arguments", "")
    return text


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    no_wait = RetryPolicy(max_retries=3, sleep=lambda _delay: None)
    return LlmClient(llm_server.url, "tiny", runtime=runtime, retry_policy=no_wait)


def run(llm: LlmClient, request: LlmRequest, *, stream: bool) -> tuple[Any, list[StreamEvent]]:
    if not stream:
        return llm.complete(request), []
    events = list(llm.stream(request))
    last = events[-1]
    assert isinstance(last, Finished)
    return last.response, events


MODES = pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])


def kind(stream: bool) -> str:
    return "stream" if stream else "complete"


@MODES
def test_plain_reply_with_timings_and_usage_frame(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    name = f"plain_{kind(stream)}"
    llm_server.script(replay(name))
    response, events = run(llm, LlmRequest((ASK,)), stream=stream)

    assert response.message == AssistantMessage(GREETING, usage=recorded_usage(name))
    assert response.finish_reason == "stop"
    if stream:
        # usage arrived in its own frame with "choices": [] after the finish frame
        assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == GREETING
        assert events[-1].usage == recorded_usage(name)  # type: ignore[union-attr]


@MODES
def test_tool_call_with_bare_id_empty_content_and_raw_arguments(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    name = f"tool_call_{kind(stream)}"
    body = recording(name)["body"]
    assert '"content":""' in body or '"content":null' in body
    assert "\n" in recorded_arguments(name)  # the model's raw text, newline kept
    llm_server.script(replay(name))

    response, events = run(llm, LlmRequest((ASK,), tools=(WEATHER,)), stream=stream)

    assert response.finish_reason == "tool_calls"
    (call,) = response.message.tool_calls
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris"}
    assert call.id and not call.id.startswith("call_")
    assert call.id in body
    assert not response.message.content
    assert response.usage == recorded_usage(name)
    if stream:
        started = [e for e in events if isinstance(e, ToolCallStarted)]
        completed = [e for e in events if isinstance(e, ToolCallCompleted)]
        assert [(e.id, e.name, e.index) for e in started] == [(call.id, "get_weather", 0)]
        assert [(e.index, e.arguments) for e in completed] == [(0, {"city": "Paris"})]


@MODES
def test_bare_tool_call_id_goes_back_unchanged_with_the_tool_result(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    name = f"after_tool_{kind(stream)}"
    recorded = recording(name)["request"]["messages"]
    call_id = recorded[1]["tool_calls"][0]["id"]
    history = (
        ASK,
        AssistantMessage("", tool_calls=(ToolCall(call_id, "get_weather", {"city": "Paris"}),)),
        ToolMessage(call_id, "get_weather", "Sunny, 21 C"),
    )
    llm_server.script(replay(name))

    response, _ = run(llm, LlmRequest(history, tools=(WEATHER,)), stream=stream)

    assert response.message.content == GREETING
    sent = llm_server.requests[-1]["messages"]
    assert sent[1]["tool_calls"][0]["id"] == call_id
    assert sent[2]["tool_call_id"] == call_id
    assert sent[2]["content"] == "Sunny, 21 C"


@MODES
def test_reply_cut_inside_tool_arguments_raises_truncated_reply(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    name = f"length_in_arguments_{kind(stream)}"
    assert '"finish_reason":"length"' in recording(name)["body"]
    llm_server.script(replay(name))

    with pytest.raises(TruncatedReplyError, match="cut off") as caught:
        run(llm, LlmRequest((ASK,), tools=(WEATHER,)), stream=stream)
    assert caught.value.finish_reason == "length"
    assert "get_weather" in str(caught.value)


@MODES
def test_context_overflow_is_a_400_api_error_with_the_servers_words(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    name = f"context_overflow_{kind(stream)}"
    rec = recording(name)
    assert rec["status"] == 400 and rec["request"]["stream"] is stream
    assert rec["content_type"].startswith("application/json")  # not SSE, even for stream
    llm_server.script(replay(name))

    with pytest.raises(LlmApiError) as caught:
        run(llm, LlmRequest((UserMessage("word " * 1000),)), stream=stream)
    err = caught.value
    assert err.http_status == 400
    assert "exceeds the available context size" in str(err)
    assert "\n" not in str(err)
    assert len(llm_server.requests) == 1  # a 400 is not retried


@MODES
def test_503_while_the_model_loads_is_retried(
    llm: LlmClient, llm_server: ScriptedLlmServer, stream: bool
) -> None:
    loading = Raw(503, LOADING, {"Content-Type": "application/json"})
    llm_server.script(loading, loading, replay(f"plain_{kind(stream)}"))

    response, _ = run(llm, LlmRequest((ASK,)), stream=stream)

    assert response.message.content == GREETING
    assert len(llm_server.requests) == 3


def test_request_on_a_kept_alive_connection_dropped_after_a_stream_is_retried(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(replay("plain_stream"), Drop(), replay("plain_complete"))

    first, _ = run(llm, LlmRequest((ASK,)), stream=True)
    second, _ = run(llm, LlmRequest((ASK,)), stream=False)

    assert first.message.content == second.message.content == GREETING
    assert len(llm_server.requests) == 3  # the dropped request was sent again
    assert llm_server.connections == 2  # ...on a fresh connection
