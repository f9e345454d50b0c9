"""What real OpenAI-compatible servers send, decoded from their recorded bytes.

The recordings and their sources are in ``fixtures/SOURCES.md``. Each test
names the quirk it pins; where no recording was found, the test changes one
field of a recorded frame and says so.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_smith import (
    Finished,
    LlmApiError,
    LlmClient,
    LlmRequest,
    LlmResponse,
    ReasoningDelta,
    Runtime,
    StreamEvent,
    TokenDelta,
    TokenUsage,
    ToolCallCompleted,
    ToolCallStarted,
    UserMessage,
)
from agent_smith.llm.stream_decoder import StreamDecoder
from tests.support.llm_server import Chunks, Raw, ScriptedLlmServer
from tests.support.recordings import framed, payloads, recorded

REQUEST = LlmRequest((UserMessage("hi"),))


def decode(body: bytes) -> list[StreamEvent]:
    return list(StreamDecoder(endpoint="http://test/v1/chat/completions").events([body]))


def decode_split(body: bytes) -> list[StreamEvent]:
    """Decoded whole, and checked to decode the same when cut at every byte."""
    whole = decode(body)
    for cut in range(1, len(body), max(1, len(body) // 300)):
        parts = [body[:cut], body[cut:]]
        assert list(StreamDecoder(endpoint="e").events(parts)) == whole, f"split at {cut}"
    return whole


def final(events: list[StreamEvent]) -> LlmResponse:
    last = events[-1]
    assert isinstance(last, Finished)
    return last.response


# -- content as typed parts or a JSON value ---------------------------------


def test_streamed_content_as_thinking_and_text_parts_mistral() -> None:
    events = decode_split(framed(payloads("vercel-ai--mistral-reasoning.chunks.txt")))
    message = final(events).message
    assert message.reasoning == "The user is asking for 2+2. This is basic arithmetic. 2+2=4."
    assert message.content == "2 + 2 = 4"
    assert events[0] == ReasoningDelta("The user is asking")
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "2 + 2 = 4"


def test_whole_content_as_thinking_and_text_parts_mistral() -> None:
    body = json.loads(recorded("vercel-ai--mistral-reasoning.json"))
    message = LlmResponse.from_openai(body).message
    assert message.content == "2 + 2 = 4"
    assert message.reasoning == "The user is asking for 2+2. This is basic arithmetic. 2+2=4."


def test_content_given_as_a_json_object_is_kept_as_its_json_text() -> None:
    # No recording found: the recorded Mistral reply with its content replaced
    # by the object a response_format request asked for.
    body = json.loads(recorded("vercel-ai--mistral-reasoning.json"))
    body["choices"][0]["message"]["content"] = {"answer": 4, "mood": "sure"}
    message = LlmResponse.from_openai(body).message
    assert json.loads(message.content) == {"answer": 4, "mood": "sure"}
    lines = payloads("vercel-ai--mistral-reasoning.chunks.txt")
    frame = json.loads(lines[-1])
    frame["choices"][0]["delta"]["content"] = {"answer": 4}
    events = decode(framed([json.dumps(frame)]))
    assert json.loads(final(events).message.content) == {"answer": 4}


# -- tool calls ---------------------------------------------------------------


def test_tool_call_whole_in_one_delta_without_index_or_type_mistral() -> None:
    events = decode_split(framed(payloads("vercel-ai--mistral-tool-call.chunks.txt"), done=False))
    response = final(events)
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == (
        "gSIMJiOkT",
        "weather",
        {"location": "San Francisco"},
    )
    assert ToolCallStarted("gSIMJiOkT", "weather", 0) in events
    assert response.finish_reason == "tool_calls"
    assert response.usage == TokenUsage(124, 22, 146)


def test_empty_name_on_a_later_delta_keeps_the_name() -> None:
    events = decode_split(framed(payloads("vercel-ai--mistral-incremental-tool-call.chunks.txt")))
    (call,) = final(events).message.tool_calls
    assert call.name == "webSearchTool"
    assert call.id == "chatcmpl-tool-9f149c74c42f265b"
    assert call.arguments == {"query": "current Berlin weather"}


def test_empty_id_on_later_deltas_and_empty_arguments_fragment_alibaba() -> None:
    events = decode_split(framed(payloads("vercel-ai--alibaba-tool-call.chunks.txt")))
    response = final(events)
    (call,) = response.message.tool_calls
    assert call.id == "call_eee11723464a4b9eb8cee71d"
    assert call.arguments == {"location": "San Francisco"}
    assert response.usage == TokenUsage(295, 22, 317)


def _mistral_call_frame(*calls: dict[str, Any]) -> list[str]:
    lines = payloads("vercel-ai--mistral-tool-call.chunks.txt")
    frame = json.loads(lines[1])
    frame["choices"][0]["delta"]["tool_calls"] = list(calls)
    return [lines[0], json.dumps(frame)]


def test_several_whole_calls_in_one_delta_without_index() -> None:
    # No recording found: the recorded Mistral frame carrying two calls.
    lines = _mistral_call_frame(
        {"id": "a1", "function": {"name": "weather", "arguments": '{"location": "Paris"}'}},
        {"id": "b2", "function": {"name": "weather", "arguments": '{"location": "Rome"}'}},
    )
    calls = final(decode(framed(lines))).message.tool_calls
    assert [(c.id, c.arguments["location"]) for c in calls] == [("a1", "Paris"), ("b2", "Rome")]


def test_whole_calls_without_index_in_separate_deltas_stay_separate() -> None:
    first, second = (
        _mistral_call_frame(
            {"id": cid, "function": {"name": "weather", "arguments": json.dumps({"n": n})}}
        )
        for cid, n in (("a1", 1), ("b2", 2))
    )
    calls = final(decode(framed([*first, second[1]]))).message.tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("a1", {"n": 1}), ("b2", {"n": 2})]


def test_arguments_as_a_json_object_and_as_an_empty_string() -> None:
    # No recording found: the recorded Mistral frame with its arguments given
    # as the object itself, and a second call with "" for "no arguments".
    lines = _mistral_call_frame(
        {"id": "a1", "function": {"name": "weather", "arguments": {"location": "Oslo"}}},
        {"id": "b2", "function": {"name": "now", "arguments": ""}},
    )
    events = decode(framed(lines))
    calls = final(events).message.tool_calls
    assert [(c.name, c.arguments, c.invalid_arguments) for c in calls] == [
        ("weather", {"location": "Oslo"}, None),
        ("now", {}, None),
    ]
    assert ToolCallCompleted(1, {}) in events


def test_non_streamed_empty_id_gets_the_id_the_streamed_path_gives() -> None:
    body = json.loads(recorded("pydantic-ai--gemini-openai-tool-call-empty-id.json"))
    (whole,) = LlmResponse.from_openai(body).message.tool_calls
    streamed_frame = {
        "choices": [
            {"index": 0, "delta": body["choices"][0]["message"], "finish_reason": "tool_calls"}
        ]
    }
    (streamed,) = final(decode(framed([json.dumps(streamed_frame)]))).message.tool_calls
    assert whole.id == streamed.id == "call_0"
    assert (whole.name, whole.arguments) == ("get_current_time", {})


# -- framing ------------------------------------------------------------------


def test_done_without_its_final_blank_line() -> None:
    body = framed(payloads("vercel-ai--xai-tool-call.chunks.txt"), done=False) + b"data: [DONE]"
    events = decode_split(body)
    assert final(events).message.tool_calls[0].name == "weather"
    assert decode(body + b"\n") == events


def test_no_done_at_all_after_a_finish_reason() -> None:
    events = decode_split(framed(payloads("vercel-ai--groq-tool-call.chunks.txt"), done=False))
    assert final(events).finish_reason == "tool_calls"


def test_comment_keep_alive_lines_openrouter() -> None:
    body = recorded("pydantic-ai--openrouter-stream-error.sse")
    assert body.startswith(b": OPENROUTER PROCESSING\n\n")
    cut = body.index(
        b'data: {"id":"gen-1762179802-UN8pkJI4AGZvryk0kFnb","provider":"Minimax","error"'
    )
    events = decode_split(body[:cut] + b"data: [DONE]\n\n")
    assert final(events).message.reasoning == "We need to respond to a greeting. The user"


def test_crlf_framing_gemini_style() -> None:
    lf = framed(payloads("vercel-ai--xai-tool-call.chunks.txt"), done=False)
    crlf = framed(payloads("vercel-ai--xai-tool-call.chunks.txt"), done=False, end="\r\n")
    assert decode_split(crlf) == decode(lf)


# -- errors inside a 200 stream -------------------------------------------------


def test_error_event_in_a_200_stream_groq() -> None:
    with pytest.raises(LlmApiError, match="Tool call validation failed") as info:
        decode(recorded("pydantic-ai--groq-tool-use-failed-streaming.sse"))
    assert "invalid_request_error" in info.value.message


def test_error_object_in_a_chunk_openrouter() -> None:
    with pytest.raises(LlmApiError, match="Token limit reached") as info:
        decode(recorded("pydantic-ai--openrouter-stream-error.sse"))
    assert info.value.http_status == 400


def test_bare_error_line_llama_cpp() -> None:
    body = recorded("llama-cpp-b5966--error-field.sse")
    with pytest.raises(LlmApiError, match="exceeds the available context size") as info:
        decode(body)
    assert info.value.http_status == 400
    with pytest.raises(LlmApiError, match="exceeds the available context size"):
        decode(body[: body.index(b"\n")])  # even when the stream stops right after it


def test_error_event_with_plain_text_data_keeps_the_text() -> None:
    with pytest.raises(LlmApiError, match="upstream overloaded"):
        decode(b"event: error\ndata: upstream overloaded\n\n")


# -- usage wherever it comes -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "usage"),
    [
        (
            "vercel-ai--deepseek-tool-call.chunks.txt",
            TokenUsage(339, 83, 422, 320, reasoning=39),
        ),  # finish chunk
        (
            "vercel-ai--xai-tool-call.chunks.txt",
            TokenUsage(291, 26, 513, 290, reasoning=196),
        ),  # chunk after it
        ("vercel-ai--perplexity-text.chunks.txt", None),  # every chunk: the last one counts
        ("vercel-ai--alibaba-tool-call.chunks.txt", TokenUsage(295, 22, 317)),  # nulls until last
    ],
)
def test_usage_wherever_it_comes(name: str, usage: TokenUsage | None) -> None:
    lines = payloads(name)
    if usage is None:
        last = json.loads(lines[-1])["usage"]
        usage = TokenUsage(last["prompt_tokens"], last["completion_tokens"], last["total_tokens"])
    assert final(decode(framed(lines))).usage == usage


# -- through the client, on a real loopback server ---------------------------------


def test_a_200_stream_with_an_error_raises_through_the_client(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None
) -> None:
    llm_server.script(Chunks(recorded("pydantic-ai--openrouter-stream-error.sse")))
    client = LlmClient(llm_server.url, runtime=runtime)
    seen: list[StreamEvent] = []
    with pytest.raises(LlmApiError, match="Token limit reached"):
        for event in client.stream(REQUEST):
            seen.append(event)
    assert not any(isinstance(e, Finished) for e in seen)


def test_stream_request_answered_with_a_whole_json_body(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None
) -> None:
    # No recording found of a proxy doing this: the recorded Mistral body,
    # served as application/json to a streamed request.
    llm_server.script(Raw(200, recorded("vercel-ai--mistral-reasoning.json")))
    client = LlmClient(llm_server.url, runtime=runtime)
    events = list(client.stream(REQUEST))
    assert events[:2] == [
        ReasoningDelta("The user is asking for 2+2. This is basic arithmetic. 2+2=4."),
        TokenDelta("2 + 2 = 4"),
    ]
    assert final(events).usage == TokenUsage(10, 46, 56)


def test_stream_request_answered_with_a_json_error_body_at_200(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None
) -> None:
    llm_server.script(Raw(200, b'{"error": {"message": "quota exceeded", "code": 429}}'))
    with pytest.raises(LlmApiError, match="quota exceeded"):
        list(LlmClient(llm_server.url, runtime=runtime).stream(REQUEST))
