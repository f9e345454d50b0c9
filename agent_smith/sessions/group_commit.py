"""Group commit: the appends that arrive while one is being written go in the next transaction.

An event log's appends are small and many (a frame each, from every turn
streaming at once), and each would otherwise be a write transaction of its own
on a store with one writer at a time. :class:`GroupCommit` queues them: the
first appender that finds no write going on becomes the *leader*, takes every
append queued so far and writes them in one transaction; the appenders that
arrive meanwhile wait for it to finish, and the first of them leads the next
batch. No thread of its own: the appenders take turns.

Each appender gets what its own append would have given: whether its stream
still runs (not cancelled), or the error of the batch's transaction (every
appender of a failed batch raises that same exception, as the waiters of a
failed ``concurrent.futures.Future`` do; the whole batch was rolled back, so
each may try again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: One stored event: (stream, sequence number, data).
Row = tuple[str, int, str]
#: Writes ``rows`` in one transaction; returns which of ``streams`` exist and are not cancelled.
WriteBatch = Callable[[Sequence[Row], Sequence[str]], set[str]]


@dataclass
class _Append:
    stream: str
    rows: list[Row]
    done: bool = False
    running: bool = False
    error: BaseException | None = None


class GroupCommit:
    """Appends queued while one batch is written, written together in the next (module doc)."""

    def __init__(self, write: WriteBatch, wake: Callable[[str], None]) -> None:
        self._write = write
        self._wake = wake
        self._changed = threading.Condition()
        self._queue: list[_Append] = []
        self._writing = False

    def append(self, stream: str, rows: list[Row]) -> bool:
        """Store ``rows`` of ``stream`` with everyone else's queued rows; False if cancelled."""
        mine = _Append(stream, rows)
        with self._changed:
            self._queue.append(mine)
            self._changed.wait_for(lambda: mine.done or not self._writing)
            if not mine.done:
                self._writing = True
                batch, self._queue = self._queue, []
        if not mine.done:
            self._lead(batch)
        if mine.error is not None:
            raise mine.error
        return mine.running

    def _lead(self, batch: list[_Append]) -> None:
        """Write ``batch`` in one transaction, then hand each appender its outcome."""
        streams = list(dict.fromkeys(item.stream for item in batch))
        error: BaseException | None = None
        running: set[str] = set()
        try:
            running = self._write([row for item in batch for row in item.rows], streams)
        except BaseException as err:  # each appender of the batch raises it
            error = err
        with self._changed:
            for item in batch:
                item.done, item.error, item.running = True, error, item.stream in running
            self._writing = False
            self._changed.notify_all()
        if error is None:
            for stream in streams:
                self._wake(stream)
