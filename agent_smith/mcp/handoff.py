"""Handoff: a POST's status outcome, passed from its reader thread to the sender.

Streamable HTTP reads a request's answer on a thread of its own
(:mod:`.http`). The sender waits a short grace for the server's status so it
can raise at once what is known at once (a refused request, a stale session);
after that it stops listening and any later failure reaches the waiter as an
error answer instead. :class:`Handoff` makes "reported in time" and "sender
moved on" exclusive.

While the request is being authorized (a 401 or 403 is being answered, maybe
by a user in a browser) the sender waits on past its grace, up to
:data:`AUTHORIZE_WAIT`: the call's own timeout starts once the request is
really with the server, and an authorization failure is raised to the caller
as the typed error it is.
"""

from __future__ import annotations

import threading
import time

#: How long a sender waits for a request being authorized (beyond any consent timeout).
AUTHORIZE_WAIT = 600.0


class Handoff:
    """Passes a POST's status outcome from its thread to send(), unless send() moved on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reported = False
        self._error: Exception | None = None
        self._abandoned = False
        self._authorizing = False
        self._since = time.monotonic()  # when the current wait began

    def authorizing(self, active: bool) -> None:
        """The request is (``active``) or is no longer being authorized.

        While it is, the sender waits past its grace; afterwards its grace
        starts again for the request sent anew.
        """
        with self._cond:
            self._authorizing = active
            self._since = time.monotonic()
            self._cond.notify_all()

    def report(self, error: Exception | None) -> bool:
        """Record the outcome; False when send() no longer listens (or already heard)."""
        with self._cond:
            if self._abandoned or self._reported:
                return False
            self._error = error
            self._reported = True
            self._cond.notify_all()
            return True

    def wait(self, grace: float) -> Exception | None:
        """Wait for the outcome (``grace`` seconds, longer while authorizing), then stop listening.

        Returns the error send() must raise, if one came in time.
        """
        with self._cond:
            self._since = time.monotonic()
            while not self._reported:
                limit = AUTHORIZE_WAIT if self._authorizing else grace
                left = self._since + limit - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self._abandoned = True
            return self._error
