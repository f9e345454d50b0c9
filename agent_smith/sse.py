"""The one Server-Sent Events reader: a body's byte chunks in, every event out.

Both SSE users read through here: the LLM stream decoder
(:mod:`agent_smith.llm.sse`) and MCP's Streamable HTTP (:mod:`agent_smith.mcp.sse`).
:class:`SseReader` is ``sseclient-py``'s client with two things changed:

- every event is yielded, data-less ones included. ``SSEClient.events()``
  drops events without data, but their ``id`` and ``retry`` still count, and
  MCP servers send exactly such "priming" events so a client can resume a
  stream (SEP-1699). Callers skip the events they have no use for.
- the framing (``_read``) finds the blank lines that end events in the whole
  chunk at once, with C string methods, instead of stitching line by line:
  the LLM path runs once per token and that stitching was most of its cost.
  Line ends are ``\\r\\n``, ``\\n`` or a lone ``\\r`` (the SSE rules), also when
  a ``\\r\\n`` is split between two chunks.

Per the SSE rules an event that the body ends in the middle of (no blank line
after it) is not dispatched; :attr:`SseReader.truncated` says whether that
happened, so a caller that expects a clean end can tell a cut-off stream.

:func:`read_chunks` reads a ``requests`` response's bytes as they arrive.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from sseclient import SSEClient

if TYPE_CHECKING:
    import requests

log = logging.getLogger(__name__)

_READ1_SIZE = 65536


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

    def _read(self) -> Iterator[bytes]:
        """Each complete event's lines, joined by ``\\n``, without the blank line ending it."""
        parts: list[bytes] = []  # the chunks of an event still waiting for its blank line
        after_cr = False  # the last chunk ended in \r: a \n opening the next one is its pair
        for chunk in self._event_source:
            if after_cr or b"\r" in chunk:  # rare: most servers end lines with \n
                if after_cr and chunk:
                    after_cr = False
                    if chunk[0] == 0x0A:
                        chunk = chunk[1:]
                if b"\r" in chunk:
                    after_cr = chunk[-1] == 0x0D
                    chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if parts:
                if not chunk:
                    continue
                if b"\n\n" not in chunk and not (chunk[0] == 0x0A and parts[-1][-1] == 0x0A):
                    parts.append(chunk)  # joined once, when the event is complete
                    continue
                parts.append(chunk)
                chunk = b"".join(parts)
                parts.clear()
            blocks = chunk.split(b"\n\n")
            rest = blocks.pop()
            if rest:
                parts.append(rest)
            for block in blocks:
                if block:  # b"" between runs of blank lines: no event
                    yield block
        rest = b"".join(parts)
        self.truncated = any(line and not line.startswith(b":") for line in rest.split(b"\n"))

    def all_events(self) -> Iterator[SseEvent]:
        """Every event of the body in order, data-less ones included."""
        new = tuple.__new__  # SseEvent(...) would add a Python-level call per event
        for block in self._read():
            text = block.decode("utf-8", "replace")
            # The common frame is one "data: ..." line: no line loop for it.
            if text.startswith("data: ") and "\n" not in text:
                yield new(SseEvent, (text[6:], "message", None, None))
            else:
                yield _parse(text)


def _parse(text: str) -> SseEvent:
    """The fields of one event's lines (SSE rules: unknown fields and comments ignored)."""
    data: list[str] = []
    event = ""
    event_id: str | None = None
    retry: int | None = None
    for line in text.split("\n"):
        if not line or line[0] == ":":
            continue  # blank line or comment
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
