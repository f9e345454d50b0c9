"""The HTTP responses a transport is reading now, so closing or cancelling can wake their readers.

:meth:`~agent_smith.mcp.http.StreamableHttpTransport.close` wakes every
reader; at protocol 2026-07-28 closing the stream that carries a request's
answer cancels that request, and its reader then stays quiet (it is
"abandoned": nobody waits for it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests

from .sse_streams import wake_reader


class OpenResponses:
    """Responses being read, by the request whose answer they carry (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[requests.Response] = set()
        self._answering: dict[Any, requests.Response] = {}
        self._abandoned: set[Any] = set()

    @contextmanager
    def tracked(self, response: requests.Response, *, answering: Any = None) -> Iterator[None]:
        """Register ``response`` while it is read, then close it.

        ``answering`` is the id of the request whose answer it carries, if any.
        """
        with self._lock:
            self._open.add(response)
            if answering is not None:
                self._answering[answering] = response
        try:
            yield
        finally:
            with self._lock:
                self._open.discard(response)
                if answering is not None and self._answering.get(answering) is response:
                    del self._answering[answering]
            response.close()

    def cancel(self, request_id: Any) -> bool:
        """Close the stream of ``request_id``'s answer; False when none is being read."""
        with self._lock:
            response = self._answering.pop(request_id, None)
            if response is None:
                return False
            self._abandoned.add(request_id)
        wake_reader(response)
        return True

    def abandoned(self, request_id: Any) -> bool:
        """Whether ``request_id``'s answer stream was closed by :meth:`cancel`."""
        with self._lock:
            return request_id in self._abandoned

    def finished(self, request_id: Any) -> None:
        """Forget ``request_id`` (its reader is done)."""
        with self._lock:
            self._abandoned.discard(request_id)

    def wake_all(self) -> None:
        """Close every response being read, so each reader wakes."""
        with self._lock:
            open_now = list(self._open)
        for response in open_now:
            wake_reader(response)
