"""The default authorization handler: the user's browser, and the redirect caught on 127.0.0.1.

RFC 8252 (OAuth for native apps): the redirect URI is
``http://127.0.0.1:<port>/callback`` on a port this process listens on, so
the authorization server's redirect after consent comes straight back here.
The listening socket is bound when the redirect URI is first needed (a
dynamic registration names it) and served from the calling thread until the
redirect arrives or the wait ends; no thread is started. The port is kept
for later authorizations so a registration made with it stays valid.

When no browser can be opened the authorization URL is logged at WARNING
level on ``agent_smith.mcp.auth.loopback`` for the user to open by hand.
"""

from __future__ import annotations

import contextlib
import logging
import socketserver
import threading
import time
import webbrowser
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...errors import AgentTimeoutError, TransportError

log = logging.getLogger(__name__)

_HOST = "127.0.0.1"
_REQUEST_TIMEOUT = 10.0  # a browser connection that sends nothing is dropped after this
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>agent_smith</title>"
    "<p>{message} You can close this tab.</p>"
)


class LoopbackAuthorization:
    """Opens the browser at the authorization URL and waits for the redirect on 127.0.0.1.

    ``port`` 0 picks a free one (kept afterwards); ``timeout`` is how long
    the user has to consent; ``open_browser(url) -> bool`` replaces
    :func:`webbrowser.open`.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        open_browser: Callable[[str], bool] | None = None,
    ) -> None:
        if not 0 <= port <= 65535 or not path.startswith("/"):
            raise ValueError("LoopbackAuthorization needs a port in 0..65535 and a path from /")
        self._port = port
        self._path = path
        self._timeout = timeout
        self._open_browser = open_browser or webbrowser.open
        self._lock = threading.RLock()  # open_browser may read redirect_uri
        self._server: _Listener | None = None

    @property
    def redirect_uri(self) -> str:
        """The redirect URI (binding the loopback port if it is not bound yet)."""
        with self._lock:
            server = self._bind()
            return f"http://{_HOST}:{server.server_address[1]}{self._path}"

    def __call__(self, authorization_url: str) -> str:
        """Show ``authorization_url`` to the user; return the URL the server redirected to.

        Raises AgentTimeoutError when no redirect came within the timeout.
        """
        with self._lock:
            server = self._bind()
            caught: list[str] = []
            server.RequestHandlerClass = _handler_for(self._path, caught, self._port)
            opened = False
            with contextlib.suppress(webbrowser.Error):
                opened = self._open_browser(authorization_url)
            if not opened:
                log.warning("open this URL in a browser to authorize: %s", authorization_url)
            deadline = time.monotonic() + self._timeout
            try:
                while not caught:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise AgentTimeoutError(
                            "no authorization redirect came back in time",
                            operation="authorize",
                            budget=self._timeout,
                        )
                    server.timeout = left
                    server.handle_request()
            finally:
                self._release()
            return caught[0]

    def close(self) -> None:
        """Stop listening on the loopback port (it is bound again when next needed)."""
        with self._lock:
            self._release()

    def __repr__(self) -> str:
        return f"LoopbackAuthorization(port={self._port}, path={self._path!r})"

    def _bind(self) -> _Listener:
        if self._server is None:
            try:
                self._server = _Listener((_HOST, self._port), _Ignore)
            except OSError as err:
                raise TransportError(
                    f"cannot listen on {_HOST}:{self._port} for the authorization redirect: "
                    f"{err.strerror or err}",
                    operation="listen",
                    endpoint_or_server=f"{_HOST}:{self._port}",
                ) from err
            self._port = self._server.server_address[1]  # kept: registrations name it
        return self._server

    def _release(self) -> None:
        if self._server is not None:
            self._server.server_close()
            self._server = None


class _Listener(socketserver.TCPServer):
    """One request at a time, in the caller's thread (HTTPServer would resolve its name)."""

    allow_reuse_address = True  # the kept port can be bound again at once


class _Ignore(BaseHTTPRequestHandler):
    """Answers requests that arrive while no authorization is waiting."""

    timeout = _REQUEST_TIMEOUT

    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        return None  # the query holds the authorization code: never log it


def _handler_for(path: str, caught: list[str], port: int) -> type[BaseHTTPRequestHandler]:
    """A handler class that records the redirect to ``path`` in ``caught``."""

    class Callback(_Ignore):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = parse_qs(parts.query)
            if parts.path != path or not ("code" in params or "error" in params):
                self.send_error(404)
                return
            caught.append(f"http://{_HOST}:{port}{self.path}")
            message = "Authorization refused." if "error" in params else "Authorization complete."
            page = _PAGE.format(message=message).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    return Callback
