"""Time spent waiting for a person, left out of the timeouts of the call that waits.

A tool call may have to wait for a person: a sub-agent's call waits for the
root agent's approver, an MCP server asks the user to visit a page
(URL-mode elicitation) in the middle of a ``tools/call``. That wait is not
the tool's work: the tool's timeout and the MCP request's timeout stop
counting while a person is asked, and the wait has a deadline of its own
instead (``AgentConfig.person_timeout`` for a tool call; an MCP server's
``handler_timeout`` bounds its handlers).

Each running tool call has a :class:`WaitClock`, made current in the worker
that runs it (a call made inside it, such as a sub-agent's, gets a clock
whose holds reach its parent's). Code that asks a person wraps the wait in
:func:`waiting_for_person`, which holds the current clock; a clock may also
pass its holds on to clocks that follow it for a while (an MCP client's
clock to the calls it has in flight, :meth:`WaitClock.followed_by`). The
timers read :meth:`WaitClock.held` (seconds held so far) and
:meth:`WaitClock.holding_since`, and hear of each release through
:meth:`WaitClock.listen`, so they look again when the person has answered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

#: How long a tool call may wait for a person before it is given up (seconds).
DEFAULT_PERSON_TIMEOUT = 600.0

T = TypeVar("T")
_current: ContextVar[WaitClock | None] = ContextVar("agent_smith_wait_clock", default=None)


#: Holds are rare (a person is asked): one lock serves every clock, so a clock costs no lock.
_LOCK = threading.Lock()


class WaitClock:
    """How long a call has been waiting for a person (see the module doc). Thread-safe.

    A clock that is never held costs a few attributes: every tool call has one.
    """

    __slots__ = ("_followers", "_held", "_holds", "_listeners", "_parent", "_since")

    def __init__(self, parent: WaitClock | None = None) -> None:
        self._parent = parent
        self._holds = 0
        self._since: float | None = None  # when the current hold began
        self._held = 0.0  # seconds of holds that ended
        self._followers: dict[WaitClock, int] | None = None  # holds passed on, not released
        self._listeners: list[Callable[[], None]] | None = None

    def hold(self) -> None:
        """Stop the clock until the matching :meth:`release` (holds nest)."""
        with _LOCK:
            self._holds += 1
            if self._holds == 1:
                self._since = time.monotonic()
            owed = self._followers or {}
            followers = list(owed)
            for follower in followers:
                owed[follower] += 1
        for follower in followers:
            follower.hold()
        if self._parent is not None:
            self._parent.hold()

    def release(self) -> None:
        """End one hold; the last one starts the clock again and tells the listeners."""
        listeners: list[Callable[[], None]] = []
        with _LOCK:
            self._holds -= 1
            since = self._since
            if self._holds == 0 and since is not None:
                self._held += time.monotonic() - since
                self._since = None
                listeners = list(self._listeners or ())
            owed = self._followers or {}
            followers = [f for f, count in owed.items() if count > 0]
            for follower in followers:
                owed[follower] -= 1
        for follower in followers:
            follower.release()
        if self._parent is not None:
            self._parent.release()
        for listener in listeners:
            listener()

    def held(self) -> float:
        """Seconds this clock has been held so far, the current hold included."""
        if self._since is None and not self._held:
            return 0.0  # never held: the common case, no lock
        with _LOCK:
            since = self._since
            return self._held + (time.monotonic() - since if since is not None else 0.0)

    def holding_since(self) -> float | None:
        """When the current hold began (``time.monotonic()``), or None when not held."""
        return self._since

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after each hold ends; returns what stops that."""
        with _LOCK:
            if self._listeners is None:
                self._listeners = []
            self._listeners.append(listener)

        def stop() -> None:
            with _LOCK:
                if self._listeners is not None and listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    @contextmanager
    def followed_by(self, follower: WaitClock | None) -> Iterator[None]:
        """While the block runs, each hold of this clock holds ``follower`` too."""
        if follower is None or follower is self:
            yield
            return
        with _LOCK:
            if self._followers is None:
                self._followers = {}
            self._followers[follower] = 0
        try:
            yield
        finally:
            with _LOCK:
                owed = self._followers.pop(follower, 0)
            for _ in range(owed):
                follower.release()

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` with this the clock :func:`waiting_for_person` holds in this thread."""
        token = _current.set(self)
        try:
            return work()
        finally:
            _current.reset(token)


def current_clock() -> WaitClock | None:
    """The clock of the call running in this thread, or None outside one."""
    return _current.get()


@contextmanager
def waiting_for_person(clock: WaitClock | None = None) -> Iterator[None]:
    """Hold ``clock`` (default: this thread's current one) while the block waits for a person."""
    clock = clock if clock is not None else _current.get()
    if clock is None:
        yield
        return
    clock.hold()
    try:
        yield
    finally:
        clock.release()
