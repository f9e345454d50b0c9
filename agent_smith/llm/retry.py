"""The HTTP retry policy for LLM requests (seed §6.3).

Retried: connect failures (including a kept-alive connection the server
closed before any byte of the reply), timeouts, HTTP 5xx and 429. Never
retried: any other 4xx, and a streamed reply once a byte of its body arrived.
The delay before retry ``n`` (1-based) is ``base * 2**(n-1) + uniform(0,
jitter)``, capped at ``cap``; a 429's ``Retry-After`` (seconds or an HTTP
date) replaces it, capped the same way. ``sleep``, ``clock`` and ``random``
are injectable so tests never wait.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed LLM request.

    ``sleep`` (seconds -> None) replaces the default wait, which is
    interruptible by cancellation; ``clock`` returns epoch seconds (used to
    read an HTTP-date ``Retry-After``); ``random`` returns a float in [0, 1).
    """

    max_retries: int = 3
    base: float = 0.5
    jitter: float = 0.25
    cap: float = 8.0
    sleep: Callable[[float], None] | None = field(default=None, compare=False)
    clock: Callable[[], float] = field(default=time.time, compare=False)
    random: Callable[[], float] = field(default=_random.random, compare=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")

    def backoff(self, attempt: int) -> float:
        """Delay in seconds before retry number ``attempt`` (1 for the first retry)."""
        delay = self.base * float(2 ** max(attempt - 1, 0)) + self.random() * self.jitter
        return min(delay, self.cap)

    def retry_after(self, header: str | None) -> float | None:
        """Seconds to wait from a ``Retry-After`` header (capped), or None if absent/invalid."""
        if header is None:
            return None
        text = header.strip()
        if not text:
            return None
        try:
            seconds = float(text)
        except ValueError:
            try:
                when = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return None
            if when.tzinfo is None:  # "-0000" parses naive; HTTP dates are GMT
                when = when.replace(tzinfo=timezone.utc)
            seconds = when.timestamp() - self.clock()
        if seconds != seconds:  # NaN
            return None
        return min(max(seconds, 0.0), self.cap)

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """The wait before retry ``attempt``: ``Retry-After`` if usable, else backoff."""
        hinted = self.retry_after(retry_after)
        return self.backoff(attempt) if hinted is None else hinted
