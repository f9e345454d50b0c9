"""Fuzzing the SSE reader and the stream decoder: arbitrary bytes raise only typed errors."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import AgentSmithError
from agent_smith._internal.sse_reader import SseReader
from agent_smith.llm.stream_decoder import StreamDecoder
from tests.support.fuzz import QUICK, TOO_DEEP, json_objects_with, json_values, split

_FRAME_KEYS = ["choices", "usage", "error", "id", "model"]
_DELTA_KEYS = ["content", "reasoning_content", "reasoning", "tool_calls", "role"]
_CALL_KEYS = ["index", "id", "type", "function"]


def decode(chunks: list[bytes]) -> None:
    try:
        for _event in StreamDecoder(endpoint="http://fuzz").events(chunks):
            pass
    except AgentSmithError:
        pass  # a typed error is a fine answer to garbage


@QUICK
@given(st.binary(max_size=400).flatmap(split))
@example([b"data: " + TOO_DEEP.encode() + b"\n\n"])
@example([b"event: error\ndata: \xff\xfe\n\n"])
@example([b"error: " + TOO_DEEP.encode() + b"\n\n"])
def test_stream_decoder_raises_only_typed_errors_on_arbitrary_bytes(chunks: list[bytes]) -> None:
    decode(chunks)


@QUICK
@given(st.binary(max_size=400).flatmap(split))
def test_sse_reader_never_raises_on_arbitrary_bytes(chunks: list[bytes]) -> None:
    reader = SseReader(chunks)
    events = list(reader.all_events())
    assert all(isinstance(event.data, str) for event in events)


def _choice() -> st.SearchStrategy[dict[str, Any]]:
    call = json_objects_with(_CALL_KEYS) | st.fixed_dictionaries(
        {"function": json_objects_with(["name", "arguments"])},
        optional={"index": st.integers(-2, 3)},
    )
    delta = json_objects_with(_DELTA_KEYS) | st.fixed_dictionaries(
        {"tool_calls": st.lists(call, max_size=3)}
    )
    return st.fixed_dictionaries(
        {"delta": delta}, optional={"finish_reason": json_values, "index": json_values}
    )


_frames = st.lists(
    json_objects_with(_FRAME_KEYS)
    | st.fixed_dictionaries({"choices": st.lists(_choice(), max_size=2)}),
    max_size=6,
)


@QUICK
@given(_frames, st.booleans())
def test_stream_decoder_raises_only_typed_errors_on_arbitrary_frames(
    frames: list[dict[str, Any]], done: bool
) -> None:
    body = b"".join(b"data: " + json.dumps(frame).encode() + b"\n\n" for frame in frames)
    decode([body + (b"data: [DONE]\n\n" if done else b"")])
