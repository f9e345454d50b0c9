"""A task's updates as a server-sent event stream, on either A2A binding.

:func:`event_stream` is the WSGI body of ``SendStreamingMessage`` (JSON-RPC:
each update wrapped in a JSON-RPC response) and of ``POST /message:stream``
(HTTP+JSON: each update as it is): one write per group of updates that are
ready together (:func:`~agent_smith.web.a2a_tasks.run_task`).

A streamed answer is mostly its middle chunks (``artifactUpdate`` with
``append`` and not ``lastChunk``), one per token, which differ only in their
text. :class:`Frames` encodes the first of them whole, once with a marker in
place of the text, keeps the bytes around the marker, and writes each later
one as those bytes with its text encoded in between: the same bytes as
encoding the update whole, for the price of encoding one string.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from contextlib import ExitStack
from typing import Any

from ..a2a.wire import JsonObject
from .stream import TurnStream, compact_json, sse

log = logging.getLogger(__name__)

# Stands for a chunk's text while its frame is cut. Only fixed fields follow the
# text, so its last occurrence is the text's place (a caller's request id, which
# comes before, could hold anything).
_MARKER = "\0text\0"
_ENCODED_MARKER = compact_json(_MARKER).encode()


def rpc_result(request_id: Any, result: Any) -> JsonObject:
    """The JSON-RPC 2.0 response carrying ``result``."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


class Frames:
    """The SSE frames of a stream's updates (see the module doc); call it with a group.

    ``rpc``: each update goes out as the ``result`` of a JSON-RPC response
    with ``request_id``.
    """

    __slots__ = ("_after", "_before", "_id", "_rpc", "_task")

    def __init__(self, *, rpc: bool, request_id: Any = None) -> None:
        self._rpc, self._id = rpc, request_id
        self._task: str | None = None  # whose middle chunks the cut frame is for
        self._before = self._after = b""

    def __call__(self, group: list[JsonObject]) -> bytes:
        """The bytes of one write: the frames of ``group``'s updates."""
        return b"".join([self._frame(update) for update in group])

    def _frame(self, update: JsonObject) -> bytes:
        chunk = update.get("artifactUpdate")
        if chunk is not None and chunk["append"] and not chunk["lastChunk"]:
            parts = chunk["artifact"]["parts"]
            if len(parts) == 1 and len(parts[0]) == 1 and "text" in parts[0]:
                if chunk["taskId"] != self._task:
                    self._cut(update)
                    self._task = chunk["taskId"]
                return self._before + compact_json(parts[0]["text"]).encode() + self._after
        return sse(rpc_result(self._id, update) if self._rpc else update)

    def _cut(self, update: JsonObject) -> None:
        chunk = update["artifactUpdate"]
        artifact = {**chunk["artifact"], "parts": [{"text": _MARKER}]}
        marked = {**update, "artifactUpdate": {**chunk, "artifact": artifact}}
        frame = sse(rpc_result(self._id, marked) if self._rpc else marked)
        self._before, _, self._after = frame.rpartition(_ENCODED_MARKER)


def event_stream(
    updates: Generator[list[JsonObject], None, None],
    frames: Frames,
    environ: dict[str, Any],
) -> TurnStream:
    """The body streaming ``updates`` (a write per group); closing it closes ``updates``.

    waitress's ``environ["waitress.client_disconnected"]`` says the client
    went away: the body then ends before the next write, which cancels the
    task's turn.
    """
    disconnected = environ.get("waitress.client_disconnected")

    def body() -> Generator[bytes, None, None]:
        try:
            for group in updates:
                if disconnected is not None and disconnected():
                    log.info("A2A stream client went away: cancelling its task")
                    return
                yield frames(group)
        finally:
            updates.close()

    return TurnStream(body(), ExitStack())
