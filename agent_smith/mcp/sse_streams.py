"""Reading MCP's SSE streams: JSON-RPC frames out, stream position, resumption.

Streamable HTTP answers a POST, and holds the GET listening stream open, as
Server-Sent Events. :func:`pump` feeds one such body to the frame handler as
bytes arrive, through the shared reader of :mod:`agent_smith._internal.sse_reader` (which
keeps the data-less "priming" events whose ``id`` and ``retry`` MCP needs).
:class:`StreamPosition` remembers the last event id and the server's
``retry`` delay so :func:`resume_until` can pick a dropped stream up again
with ``Last-Event-ID`` (SEP-1699). :func:`event_frames` and
:data:`STREAM_ERRORS` are shared with the legacy HTTP+SSE transport
(:mod:`.legacy_sse`), which reads its one stream the same way.
:func:`no_read_timeout` lets a reader wait out a quiet stream;
:func:`wake_reader` lets another thread unblock it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import requests
import urllib3.exceptions

from .._internal import json_input
from .._internal.sockets import shutdown_socket, socket_of
from .._internal.sse_reader import SseReader, read_chunks

log = logging.getLogger(__name__)

#: An id no response carries: :func:`pump` reads the stream to its end.
NOTHING = object()
DEFAULT_RETRY = 1.0  # seconds before resuming a stream when the server named no delay
MAX_RESUMES = 5  # resumptions in a row that may end without what was awaited
#: What reading a stream raises when it breaks or another thread woke it.
STREAM_ERRORS = (
    requests.RequestException,
    urllib3.exceptions.HTTPError,  # read_chunks' read1() raises urllib3's own errors
    OSError,
    ValueError,
)


class StreamPosition:
    """Where a resumable SSE stream got to: last event id and the server's retry delay."""

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry = DEFAULT_RETRY


def pump(
    response: requests.Response,
    position: StreamPosition,
    deliver: Callable[[Any], None],
    *,
    want: Any,
    server: str,
) -> bool:
    """Feed one SSE body's frames to ``deliver``; True once the response with id ``want`` passed.

    A stream that breaks (or that another thread woke with :func:`wake_reader`)
    just ends: the caller decides whether to resume it.
    """
    try:
        for event in SseReader(read_chunks(response)).all_events():
            if event.id is not None:
                position.last_event_id = event.id
            if event.retry is not None:
                position.retry = event.retry / 1000.0
            if not event.data.strip():
                continue
            got = False
            for item in event_frames(event.data, server):
                deliver(item)
                got = got or is_response_to(item, want)
            if got:
                return True
    except STREAM_ERRORS as err:
        log.debug("SSE stream from %s ended: %s", server, type(err).__name__)
    return False


def event_frames(data: str, server: str) -> list[Any]:
    """The JSON-RPC frames in one SSE event's data (one frame or a batch); none if not JSON."""
    try:
        parsed = json_input.loads(data)
    except ValueError:
        log.warning("MCP server %s sent an SSE event that is not JSON", server)
        return []
    return parsed if isinstance(parsed, list) else [parsed]


def resume_until(
    position: StreamPosition,
    reopen: Callable[[str], bool | None],
    *,
    closing: threading.Event,
    fail: Callable[[str], Exception],
) -> None:
    """Resume a stream until its awaited response arrived.

    Waits the server's ``retry`` delay, then calls ``reopen(last_event_id)``:
    True when the response came, False when the stream ended again first,
    None when the server refused to resume. Raises ``fail(why)`` when the
    stream carried no event id, was refused, ended again on each of
    :data:`MAX_RESUMES` resumptions, or ``closing`` was set.
    """
    for _ in range(MAX_RESUMES):
        if position.last_event_id is None:
            raise fail("SSE stream ended before the response")
        if closing.wait(position.retry):
            raise fail("transport closed while resuming a stream")
        answered = reopen(position.last_event_id)
        if answered is None:
            raise fail("SSE stream ended and the server refused to resume it")
        if answered:
            return
    raise fail("SSE stream kept ending before the response")


def is_response_to(item: Any, want: Any) -> bool:
    """Whether ``item`` is the response (result or error) to request id ``want``."""
    # Ids may be 0: compare, never test for truthiness.
    return (
        isinstance(item, dict)
        and "method" not in item
        and ("result" in item or "error" in item)
        and item.get("id") == want
        and type(item.get("id")) is type(want)
    )


def content_type(response: requests.Response) -> str:
    """The response's media type, lower case, without parameters."""
    return response.headers.get("Content-Type", "").split(";")[0].strip().lower()


def no_read_timeout(response: requests.Response) -> None:
    """Let reads of a streamed ``response`` wait however long the server stays quiet."""
    sock = socket_of(response)
    if sock is not None:
        sock.settimeout(None)


def wake_reader(response: requests.Response) -> None:
    """Wake a thread blocked reading ``response`` (see :mod:`agent_smith._internal.sockets`).

    Shuts the socket down; closes the response when no socket can be found.
    """
    if not shutdown_socket(response):
        response.close()
