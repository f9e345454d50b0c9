"""Each turn as a timeline: its model requests, tool calls, sub-agents and approvals as bars.

A top-level turn gets a :class:`TurnTimeline`; what runs in it — a sub-agent's
turn and everything that does included — adds bars to it, at the depth it
runs at, with its start and duration in seconds from the turn's start. The
collector keeps the last ``turns`` timelines, each with at most ``bars``
bars (later ones are counted as dropped): a bounded record whatever runs.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import Any

_ids = itertools.count(1)


class TurnTimeline:
    """One top-level turn's bars; ``bars`` bounds how many it keeps."""

    __slots__ = (
        "_bars",
        "_limit",
        "_lock",
        "agent",
        "dropped",
        "ended",
        "facts",
        "id",
        "started_at",
        "wall",
    )

    def __init__(self, agent: str, bars: int) -> None:
        self.id = next(_ids)
        self.agent = agent
        self.wall = time.time()
        self.started_at = time.perf_counter()
        self.ended: float | None = None
        self.facts: dict[str, Any] = {}
        self.dropped = 0
        self._limit = bars
        self._bars: list[tuple[str, str, float, float, int, dict[str, Any] | None]] = []
        self._lock = threading.Lock()

    def add(
        self,
        kind: str,
        name: str,
        started: float,
        ended: float,
        depth: int,
        facts: dict[str, Any] | None = None,
    ) -> None:
        """A bar of ``kind`` (model, tool, agent, approval) from ``started`` to ``ended``
        (``perf_counter`` times); ``facts``: tokens, cost, error... as plain data."""
        with self._lock:
            if len(self._bars) < self._limit:
                self._bars.append((kind, name, started, ended, depth, facts))
            else:
                self.dropped += 1

    def end(self, **facts: Any) -> None:
        """The turn ended; ``facts``: its outcome, tokens and cost."""
        self.facts = facts
        self.ended = time.perf_counter()

    def data(self) -> dict[str, Any]:
        """Plain data: the turn's id, agent, start (epoch seconds), duration, outcome and bars."""
        with self._lock:
            kept = sorted(self._bars, key=lambda bar: bar[2])
            dropped = self.dropped
        bars = [
            {
                "kind": kind,
                "name": name,
                "start": started - self.started_at,
                "duration": ended - started,
                "depth": depth,
                **(facts or {}),
            }
            for kind, name, started, ended, depth, facts in kept
        ]
        end = self.ended if self.ended is not None else time.perf_counter()
        return {
            "id": self.id,
            "agent": self.agent,
            "started": self.wall,
            "duration": end - self.started_at,
            "outcome": self.facts.get("outcome", "running"),
            **self.facts,
            "bars": bars,
            "dropped": dropped,
        }


class Timelines:
    """The last ``turns`` top-level turns' timelines, each of at most ``bars`` bars."""

    __slots__ = ("_bars", "_kept")

    def __init__(self, turns: int, bars: int) -> None:
        self._kept: deque[TurnTimeline] = deque(maxlen=turns)
        self._bars = bars

    def start(self, agent: str) -> TurnTimeline:
        timeline = TurnTimeline(agent, self._bars)
        self._kept.append(timeline)  # deque appends are atomic; the oldest falls off
        return timeline

    def data(self) -> list[dict[str, Any]]:
        return [timeline.data() for timeline in list(self._kept)]

    def clear(self) -> None:
        self._kept.clear()
