"""Handoff: a POST's status outcome, passed from its reader thread to the sender.

Streamable HTTP reads a request's answer on a thread of its own
(:mod:`.http`). The sender waits a short grace for the server's status so it
can raise at once what is known at once (a refused request, a stale session);
after that it stops listening and any later failure reaches the waiter as an
error answer instead. :class:`Handoff` makes "reported in time" and "sender
moved on" exclusive.
"""

from __future__ import annotations

import threading


class Handoff:
    """Passes a POST's status outcome from its thread to send(), unless send() moved on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = threading.Event()
        self._error: Exception | None = None
        self._abandoned = False

    def report(self, error: Exception | None) -> bool:
        """Record the outcome; False when send() no longer listens (or already heard)."""
        with self._lock:
            if self._abandoned or self.done.is_set():
                return False
            self._error = error
            self.done.set()
            return True

    def abandon(self) -> Exception | None:
        """send() stops listening; the error it must raise, if one came in time."""
        with self._lock:
            self._abandoned = True
            return self._error
