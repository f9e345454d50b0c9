"""pump and resume_until: SSE bodies to frames, ends of streams, resumption policy."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests
from urllib3.exceptions import ProtocolError

from agent_smith.errors import TransportError
from agent_smith.mcp.sse_streams import NOTHING, StreamPosition, pump, resume_until


class _BrokenRaw:
    """A connection-delimited body that yields ``chunks`` and then breaks as urllib3 does."""

    chunked = False

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    def read1(self, amt: int, decode_content: bool = True) -> bytes:
        if self._chunks:
            return self._chunks.pop(0)
        raise ProtocolError("Connection broken: shutdown under the reader")


def response_over(raw: Any) -> requests.Response:
    response = requests.Response()
    response.status_code = 200
    response.headers["Content-Type"] = "text/event-stream"
    response.raw = raw
    return response


def test_a_stream_broken_inside_urllib3_just_ends_after_delivering_what_came() -> None:
    frame = b'id: e1\nretry: 250\ndata: {"jsonrpc": "2.0", "method": "notifications/x"}\n\n'
    delivered: list[Any] = []
    position = StreamPosition()
    done = pump(
        response_over(_BrokenRaw(frame)), position, delivered.append, want=NOTHING, server="s"
    )
    assert done is False
    assert delivered == [{"jsonrpc": "2.0", "method": "notifications/x"}]
    assert (position.last_event_id, position.retry) == ("e1", 0.25)


def test_pump_stops_at_the_awaited_response_even_with_id_zero() -> None:
    body = b'data: {"jsonrpc": "2.0", "id": 0, "result": {}}\n\n'
    delivered: list[Any] = []
    assert pump(
        response_over(_BrokenRaw(body)), StreamPosition(), delivered.append, want=0, server="s"
    )
    assert delivered == [{"jsonrpc": "2.0", "id": 0, "result": {}}]


def _fail(why: str) -> Exception:
    return TransportError(why, operation="send", endpoint_or_server="s")


def test_resume_needs_an_event_id() -> None:
    with pytest.raises(TransportError, match="ended before the response"):
        resume_until(StreamPosition(), lambda last: True, closing=threading.Event(), fail=_fail)


def test_resume_reopens_after_the_last_event_until_answered() -> None:
    position = StreamPosition()
    position.last_event_id, position.retry = "p1", 0.0
    asked: list[str] = []

    def reopen(last: str) -> bool:
        asked.append(last)
        position.last_event_id = f"p{len(asked) + 1}"
        return len(asked) == 2

    resume_until(position, reopen, closing=threading.Event(), fail=_fail)
    assert asked == ["p1", "p2"]


def test_resume_gives_up_when_refused_or_when_nothing_new_comes() -> None:
    position = StreamPosition()
    position.last_event_id, position.retry = "p1", 0.0
    with pytest.raises(TransportError, match="refused"):
        resume_until(position, lambda last: None, closing=threading.Event(), fail=_fail)
    calls: list[str] = []

    def never(last: str) -> bool:
        calls.append(last)
        return False

    with pytest.raises(TransportError, match="kept ending"):
        resume_until(position, never, closing=threading.Event(), fail=_fail)
    assert len(calls) == 5


def test_resume_stops_when_the_transport_closes() -> None:
    position = StreamPosition()
    position.last_event_id = "p1"
    closing = threading.Event()
    closing.set()
    with pytest.raises(TransportError, match="closed"):
        resume_until(position, lambda last: True, closing=closing, fail=_fail)
