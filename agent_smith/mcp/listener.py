"""The Streamable HTTP GET listening stream: server messages between calls.

After ``initialized`` a thread (``agent_smith-mcp-listen-<alias>``) holds the
optional GET stream open so server requests and ``list_changed``
notifications reach the client while no POST is being read. A server that
does not offer one (405, or any other refusal) is left alone; a dropped
stream is resumed with ``Last-Event-ID`` after the server's ``retry`` delay,
and given up after :data:`~agent_smith.mcp.sse_streams.MAX_RESUMES` tries in a row
that brought nothing.

:meth:`GetStreamListener.start` returns once the server answered the first
GET (or after :data:`READY_WAIT`), so the stream is open before the client's
first request: a server that sends something there right after
``initialized`` (a ``list_changed``, or the replay of an answer) reaches a
reader, and the stream the client opens to resume a dropped POST answer is
never mistaken for the listening one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import requests

from ..errors import TransportError
from .sse_streams import MAX_RESUMES, StreamPosition, wake_reader

log = logging.getLogger(__name__)

_JOIN_TIMEOUT = 10.0
#: How long start() waits for the server to answer the first GET (a server
#: that holds its headers back only delays connecting by this much).
READY_WAIT = 3.0

#: Opens the GET stream (resuming after the given event id); None if not offered.
OpenStream = Callable[[str | None], requests.Response | None]
#: Reads one opened stream to its end, updating the position.
ReadStream = Callable[[requests.Response, StreamPosition], object]


class GetStreamListener:
    """Holds the GET listening stream of server ``server`` open on its own thread."""

    def __init__(self, server: str, *, open_stream: OpenStream, read_stream: ReadStream) -> None:
        self.server = server
        self._open_stream = open_stream
        self._read_stream = read_stream
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._response: requests.Response | None = None

    def start(self) -> None:
        """Start listening (stopping a previous listener first); return once the GET was answered.

        Waits at most :data:`READY_WAIT` for the server's answer (a stream,
        a refusal or a failure); the thread carries on either way.
        """
        self.stop()
        self._stop = threading.Event()
        answered = threading.Event()
        thread = threading.Thread(
            target=self._listen,
            args=(self._stop, answered),
            name=f"agent_smith-mcp-listen-{self.server}",
            daemon=True,  # joined in stop(); daemon only so a forgotten client cannot hang exit
        )
        self._thread = thread
        thread.start()
        if not answered.wait(READY_WAIT):
            log.debug("GET stream of %s not answered yet; connecting on", self.server)

    def stop(self) -> None:
        """Wake the thread if it is reading, and join it."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            wake_reader(response)
        thread.join(_JOIN_TIMEOUT)
        if thread.is_alive():
            log.warning("GET stream thread of %s did not stop", self.server)
        self._thread = None

    def _listen(self, stop: threading.Event, answered: threading.Event) -> None:
        try:
            self._listen_until(stop, answered)
        finally:
            answered.set()

    def _listen_until(self, stop: threading.Event, answered: threading.Event) -> None:
        position = StreamPosition()
        failures = 0
        while not stop.is_set():
            try:
                response = self._open_stream(position.last_event_id)
            except TransportError as err:
                answered.set()
                response = None
                failures += 1
                log.debug("GET stream of %s failed: %s", self.server, err)
                if failures >= MAX_RESUMES:
                    log.warning("GET stream of %s: giving up after %d tries", self.server, failures)
                    return
            else:
                answered.set()
                if response is None:
                    return  # not offered
                with self._lock:
                    self._response = response
                before = position.last_event_id
                try:
                    if not stop.is_set():  # stop was set before we registered: do not block
                        self._read_stream(response, position)
                finally:
                    with self._lock:
                        self._response = None
                    response.close()
                failures = 0 if position.last_event_id != before else failures + 1
                if failures >= MAX_RESUMES:
                    log.warning("GET stream of %s keeps ending without events", self.server)
                    return
            if stop.wait(position.retry):
                return
            log.debug("resuming GET stream of %s after %s", self.server, position.last_event_id)
