"""The SSE decoder: frames in any chunking -> the same stream events."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from agent_smith import (
    Finished,
    LlmApiError,
    ParseError,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    TokenUsage,
    ToolCallCompleted,
    ToolCallStarted,
    TransportError,
    TruncatedReplyError,
)
from agent_smith.llm.stream_decoder import StreamDecoder


def frame(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


def delta(d: dict[str, Any], finish: str | None = None) -> bytes:
    return frame({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}

# Shaped like llama-server's output: ids without "call_", content "" beside
# tool calls, arguments with raw newlines, a timings object, usage in a last
# frame with empty choices, then [DONE].
RECORDED = b"".join(
    [
        delta({"role": "assistant", "content": None}),
        delta({"reasoning_content": "Let me think"}),
        delta({"content": "Héllo "}),
        delta({"content": "wörld 🌍"}),
        delta(
            {
                "content": "",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "Xk2pQ",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ],
            }
        ),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":\n'}}]}),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": ' "Paris"}'}}]}),
        delta(
            {
                "tool_calls": [
                    {"index": 1, "id": "Yz9", "function": {"name": "now", "arguments": "{}"}}
                ]
            }
        ),
        delta({}, "tool_calls"),
        frame({"choices": [], "usage": USAGE, "timings": {"predicted_ms": 12.5}}),
        b"data: [DONE]\n\n",
    ]
)


def decode(chunks: Iterable[bytes]) -> list[StreamEvent]:
    return list(StreamDecoder(endpoint="http://test/v1/chat/completions").events(chunks))


def test_recorded_stream_yields_events_in_order() -> None:
    events = decode([RECORDED])

    assert events[:-1] == [
        ReasoningDelta("Let me think"),
        TokenDelta("Héllo "),
        TokenDelta("wörld 🌍"),
        ToolCallStarted("Xk2pQ", "get_weather", 0),
        ToolCallStarted("Yz9", "now", 1),
        ToolCallCompleted(0, {"city": "Paris"}),
        ToolCallCompleted(1, {}),
    ]
    final = events[-1]
    assert isinstance(final, Finished)
    assert final.finish_reason == "tool_calls"
    assert final.usage == TokenUsage(12, 7, 19)
    message = final.response.message
    assert message.content == "Héllo wörld 🌍"
    assert message.reasoning == "Let me think"
    assert [c.id for c in message.tool_calls] == ["Xk2pQ", "Yz9"]
    assert message.usage == TokenUsage(12, 7, 19)


def test_the_reply_keeps_the_id_and_model_its_closing_frames_name() -> None:
    finish = {
        "id": "chatcmpl-9",
        "model": "qwen",
        "choices": [{"delta": {}, "finish_reason": "stop"}],
    }
    usage = {"id": "chatcmpl-9", "choices": [], "usage": USAGE}  # no model here: kept from before
    events = decode([delta({"content": "hi"}), frame(finish), frame(usage), b"data: [DONE]\n\n"])

    final = events[-1]
    assert isinstance(final, Finished)
    assert (final.response.response_id, final.response.model) == ("chatcmpl-9", "qwen")
    unnamed = decode([delta({"content": "hi"}, "stop"), b"data: [DONE]\n\n"])[-1]
    assert isinstance(unnamed, Finished)
    assert (unnamed.response.response_id, unnamed.response.model) == ("", "")


def test_stream_survives_split_at_every_byte() -> None:
    expected = decode([RECORDED])
    for cut in range(1, len(RECORDED)):
        assert decode([RECORDED[:cut], RECORDED[cut:]]) == expected, f"split at byte {cut}"


def test_stream_survives_one_byte_chunks() -> None:
    assert decode(RECORDED[i : i + 1] for i in range(len(RECORDED))) == decode([RECORDED])


def test_crlf_line_endings_split_at_every_byte() -> None:
    crlf = RECORDED.replace(b"\n", b"\r\n")
    expected = decode([RECORDED])
    for cut in range(1, len(crlf)):
        assert decode([crlf[:cut], crlf[cut:]]) == expected, f"split at byte {cut}"


def test_comment_and_keep_alive_lines_are_ignored() -> None:
    body = b": ping\n\n" + delta({"content": "a"}) + b": keep-alive\n" + delta({}, "stop")
    body += b": ping\n\ndata: [DONE]\n\n"
    assert decode([body])[:-1] == [TokenDelta("a")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    body = b'data: {"choices": [{"delta":\ndata:  {"content": "hi"},\ndata: "index": 0}]}\n\n'
    body += delta({}, "stop") + b"data: [DONE]\n\n"
    assert decode([body])[0] == TokenDelta("hi")


def test_event_field_is_accepted() -> None:
    body = b"event: completion\nid: 7\n" + delta({"content": "x"}) + delta({}, "stop")
    assert decode([body])[0] == TokenDelta("x")


def test_multibyte_character_split_across_chunks() -> None:
    body = delta({"content": "é🌍"}) + delta({}, "stop") + b"data: [DONE]\n\n"
    start = body.index("🌍".encode())
    for cut in range(start + 1, start + 4):
        events = decode([body[:cut], body[cut:]])
        assert events[0] == TokenDelta("é🌍")


def test_stream_without_done_or_finish_reason_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="ended before"):
        decode([delta({"content": "partial"})])


def test_stream_cut_inside_a_frame_is_a_transport_error() -> None:
    body = delta({"content": "a"}) + b'data: {"choices": [{"del'
    with pytest.raises(TransportError, match="middle of an SSE frame"):
        decode([body])


def test_finish_reason_without_done_is_accepted() -> None:
    events = decode([delta({"content": "a"}) + delta({}, "stop")])
    assert isinstance(events[-1], Finished)
    assert events[-1].finish_reason == "stop"


def test_done_without_finish_reason_is_accepted() -> None:
    events = decode([delta({"content": "a"}) + b"data: [DONE]\n\n"])
    assert isinstance(events[-1], Finished)
    assert events[-1].finish_reason == "stop"


def test_error_frame_raises_llm_api_error_with_the_server_message() -> None:
    body = delta({"content": "a"}) + frame(
        {"error": {"code": 500, "message": "model crashed", "type": "server_error"}}
    )
    with pytest.raises(LlmApiError, match="model crashed") as info:
        decode([body])
    assert info.value.http_status == 500


def test_error_event_raises_llm_api_error() -> None:
    body = b'event: error\ndata: {"message": "overloaded"}\n\n'
    with pytest.raises(LlmApiError, match="overloaded"):
        decode([body])


def test_malformed_json_frame_is_a_parse_error() -> None:
    body = delta({"content": "a"}) + b'data: {"choices": [\n\n'
    with pytest.raises(ParseError, match="not valid JSON"):
        decode([body])


@pytest.mark.parametrize(
    "payload",
    [
        b"data: [1, 2]\n\n",
        b'data: {"choices": {"0": 1}}\n\n',
        b'data: {"choices": [{"delta": "text"}]}\n\n',
        b'data: {"choices": [{"delta": {"content": 5}}]}\n\n',
        b'data: {"choices": [{"delta": {"tool_calls": {}}}]}\n\n',
        b'data: {"choices": [{"delta": {"tool_calls": [{"index": "0"}]}}]}\n\n',
        b'data: {"choices": [{"delta": {}, "finish_reason": 3}]}\n\n',
        b'data: {"choices": [], "usage": {"prompt_tokens": "many"}}\n\n',
    ],
)
def test_wrongly_shaped_frames_are_parse_errors(payload: bytes) -> None:
    with pytest.raises(ParseError):
        decode([payload])


def test_unparseable_arguments_are_kept_as_invalid() -> None:
    body = delta(
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{x"}}]}
    )
    events = decode([body + delta({}, "tool_calls") + b"data: [DONE]\n\n"])
    final = events[-1]
    assert isinstance(final, Finished)
    call = final.response.message.tool_calls[0]
    assert call.invalid_arguments == "{x"
    assert ToolCallCompleted(0, {}) in events


def test_length_cut_inside_tool_call_arguments_is_a_truncated_reply() -> None:
    body = delta(
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"a":'}}]}
    )
    with pytest.raises(TruncatedReplyError, match="cut off by max_tokens inside tool call 'f'"):
        decode([body + delta({}, "length") + b"data: [DONE]\n\n"])


def test_frames_after_done_are_ignored() -> None:
    body = delta({"content": "a"}) + b"data: [DONE]\n\n" + delta({"content": "late"})
    assert [e for e in decode([body]) if isinstance(e, TokenDelta)] == [TokenDelta("a")]
