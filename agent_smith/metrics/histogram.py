"""A fixed-bucket histogram: constant memory, one ``bisect`` per observation.

Plain state: the collector counts a value into it under its own lock
(``counts[bisect_left(bounds, value)] += 1`` and ``sum``).
"""

from __future__ import annotations

from typing import Any


class Histogram:
    """Counts of observations per bucket (``bounds`` are the buckets' upper bounds, inclusive),
    the last bucket holding everything above; their sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def data(self) -> dict[str, Any]:
        """Plain data: ``bounds``, ``counts`` (one more than bounds), ``sum``, ``count``."""
        return {
            "bounds": list(self.bounds),
            "counts": list(self.counts),
            "sum": self.sum,
            "count": sum(self.counts),
        }
