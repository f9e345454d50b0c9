"""Thread-safe cancellation: a source that cancels, tokens that observe.

A :class:`CancellationSource` may be linked to parent tokens so that
cancelling an agent reaches every tool call and sub-agent below it. Tokens can
be polled (``token.cancelled``), waited on (``token.wait(timeout)``) or given a
callback (``token.on_cancel(fn)``) that runs once, in the cancelling thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from .errors import CancelledError

log = logging.getLogger(__name__)

Callback = Callable[[], None]


class CancellationToken:
    """Read-only view of a :class:`CancellationSource`."""

    __slots__ = ("_source",)

    def __init__(self, source: CancellationSource) -> None:
        self._source = source

    @property
    def cancelled(self) -> bool:
        """True once the source was cancelled."""
        return self._source._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; return ``cancelled``."""
        return self._source._event.wait(timeout)

    def raise_if_cancelled(self, operation: str) -> None:
        """Raise :class:`CancelledError` naming ``operation`` if cancelled."""
        if self.cancelled:
            raise CancelledError(f"{operation} was cancelled", operation=operation)

    def on_cancel(self, callback: Callback) -> Callback:
        """Run ``callback`` once on cancellation (now, if already cancelled).

        Returns a function that unregisters the callback.
        """
        return self._source._add_callback(callback)


class CancellationSource:
    """Owner side of a cancellation signal, optionally linked to parent tokens."""

    def __init__(self, *parents: CancellationToken) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callback] = {}
        self._next_key = 0
        self.token = CancellationToken(self)
        self._unlink = [parent.on_cancel(self.cancel) for parent in parents]

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel; idempotent and safe from any thread."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a broken observer must not stop the others
                log.exception("cancellation callback failed")

    def detach(self) -> None:
        """Unlink from the parent tokens (call when this source is done)."""
        for unlink in self._unlink:
            unlink()
        self._unlink = []

    def _add_callback(self, callback: Callback) -> Callback:
        with self._lock:
            if not self._event.is_set():
                key = self._next_key
                self._next_key += 1
                self._callbacks[key] = callback

                def remove() -> None:
                    with self._lock:
                        self._callbacks.pop(key, None)

                return remove
        callback()
        return _noop


def _noop() -> None:
    return None
