"""Thread-safe cancellation: a source that cancels, tokens that observe.

A :class:`CancellationSource` may be linked to parent tokens so that
cancelling an agent reaches every tool call and sub-agent below it. Tokens can
be polled (``token.cancelled``), waited on (``token.wait(timeout)``) or given a
callback (``token.on_cancel(fn)``) that runs once, in the cancelling thread.

A source is made for every tool call, so it is kept cheap: the state lives in
the token (the source only refers to it, so the pair is no reference cycle
for the garbage collector to find), and the ``threading.Event`` that waiting
needs is created only when someone waits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..errors import CancelledError

log = logging.getLogger(__name__)

Callback = Callable[[], None]


class CancellationToken:
    """Read-only view of a :class:`CancellationSource` (made by it; it keeps the state here)."""

    __slots__ = ("_callbacks", "_cancelled", "_event", "_lock", "_next_key")

    def __init__(self) -> None:
        self._cancelled = False
        self._event: threading.Event | None = None  # made by the first wait
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callback] = {}
        self._next_key = 0

    @property
    def cancelled(self) -> bool:
        """True once the source was cancelled."""
        return self._cancelled

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; return ``cancelled``."""
        with self._lock:
            if self._event is None:
                self._event = threading.Event()
                if self._cancelled:
                    self._event.set()
            event = self._event
        return event.wait(timeout)

    def raise_if_cancelled(self, operation: str) -> None:
        """Raise :class:`CancelledError` naming ``operation`` if cancelled."""
        if self._cancelled:
            raise CancelledError(f"{operation} was cancelled", operation=operation)

    def on_cancel(self, callback: Callback) -> Callback:
        """Run ``callback`` once on cancellation (now, if already cancelled).

        Returns a function that unregisters the callback.
        """
        with self._lock:
            if not self._cancelled:
                key = self._next_key
                self._next_key += 1
                self._callbacks[key] = callback

                def remove() -> None:
                    with self._lock:
                        self._callbacks.pop(key, None)

                return remove
        callback()
        return _noop

    def _cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            if self._event is not None:
                self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a broken observer must not stop the others
                log.exception("cancellation callback failed")


class CancellationSource:
    """Owner side of a cancellation signal, optionally linked to parent tokens."""

    __slots__ = ("_unlink", "token")

    def __init__(self, *parents: CancellationToken) -> None:
        self.token = CancellationToken()
        self._unlink = [parent.on_cancel(self.token._cancel) for parent in parents]

    @property
    def cancelled(self) -> bool:
        """True once cancelled (here or through a parent)."""
        return self.token._cancelled

    def cancel(self) -> None:
        """Cancel; idempotent and safe from any thread."""
        self.token._cancel()

    def detach(self) -> None:
        """Unlink from the parent tokens (call when this source is done)."""
        for unlink in self._unlink:
            unlink()
        self._unlink = []


def _noop() -> None:
    return None
