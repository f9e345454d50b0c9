"""The REPL's sign of life: what the model is doing, for how long, its tokens so far, tokens/s.

A small model on a CPU can work for many seconds before its first visible
word (reading a long prompt, or writing a tool call as text, which the
agent holds back). :class:`Activity` counts every piece of the turn's
output — each streamed delta is about one token, shown
(:class:`~agent_smith.llm.events.TokenDelta`) or held back as a call being
written (:class:`~agent_smith.agent.events.TextHeld`) — and, once a reply
ends, takes the server's own count from its usage. It also names what the
model is at: ``reading the prompt…``, ``thinking…``, ``writing a tool
call…``, ``answering…``, ``calling calculator…``. The REPL draws
:meth:`line` in place on a terminal while nothing else is being written.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..agent.events import TextHeld, ToolCallRequested, ToolResultReady
from ..llm.events import Finished, ReasoningDelta, TokenDelta, ToolCallStarted

#: What the model does before its first token of a reply: reading the prompt.
READING = "reading the prompt…"


class Activity:
    """Counts one turn's generated tokens and says how the model is doing."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = clock()
        self._reply_tokens = 0  # streamed deltas of the reply being written
        self._reply_started: float | None = None  # its first delta
        self._done_tokens = 0  # tokens of the replies already finished
        self._done_seconds = 0.0  # their time from first delta to end
        self.doing = READING  # what the model is at, for the line

    def see(self, event: object) -> None:
        """Count ``event`` if it is a piece of the model's output; note what the model does."""
        kind = type(event)
        if kind is TokenDelta or kind is TextHeld or kind is ReasoningDelta:
            if self._reply_started is None:
                self._reply_started = self._clock()
            self._reply_tokens += 1
            self.doing = _DOING[kind]
        elif kind is ToolCallStarted:
            self.doing = _DOING[TextHeld]
        elif isinstance(event, ToolCallRequested):
            self.doing = f"calling {event.call.name}…"
        elif isinstance(event, ToolResultReady):
            self.doing = READING  # the next request: the prompt with the result
        elif isinstance(event, Finished):
            counted = event.usage.completion if event.usage is not None else 0
            self._done_tokens += max(counted, self._reply_tokens)
            if self._reply_started is not None:
                self._done_seconds += self._clock() - self._reply_started
            self._reply_tokens, self._reply_started = 0, None

    @property
    def tokens(self) -> int:
        """Tokens generated in this turn so far."""
        return self._done_tokens + self._reply_tokens

    def rate(self) -> float | None:
        """Tokens per second while writing (None before a second of it)."""
        seconds = self._done_seconds
        if self._reply_started is not None:
            seconds += self._clock() - self._reply_started
        return self.tokens / seconds if seconds >= 1.0 else None

    def line(self) -> str:
        """``answering… 12 s, 85 tokens, 7.1 tokens/s (Ctrl-C cancels)``."""
        elapsed = self._clock() - self._started
        parts = [f"{self.doing} {elapsed:.0f} s"]
        if self.tokens:
            parts.append(f"{self.tokens} tokens")
        rate = self.rate()
        if rate is not None:
            parts.append(f"{rate:.1f} tokens/s")
        return ", ".join(parts) + " (Ctrl-C cancels)"


_DOING: dict[type, str] = {
    TokenDelta: "answering…",
    TextHeld: "writing a tool call…",
    ReasoningDelta: "thinking…",
}
