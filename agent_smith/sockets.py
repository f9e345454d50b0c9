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

import requests

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
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed or never connected: nothing to wake
        log.debug("socket already closed when shutting it down")
    return True
