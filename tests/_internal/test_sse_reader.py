"""The shared SSE reader: any chunking and line ending -> the same events, every one of them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from agent_smith._internal.sse_reader import SseEvent, SseReader, read_chunks

# Events of every kind: a priming event (id and retry, no data), comments,
# multi-line data, an event name, a field without a colon, an unknown field,
# multi-byte UTF-8, an id with NUL (ignored), a bad retry (ignored), and a
# value whose one leading space is stripped but not the second.
BODY_LF = (
    "id: p1\nretry: 1500\n\n"
    ": comment only\n\n"
    "data: first\n\n"
    ": keep-alive\ndata: two\ndata:  lines\n\n"
    'event: update\nid: e2\ndata: {"x": "é🌍"}\n\n'
    "data\nunknown: field\n\n"
    "id: bad\0id\nretry: 1x\ndata:no space\n\n"
).encode()

EXPECTED = [
    SseEvent("", "message", "p1", 1500),
    SseEvent(""),
    SseEvent("first"),
    SseEvent("two\n lines"),
    SseEvent('{"x": "é🌍"}', "update", "e2"),
    SseEvent(""),
    SseEvent("no space"),
]

ENDINGS = {"LF": b"\n", "CRLF": b"\r\n", "CR": b"\r"}


def read(chunks: Iterable[bytes]) -> tuple[list[SseEvent], bool]:
    reader = SseReader(chunks)
    events = list(reader.all_events())
    return events, reader.truncated


def with_ending(body: bytes, ending: str) -> bytes:
    return body.replace(b"\n", ENDINGS[ending])


def reference(body: bytes) -> list[SseEvent]:
    """The SSE rules applied to the whole body at once, line by line."""
    events: list[SseEvent] = []
    lines = re.split(r"\r\n|\r|\n", body.decode())
    lines.pop()  # whatever follows the last line end is an unfinished line
    data: list[str] | None = None
    seen, event, event_id, retry = False, "", None, None
    for line in lines:
        if not line:
            if seen:
                events.append(SseEvent("\n".join(data or []), event or "message", event_id, retry))
            data, seen, event, event_id, retry = None, False, "", None, None
            continue
        seen = True
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data = [*(data or []), value]
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)
    return events


def test_reference_reads_the_body_as_expected() -> None:
    assert reference(BODY_LF) == EXPECTED


@pytest.mark.parametrize("ending", ENDINGS)
def test_every_event_survives_a_split_at_every_byte(ending: str) -> None:
    body = with_ending(BODY_LF, ending)
    for cut in range(len(body) + 1):
        assert read([body[:cut], body[cut:]]) == (EXPECTED, False), f"split at byte {cut}"


@pytest.mark.parametrize("ending", ENDINGS)
def test_one_byte_chunks_give_the_same_events(ending: str) -> None:
    body = with_ending(BODY_LF, ending)
    assert read(body[i : i + 1] for i in range(len(body))) == (EXPECTED, False)


@pytest.mark.parametrize("ending", ENDINGS)
def test_split_at_every_pair_of_bytes_around_the_line_ends(ending: str) -> None:
    body = with_ending(b"data: a\n\nid: 2\ndata: b\n\n", ending)
    expected = [SseEvent("a"), SseEvent("b", "message", "2")]
    for first in range(len(body) + 1):
        for second in range(first, len(body) + 1):
            chunks = [body[:first], body[first:second], body[second:]]
            assert read(chunks) == (expected, False), f"split at bytes {first} and {second}"


@given(
    st.lists(
        st.sampled_from(
            [b"data: x", b"data:", b"id: 7", b"retry: 30", b": c", b"event: e", b"d\xc3\xa9"]
        ),
        max_size=12,
    ),
    st.sampled_from(list(ENDINGS.values())),
    st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_blank_lines_in_any_chunking_match_the_rules(
    lines: list[bytes], ending: bytes, cuts: list[int]
) -> None:
    """One line ending per body, as servers send; sseclient-py's framing (which
    we use) does not take a blank line whose line end differs from the line
    before it (``\\n`` then ``\\r``) as the end of an event."""
    # Each line is followed by its line end and, every other line, a blank line.
    body = b"".join(line + ending + (ending if i % 2 else b"") for i, line in enumerate(lines))
    body += ending
    edges = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    chunks = [body[a:b] for a, b in itertools.pairwise(edges)]
    events, _ = read(chunks)
    assert events == reference(body)


def test_blank_line_runs_and_empty_chunks_dispatch_nothing_extra() -> None:
    body = [b"\n\n\n", b"", b"data: a\n", b"", b"\n\n\n\n", b"data: b\r", b"", b"\n\r\n"]
    assert read(body) == ([SseEvent("a"), SseEvent("b")], False)


def test_an_event_the_body_ends_inside_is_not_dispatched_but_reported() -> None:
    assert read([b"data: a\n\ndata: cut"]) == ([SseEvent("a")], True)
    assert read([b"data: a\n\nid: 3\n"]) == ([SseEvent("a")], True)


def test_a_body_ending_after_comments_or_blank_lines_is_not_truncated() -> None:
    assert read([b"data: a\n\n: bye\n"]) == ([SseEvent("a")], False)
    assert read([b"data: a\n\n\n"]) == ([SseEvent("a")], False)
    assert read([]) == ([], False)


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert read([b"data: \xff\n\n"]) == ([SseEvent("\ufffd")], False)


def test_sseclient_events_over_the_reader_still_skip_data_less_events() -> None:
    # The framing override keeps sseclient-py's own events() working.
    events = list(SseReader([b"id: 1\n\ndata: a\r\n\r\n"]).events())
    assert [(e.data, e.event) for e in events] == [("a", "message")]


class _Raw:
    """A body without HTTP chunking: read1 hands over what has arrived."""

    chunked = False

    def __init__(self, *parts: bytes) -> None:
        self.parts = list(parts)
        self.decode_flags: list[bool] = []

    def read1(self, amt: int, decode_content: bool = False) -> bytes:
        self.decode_flags.append(decode_content)
        return self.parts.pop(0) if self.parts else b""


def test_read_chunks_gives_a_close_delimited_body_as_it_arrives() -> None:
    response = requests.Response()
    raw = _Raw(b"data: a\n", b"\ndata: b\n\n")
    response.raw = raw
    assert list(read_chunks(response)) == [b"data: a\n", b"\ndata: b\n\n"]
    assert raw.decode_flags and all(raw.decode_flags)  # gzip bodies come out decoded


WHOLE_EVENTS = [
    b'data: {"a": 1}\n\n',
    'data: {"x": "é🌍"}\r\n\r\n'.encode(),
    b'event: content_block_delta\ndata: {"b": 2}\n\n',
    b"data: one\n\ndata: two\n\n",  # two events in one chunk
    'data: {"t": 1}\n\ndata: é🌍\n\ndata: \n\n'.encode(),  # three, one of them empty
    b"data: a\n\ndata: b\nmore\n\n",  # several, one of two lines: framed
    b"data: a\n\n: note\n\n",  # an event and a comment: framed
    b"data: a\n\n\n\n",  # an event and a blank line: framed
    b'event: e\r\ndata: {"c": 3}\r\n\r\n',
    b": keep-alive\n\n",
    b"data: last\n\n",
]


@pytest.mark.parametrize("start", range(len(WHOLE_EVENTS)))
def test_chunks_that_are_one_event_each_read_as_the_rules_say(start: int) -> None:
    # From any chunk on, the fast path for whole-event chunks hands over to the framing.
    chunks = WHOLE_EVENTS[start:] + WHOLE_EVENTS[:start]
    assert read(chunks) == (reference(b"".join(chunks)), False)


@given(st.lists(st.sampled_from(WHOLE_EVENTS), max_size=12))
def test_any_sequence_of_whole_event_chunks_reads_as_the_rules_say(chunks: list[bytes]) -> None:
    assert read(chunks) == (reference(b"".join(chunks)), False)
