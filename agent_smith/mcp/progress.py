"""Progress callbacks for calls in flight: ``notifications/progress`` routed by its token."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: Called with ``(progress, total, message)``; ``total`` and ``message`` may be None.
ProgressCallback = Callable[[float, float | None, str | None], None]


class ProgressRoutes:
    """Which callback hears the progress of which token (thread-safe)."""

    def __init__(self, alias: str) -> None:
        self._alias = alias
        self._lock = threading.Lock()
        self._routes: dict[str | int, ProgressCallback] = {}
        self._tokens = itertools.count(1)

    def add(self, callback: ProgressCallback, token: str | int | None = None) -> str | int:
        """Route progress of ``token`` (a new one when None) to ``callback``; the token."""
        if token is None:
            token = f"{self._alias}-progress-{next(self._tokens)}"
        with self._lock:
            self._routes[token] = callback
        return token

    def remove(self, token: str | int) -> None:
        with self._lock:
            self._routes.pop(token, None)

    def deliver(self, params: dict[str, Any]) -> Callable[[], None] | None:
        """The job that tells a progress notification's callback (None if nobody listens)."""
        token = params.get("progressToken")
        if not isinstance(token, (str, int)) or isinstance(token, bool):
            return None
        with self._lock:
            callback = self._routes.get(token)
        if callback is None:
            return None
        progress = params.get("progress")
        total = params.get("total")
        message = params.get("message")

        def job() -> None:
            try:
                callback(
                    float(progress) if isinstance(progress, (int, float)) else 0.0,
                    float(total) if isinstance(total, (int, float)) else None,
                    message if isinstance(message, str) else None,
                )
            except Exception:  # a user's callback must not stop the event thread
                log.exception("progress callback for MCP server %s failed", self._alias)

        return job
