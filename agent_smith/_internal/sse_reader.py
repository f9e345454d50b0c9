"""The one Server-Sent Events reader: a body's byte chunks in, every event out.

Both SSE users read through here: the LLM stream decoder
(:mod:`agent_smith.llm.stream_decoder`) and MCP's Streamable HTTP
(:mod:`agent_smith.mcp.sse_streams`).
:class:`SseReader` is ``sseclient-py``'s client with two things changed:

- every event is yielded, data-less ones included. ``SSEClient.events()``
  drops events without data, but their ``id`` and ``retry`` still count, and
  MCP servers send exactly such "priming" events so a client can resume a
  stream (SEP-1699). Callers skip the events they have no use for.
- the fields are parsed here, with a fast path for the common event of a
  single ``data:`` line (the LLM path runs once per token).

The framing, stitching chunks into events whatever the chunking and line
ends (``\\r\\n``, ``\\n`` or a lone ``\\r``), is sseclient-py's own ``_read()``,
after a fast path for the usual chunk that is exactly one event.

Per the SSE rules an event that the body ends in the middle of (no blank line
after it) is not dispatched; :attr:`SseReader.truncated` says whether that
happened, so a caller that expects a clean end can tell a cut-off stream, and
:attr:`SseReader.tail` holds that last event's fields for a caller that
accepts some events without their blank line (``data: [DONE]``).

One field beyond the SSE rules: a block with no ``data`` but an ``error:``
line (llama.cpp builds of 2025 reported a failed stream that way) is an
``error`` event whose data is that line's value, so the failure is seen
instead of dropped as an unknown field.

:func:`read_chunks` reads a ``requests`` response's bytes as they arrive.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from sseclient import SSEClient

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

_READ1_SIZE = 65536
_EVENT_ENDS = (b"\r\r", b"\n\n", b"\r\n\r\n")  # the blank line that ends an event
_new = tuple.__new__  # SseEvent(...) would add a Python-level call per event


class SseEvent(NamedTuple):
    """One SSE event. ``data`` is ``""`` when the event had no data lines;
    ``id`` and ``retry`` are ``None`` when the event did not set them."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseReader(SSEClient):
    """sseclient-py's client over byte chunks, yielding every event (see the module doc).

    Iterate :meth:`all_events` once; afterwards :attr:`truncated` tells
    whether the body ended inside an event.
    """

    def __init__(self, chunks: Iterable[bytes]) -> None:
        # The attributes SSEClient's methods use, set here rather than by its
        # __init__, which logs a debug line per stream (one per LLM turn).
        self._event_source: Iterator[bytes] = iter(chunks)
        self._char_enc = "utf-8"
        self._logger = log
        self.truncated = False
        self.tail: SseEvent | None = None

    def all_events(self) -> Iterator[SseEvent]:
        """Every event of the body in order, data-less ones included.

        Servers flush one event per HTTP chunk: while each chunk is exactly one
        event of the usual shape (:func:`_whole_event`), or several one-line
        data events (:func:`_whole_data_events`), it is read here directly;
        from the first chunk that is anything else on, the rest of the body
        goes through sseclient-py's framing.
        """
        source = iter(self._event_source)
        for chunk in source:
            event = _whole_event(chunk)
            if event is not None:
                yield event
                continue
            events = _whole_data_events(chunk)
            if events is None:
                self._event_source = itertools.chain((chunk,), source)
                yield from self._framed_events()
                return
            yield from events

    def _framed_events(self) -> Iterator[SseEvent]:
        new = tuple.__new__  # SseEvent(...) would add a Python-level call per event
        # sseclient-py's _read() does the framing: it stitches chunks into
        # events, each ending in its blank line, and yields a trailing
        # unfinished event as it is.
        for block in self._read():  # type: ignore[attr-defined]  # not in its stubs
            if not block.endswith(_EVENT_ENDS):
                self.truncated = any(
                    line and not line.startswith(b":") for line in block.splitlines()
                )
                if self.truncated:
                    self.tail = _parse(block.decode("utf-8", "replace"))
                return
            text = block.decode("utf-8", "replace")
            # The common frame is one "data: ..." line: no line loop for it.
            if text.startswith("data: ") and text.endswith("\n\n") and text.count("\n") == 2:
                yield new(SseEvent, (text[6:-2], "message", None, None))
                continue
            event = _parse(text)
            if event is not None:
                yield event


def _whole_event(chunk: bytes) -> SseEvent | None:
    """``chunk`` as an event if it is exactly one of the usual shape, else None.

    The shapes: one ``data:`` line ended by a blank line (LF, or CRLF as Gemini
    sends it), or an ``event:`` line then one ``data:`` line (Anthropic, the
    Responses API). An event ends at a blank line and a whole event holds whole
    UTF-8 characters, so such a chunk decodes on its own.
    """
    lines = chunk.count(b"\n")
    if chunk.startswith(b"data: "):
        if lines == 2 and chunk.endswith(b"\n\n") and b"\r" not in chunk:
            data = chunk[6:-2]
        elif lines == 2 and chunk.endswith(b"\r\n\r\n") and chunk.count(b"\r") == 2:
            data = chunk[6:-4]
        else:
            return None
        return _new(SseEvent, (data.decode("utf-8", "replace"), "message", None, None))
    if lines == 3 and chunk.startswith(b"event: ") and chunk.endswith(b"\n\n"):
        cut = chunk.find(b"\n") + 1
        if chunk.startswith(b"data: ", cut) and b"\r" not in chunk:
            data, name = chunk[cut + 6 : -2], chunk[7 : cut - 1]
            return _new(SseEvent, (data.decode("utf-8", "replace"), name.decode(), None, None))
    return None


def _whole_data_events(chunk: bytes) -> list[SseEvent] | None:
    """``chunk`` as the events it holds if it is several of one ``data:`` line each, else None.

    A server that writes the events ready together at once (an A2A task,
    its first status and first token) sends such a chunk; LF line ends only.
    """
    if not chunk.endswith(b"\n\n") or b"\r" in chunk:
        return None
    events = []
    for block in chunk[:-2].split(b"\n\n"):
        if not block.startswith(b"data: ") or b"\n" in block:
            return None
        events.append(_new(SseEvent, (block[6:].decode("utf-8", "replace"), "message", None, None)))
    return events


def _parse(text: str) -> SseEvent | None:
    """The fields of one event's lines (SSE rules: unknown fields and comments ignored).

    ``None`` for a block of only blank lines: there is no event.
    """
    data: list[str] = []
    event = ""
    event_id: str | None = None
    retry: int | None = None
    error: str | None = None
    fields = False
    for line in text.splitlines():
        if not line:
            continue
        fields = True
        if line[0] == ":":
            continue  # a comment
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)
        elif name == "error":
            error = value
    if not fields:
        return None
    if error is not None and not data:
        return SseEvent(error, "error", event_id, retry)
    return SseEvent("\n".join(data), event or "message", event_id, retry)


def read_chunks(response: requests.Response) -> Iterator[bytes]:
    """The body's bytes as they arrive (never waiting to fill a buffer).

    A chunked body gives one item per HTTP chunk; a body delimited by its
    length or by the connection closing gives whatever has arrived (where
    ``iter_content(chunk_size=None)`` would wait for the whole body).
    """
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if getattr(raw, "chunked", False) or read1 is None:
        # Returned, not delegated to: one generator layer less per chunk.
        return response.iter_content(chunk_size=None)
    return _read1_chunks(read1)


def _read1_chunks(read1: Callable[..., bytes]) -> Iterator[bytes]:
    while True:
        data = read1(_READ1_SIZE, decode_content=True)
        if not data:
            return
        yield data
