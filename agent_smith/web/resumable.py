"""Resumable streams: a web turn runs apart from its request and writes its frames to a log.

With ``WebApp(streams=log)`` (an :class:`~agent_smith.sessions.event_log.EventLog`)
a turn no longer lives in the response that asked for it. :class:`TurnRelay`
runs it on a thread of its own, writing every protocol frame it produces to
the turn's stream in the log, numbered 1, 2, 3, ...; every response — the one
to the request that started the turn and any reconnect, on any worker or any
host sharing the log — *follows* that stream: it sends the frames after the
last one its client saw, then the rest as they are written.

Each frame goes out as a server-sent event with ``id: <turn>:<n>``, so a
client that lost its connection says where it stopped with the standard
``Last-Event-ID`` header. A client that went away no longer cancels the turn
(it may come back); ``DELETE`` on the stream does (:meth:`TurnRelay.cancel`),
from any worker: the turn's writer reads the request with its next append.

Streams are keyed by the caller's scoped conversation id (user and
conversation, see :mod:`.app`) and the turn, so a user can only ever name
their own: another user's (or a made-up) stream id finds nothing.

A worker that dies mid-turn takes its turn with it; a reader of that stream
notices (the writer's process is gone) and ends with the protocol's error
frame, saying so, instead of waiting forever.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack

from ..errors import AgentSmithError, ParseError, StreamLostError
from ..sessions.event_log import EventLog
from ..sessions.lease import new_holder
from .stream import FrameMapper, TurnFailed, WebEvent

log = logging.getLogger(__name__)

#: Closed streams older than this (seconds) are pruned as new ones open.
KEEP_SECONDS = 3600.0
_PRUNE_EVERY = 100  # streams opened between two prunes
_TURN_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_threads = itertools.count(1)


def stream_key(conversation: str, turn: str) -> str:
    """The log's name of ``turn``'s stream in the scoped ``conversation``."""
    return f"{conversation}#{turn}"


def turn_id(value: str) -> str:
    """``value`` if it can name a turn's stream; ParseError otherwise."""
    if not _TURN_ID.fullmatch(value):
        raise ParseError(f"turn id {value[:40]!r} must be 1-128 letters, digits or ._- characters")
    return value


def last_event(header: str | None) -> tuple[str, int] | None:
    """The turn and event number of a ``Last-Event-ID`` header (``<turn>:<n>``), if any."""
    if not header:
        return None
    turn, sep, number = header.strip().rpartition(":")
    if not sep or not number.isdigit():
        raise ParseError(f"Last-Event-ID {header[:60]!r} is not <turn>:<number>")
    return turn_id(turn), int(number)


class TurnRelay:
    """Runs web turns on threads of their own and serves their streams (see the module doc).

    ``close()`` stops the turns still running (cancelling them) and joins
    their threads.
    """

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._lock = threading.Lock()
        self._running: dict[str, _Run] = {}
        self._opened = 0
        self._closed = False

    def start(
        self,
        *,
        conversation: str,
        turn: str,
        mapper: FrameMapper,
        events: Generator[WebEvent, None, None],
        resources: ExitStack,
    ) -> str:
        """Run the turn whose ``events`` map to frames by ``mapper``; the stream's key.

        ``resources`` (the session and the agent) are closed when the turn ends.
        """
        key = stream_key(conversation, turn)
        run = _Run(self, key, mapper, events, resources)
        try:
            with self._lock:
                if self._closed:
                    raise AgentSmithError("the web app is closed")
                self._opened += 1
                prune = self._opened % _PRUNE_EVERY == 0
            self.log.open_stream(key, conversation=conversation, writer=run.writer)
        except BaseException:
            run.abandon()
            raise
        with self._lock:
            self._running[key] = run
        run.thread.start()
        if prune:
            self._prune()
        return key

    def follow(
        self,
        key: str,
        after: int,
        *,
        lost: FrameMapper,
        disconnected: Callable[[], bool] | None = None,
    ) -> Iterator[bytes]:
        """The frames of stream ``key`` after number ``after``, as SSE events with ids.

        If the stream's writer died, the stream ends with ``lost``'s frames for
        the failure (the protocol's error), then its closing frames.
        """
        turn = key.rpartition("#")[2]
        # A comment first: the server sends the headers with it, so the client knows at
        # once that it reconnected, even while the turn is quiet (a long tool call).
        yield f": {turn} after {after}\n\n".encode()
        try:
            for seq, data in self.log.follow(key, after):
                if disconnected is not None and disconnected():
                    return
                yield f"id: {turn}:{seq}\n{data}".encode()
        except StreamLostError as err:
            log.warning("web stream %s lost: %s", key, err)
            failure = TurnFailed(
                "the worker running this turn stopped before the end; send the message again",
                "StreamLostError",
            )
            yield b"".join([*lost.event(failure), *lost.end()])

    def cancel(self, key: str) -> None:
        """Ask stream ``key``'s turn to stop, wherever it runs."""
        self.log.cancel(key)
        with self._lock:
            run = self._running.get(key)
        if run is not None:
            run.stop.set()

    def close(self) -> None:
        """Cancel the turns still running here and join their threads."""
        with self._lock:
            self._closed = True
            runs = list(self._running.values())
        for run in runs:
            run.stop.set()
        for run in runs:
            run.thread.join()

    def _finished(self, key: str) -> None:
        with self._lock:
            self._running.pop(key, None)

    def _prune(self) -> None:
        try:
            self.log.prune(KEEP_SECONDS)
        except AgentSmithError as err:
            log.warning("pruning old web streams failed: %s", err)


class _Run:
    """One turn on its thread: its frames appended to its stream until it ends or is cancelled."""

    def __init__(
        self,
        relay: TurnRelay,
        key: str,
        mapper: FrameMapper,
        events: Generator[WebEvent, None, None],
        resources: ExitStack,
    ) -> None:
        self.relay, self.key = relay, key
        self.mapper, self.events, self.resources = mapper, events, resources
        self.writer = new_holder()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"agent_smith-web-turn-{next(_threads)}"
        )

    def abandon(self) -> None:
        """The turn never started: close what it holds."""
        try:
            self.events.close()
        finally:
            self.resources.close()

    def _run(self) -> None:
        log_ = self.relay.log
        mapper = self.mapper
        seq = 1
        try:
            seq = self._append(seq, mapper.begin())
            for event in self.events:
                if self.stop.is_set() or seq < 0:
                    log.info("web turn %s cancelled", self.key)
                    self.events.close()  # cancels the turn
                    stopped = TurnFailed("the turn was cancelled", "CancelledError")
                    frames = [*mapper.event(stopped), *mapper.end()]
                    self._append(abs(seq), frames)
                    break
                seq = self._append(seq, mapper.event(event))
            else:
                self._append(seq, mapper.end())
        except AgentSmithError as err:  # the log failed: the turn cannot be followed
            log.warning("web turn %s: writing its stream failed: %s", self.key, err)
        finally:
            try:
                self.abandon()  # cancels the turn if it still runs
            finally:
                try:
                    log_.outlast(f"close {self.key}", lambda: log_.close_stream(self.key))
                except AgentSmithError as err:
                    log.warning("web turn %s: closing its stream failed: %s", self.key, err)
                self.relay._finished(self.key)

    def _append(self, seq: int, frames: list[bytes]) -> int:
        """Write ``frames`` from number ``seq``; the next number, negated once cancelled."""
        if not frames or seq < 0:
            return seq
        data = [f.decode() for f in frames]
        log_ = self.relay.log
        going_on = log_.outlast(f"append to {self.key}", lambda: log_.append(self.key, seq, data))
        return seq + len(frames) if going_on else -(seq + len(frames))
