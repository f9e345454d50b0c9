"""The threaded HTTP server on 127.0.0.1 under the scripted MCP and OAuth fakes.

A fake subclasses :class:`FakeHttpServer`, passing its request handler
class; each handler sees the fake as ``self.fake``. ``with fake:`` serves on
a thread of its own; leaving stops the server and joins the thread (a fake
with open streams ends them first by overriding :meth:`FakeHttpServer.stop`).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

WAIT = 10.0  # generous bound for joining the server thread
_F = TypeVar("_F", bound="FakeHttpServer")


class FakeHttpServer:
    """A ``ThreadingHTTPServer`` on a free 127.0.0.1 port; ``base`` is its ``http://`` origin."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str) -> None:
        bound = type("Handler", (handler,), {"fake": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.05,), name=name, daemon=True
        )

    def __enter__(self: _F) -> _F:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(WAIT)


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test output free of access logs."""

    def log_message(self, format: str, *args: Any) -> None:
        return None


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer ``handler``'s request with ``payload`` as a JSON body (and extra headers)."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)
