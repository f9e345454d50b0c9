"""The socket under a streamed ``requests`` response, and waking its reader.

A thread blocked reading a streamed body (an LLM reply, an MCP SSE stream)
must be woken from another thread when the caller cancels or closes. Closing
does not do it: ``response.close()`` from another thread can block inside
``http.client`` while the reader holds the buffer, and closing a socket does
not interrupt a ``recv()`` already blocked on it (Linux). ``shutdown(SHUT_RDWR)``
does: the blocked read returns at once with end-of-stream or an error, and the
reading thread then closes the response itself.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter

log = logging.getLogger(__name__)


def socket_of(response: requests.Response) -> socket.socket | None:
    """The socket under a streamed response, or None when it cannot be found."""
    raw = response.raw
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if isinstance(sock, socket.socket):
        return sock
    # Fallback: http.client's buffered socket file inside the urllib3 response.
    fp = getattr(getattr(raw, "_fp", None), "fp", None)
    sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def shutdown_socket(response: requests.Response) -> bool:
    """Shut the response's socket down so a read blocked on it returns at once.

    Safe from any thread. Returns False when no socket could be found (the
    caller decides whether closing the response instead is safe).
    """
    sock = socket_of(response)
    if sock is None:
        return False
    shutdown(sock)
    return True


def shutdown(sock: socket.socket) -> None:
    """Shut ``sock`` down so a read blocked on it returns at once (any thread)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed or never connected: nothing to wake
        log.debug("socket already closed when shutting it down")


# -- the socket of a request still waiting for its response headers ----------
#
# A streamed response exposes its socket only once the headers arrived. A
# server that takes long to send them (a non-streamed completion is sent whole
# when generation ends) would otherwise make cancellation wait for it. The
# runtime's HTTP adapter builds its connections from the classes below, which
# tell the thread's watcher which socket the request now waits on.
#
# A watcher that keeps the socket to shut it down later must stop before the
# connection goes back to the pool, where the next request takes it: a late
# shutdown would break that request. So the watcher may return a release
# hook; the pool calls it right before it takes the connection back, and a
# hook that answers True (the socket was, or may have been, shut down) has
# the connection closed instead of reused.

_watchers = threading.local()

#: Called when a watched connection goes back to the pool; True: close it instead.
ReleaseHook = Callable[[], bool]


@contextmanager
def watch_socket(on_socket: Callable[[socket.socket], ReleaseHook | None]) -> Iterator[None]:
    """Call ``on_socket`` with the socket a request made in this block waits on.

    It runs in the calling thread, right before the wait for response headers;
    what it returns is the connection's release hook (see the comment above).
    """
    previous = getattr(_watchers, "current", None)
    _watchers.current = on_socket
    try:
        yield
    finally:
        _watchers.current = previous


class _AnnounceSocket:
    """Connection mixin: tell the thread's watcher the socket before waiting for headers."""

    sock: socket.socket | None
    on_release: ReleaseHook | None = None

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        watcher = getattr(_watchers, "current", None)
        if watcher is not None and self.sock is not None:
            self.on_release = watcher(self.sock)
        return super().getresponse(*args, **kwargs)  # type: ignore[misc]


class _ReleaseOnReturn:
    """Pool mixin: run a connection's release hook once as it comes back (close it if asked)."""

    def _put_conn(self, conn: Any) -> None:
        hook = getattr(conn, "on_release", None)
        if hook is not None:
            conn.on_release = None
            if hook():
                conn.close()  # the next request reconnects
        super()._put_conn(conn)  # type: ignore[misc]


class _HTTPConnection(_AnnounceSocket, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_AnnounceSocket, urllib3.connection.HTTPSConnection):
    pass


class _HTTPConnectionPool(_ReleaseOnReturn, urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSConnectionPool(_ReleaseOnReturn, urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class WatchingAdapter(HTTPAdapter):
    """A ``requests`` adapter whose connections report to :func:`watch_socket`."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _HTTPConnectionPool,
            "https": _HTTPSConnectionPool,
        }
