"""Bounded label values: past a bound, a new value folds into ``"other"``.

Tool, model and agent names come from the application and from models (a
model may call a tool of any name it likes), so the set of series is capped
per label: the first :data:`DEFAULT_BOUND` distinct values are kept as they
are (cut to :data:`MAX_LENGTH` characters), every later one is counted as
``"other"``. What a collector holds is then fixed by its bound, whatever the
traffic.
"""

from __future__ import annotations

import threading

DEFAULT_BOUND = 64
MAX_LENGTH = 120
OTHER = "other"
UNKNOWN = "unknown"


class LabelValues:
    """The values one label has taken, at most ``bound`` of them (thread-safe)."""

    __slots__ = ("_bound", "_kept", "_lock")

    def __init__(self, bound: int = DEFAULT_BOUND) -> None:
        self._bound = bound
        self._kept: dict[str, str] = {}
        self._lock = threading.Lock()

    def fold(self, value: str) -> str:
        """``value`` as a label: itself once kept, else ``"other"`` past the bound."""
        value = value[:MAX_LENGTH]  # the same object when short enough
        kept = self._kept.get(value)  # the common case: one dictionary lookup, no lock
        if kept is not None:
            return kept
        with self._lock:
            if value in self._kept:
                return self._kept[value]
            if len(self._kept) >= self._bound:
                return OTHER
            # Shown as valid UTF-8 (an exporter writes it as such), never empty.
            shown = value.encode("utf-8", "backslashreplace").decode("utf-8") or UNKNOWN
            self._kept[value] = shown
            return shown

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
