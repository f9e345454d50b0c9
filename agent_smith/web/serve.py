"""WebServer: a WSGI app served by waitress (the optional extra ``agent-smith[web]``).

Each open stream holds one of waitress's worker threads for as long as its
turn runs, so ``threads`` bounds the number of concurrent turns (further
requests queue). waitress sends each chunk the app yields as it comes
(``send_bytes=1``), so frames are not held back. It keeps reading each
connection while its request runs (``channel_request_lookahead``), so it
notices at once a client that went away and says so in
``environ["waitress.client_disconnected"]``; the app checks that before each
frame and ends the stream, which cancels the turn.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .._internal.closing import Closeable
from .._internal.extras import install_hint
from ..errors import ConfigError

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
INSTALL_HINT = install_hint("web")
_JOIN_SECONDS = 30.0


class WebServer(Closeable):
    """Serves ``app`` on ``host:port`` (0: a free port) with ``threads`` worker threads.

    :meth:`serve_forever` blocks (the CLI); :meth:`start` serves from a
    background thread (tests, notebooks). :meth:`close` stops serving and
    joins every thread.
    """

    def __init__(
        self, app: WsgiApp, *, host: str = "127.0.0.1", port: int = 0, threads: int = 32
    ) -> None:
        try:
            from waitress.server import create_server
        except ImportError as err:
            raise ConfigError(f"serving the web app needs waitress: {INSTALL_HINT}") from err
        if threads < 1:
            raise ConfigError(f"threads must be at least 1, got {threads!r}")
        self._server: Any = create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            ident="agent_smith",
            channel_request_lookahead=1,
            clear_untrusted_proxy_headers=True,
        )
        self._thread: threading.Thread | None = None
        self._closed = False
        self._stopping = threading.Event()

    @property
    def url(self) -> str:
        """``http://host:port`` of the listening socket."""
        host, port = self._server.socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        """Serve until :meth:`close` (from another thread) or Ctrl-C."""
        self._server.run()

    def start(self) -> WebServer:
        """Serve from a background thread; return self."""
        self._thread = threading.Thread(target=self._serve, name="agent_smith-web-server")
        self._thread.start()
        return self

    def _serve(self) -> None:
        """waitress's event loop, until :meth:`close` asks it to stop; then drop every connection.

        The loop is ours rather than ``server.run()`` so that stopping it does
        not depend on waitress's trigger pipe still being open: the loop
        checks the stop flag at every tick, and the trigger only wakes it early.
        """
        from waitress import wasyncore
        from waitress.channel import HTTPChannel

        server = self._server
        poll = wasyncore.poll2 if server.adj.asyncore_use_poll else wasyncore.poll
        while server._map and not self._stopping.is_set():
            poll(server.adj.asyncore_loop_timeout, server._map)
        for dispatcher in list(server._map.values()):
            if isinstance(dispatcher, HTTPChannel):
                dispatcher.handle_close()  # also wakes a worker waiting to write
            elif dispatcher is server:  # the listening socket (server.close() would
                wasyncore.dispatcher.close(server)  # also close the trigger: not yet)

    def close(self) -> None:
        """Stop accepting, end open streams (cancelling their turns), join every thread.

        In that order, so that no worker thread still finishing a stream
        touches the event loop's trigger after it was closed: the event loop
        stops and closes the listening socket and every connection, the
        workers then end their streams and exit, and only then are the
        trigger and what is left closed.
        """
        if self._closed:
            return
        self._closed = True
        from waitress import wasyncore

        server = self._server
        if self._thread is not None:
            self._stopping.set()
            with contextlib.suppress(OSError):  # the loop sees the flag at its next tick anyway
                server.trigger.pull_trigger()
            self._thread.join(_JOIN_SECONDS)
        server.task_dispatcher.shutdown(timeout=_JOIN_SECONDS)
        wasyncore.close_all(server._map)
