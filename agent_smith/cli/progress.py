"""The batch command's progress display: done, failed, rate and ETA.

On a terminal one status line is redrawn in place (``\\r``) after every
result; elsewhere (a log file, CI) a plain line is printed at most every
``interval`` seconds, so a long batch leaves a readable log rather than one
line per input. Failed inputs are always named on a line of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from ..batch.result import BatchResult

BAR_WIDTH = 24


class Progress:
    """Counts results and shows how far a batch of ``total`` inputs has got."""

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO,
        tty: bool,
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self._stream = stream
        self._tty = tty
        self._interval = interval
        self._clock = clock
        self._started = clock()
        self._last_line = self._started
        self._drawn = False

    def add(self, result: BatchResult) -> None:
        """Count one result; show a failure at once, the status line when due."""
        self.done += 1
        if not result.ok:
            self.failed += 1
            self._clear()
            self._stream.write(f"[failed] {result.id}: {result.error}\n")
        now = self._clock()
        if self._tty:
            self._draw()
        elif now - self._last_line >= self._interval:
            self._last_line = now
            self._stream.write(f"{self.status()}\n")
        self._stream.flush()

    def finish(self) -> None:
        """Leave the final status line in place (and end the redrawn line)."""
        if self._tty:
            self._draw()
            self._stream.write("\n")
        else:
            self._stream.write(f"{self.status()}\n")
        self._drawn = False
        self._stream.flush()

    def status(self) -> str:
        """``120/500 done, 3 failed, 12.3/s, ETA 0:31`` (a rate under 1/s is per minute)."""
        elapsed = max(self._clock() - self._started, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = _clock_time(left / rate) if rate > 0 else "?"
        speed = f"{rate:.1f}/s" if rate >= 1 else f"{rate * 60:.1f}/min"
        return (
            f"{self.done}/{self.total} done, {self.failed} failed, {speed}, "
            f"ETA {eta if left else '0:00'}"
        )

    def _draw(self) -> None:
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self._stream.write(f"\r\x1b[K[{bar}] {self.status()}")
        self._drawn = True

    def _clear(self) -> None:
        if self._drawn:
            self._stream.write("\r\x1b[K")
            self._drawn = False


def _clock_time(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
