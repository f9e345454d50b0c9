"""A fixed-bucket histogram: constant memory, one ``bisect`` per observation.

Not locked by itself: the collector records under its own lock.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any


class Histogram:
    """Counts of observations per bucket (``bounds`` are the buckets' upper bounds, inclusive),
    the last bucket holding everything above; their sum and count."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def data(self) -> dict[str, Any]:
        """Plain data: ``bounds``, ``counts`` (one more than bounds), ``sum``, ``count``."""
        return {
            "bounds": list(self.bounds),
            "counts": list(self.counts),
            "sum": self.sum,
            "count": self.count,
        }
