"""How long one reply may run: a default token cap, and a stop for a reply that repeats itself.

Two bounds, both on by default (:class:`~agent_smith.agent.config.AgentConfig`):

* ``max_reply_tokens`` (default 1024) is sent as the request's ``max_tokens``
  when nobody chose a cap: neither the request's sampling, nor the client's
  ``default_sampling``, nor ``sampling.extra`` (``max_tokens``,
  ``max_completion_tokens`` or llama.cpp's ``n_predict``). llama-server's own
  default is "until the context is full", which for a small model that loops
  means minutes of output. A reply cut by the cap ends with finish reason
  ``length`` and a WARNING naming the setting. ``None`` sends no cap.
* ``repetition_guard``: while a reply streams, :class:`RepetitionDetector`
  watches its text (and its reasoning); once the text ends in the same
  passage over and over (period up to :data:`MAX_PERIOD` characters,
  covering at least :data:`MIN_SPAN` characters and :data:`MIN_REPEATS`
  copies) the response is closed (llama-server stops generating when its
  client goes away) and the reply is read as what came up to the end of the
  passage's first copy, with finish reason :data:`REPETITION`. If that is a
  call written as text, it is treated as one
  (:mod:`~agent_smith.agent.text_tool_calls`: recovered, or after tool
  results answered with the note that asks for words). Otherwise it is
  recorded (when not empty) and the turn raises
  :class:`~agent_smith.errors.AgentStopped` with condition
  ``"repetition"``. Only streamed replies are watched (``send`` streams by
  default); a non-streamed one is bounded by the cap alone.

The detector looks at the text every ``_CHECK_EVERY`` (32) characters, and
then only at the periods where the text's last 16 characters occurred
before, found by one ``str.rfind``: a normal reply costs well under a
microsecond per token (``scripts/bench_reply_bounds.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import replace

from .._internal.closing import close_iterator
from ..errors import AgentStopped
from ..llm.events import Finished, ReasoningDelta, StreamEvent, TokenDelta
from ..llm.request import LlmResponse, SamplingParams
from ..messages import AssistantMessage

#: The longest repeating passage looked for, in characters.
MAX_PERIOD = 300
#: The shortest repeating tail that counts, in characters.
MIN_SPAN = 256
#: The fewest copies of the passage that count.
MIN_REPEATS = 3
#: The finish reason of a reply the guard cut off (never sent by a server).
REPETITION = "repetition"
#: ``extra`` keys that already cap a reply (OpenAI's newer name, llama.cpp's own).
CAP_KEYS = ("max_tokens", "max_completion_tokens", "n_predict")

_CHECK_EVERY = 32
_PROBE = 16
_LONGEST_SPAN = max(MIN_SPAN, MIN_REPEATS * MAX_PERIOD)
_TAIL_KEPT = 2 * _LONGEST_SPAN  # a longer tail only lengthens the measured span
_NO_SAMPLING = SamplingParams()


def reply_sampling(
    sampling: SamplingParams | None, cap: int | None, defaults: SamplingParams | None
) -> SamplingParams:
    """``sampling`` with ``max_tokens=cap`` when neither it nor the client's ``defaults`` cap."""
    chosen = sampling if sampling is not None else _NO_SAMPLING
    if cap is None or _caps(chosen) or (defaults is not None and _caps(defaults)):
        return chosen
    if sampling is None:  # the usual turn: the same value every time
        return _capped(cap)
    return replace(chosen, max_tokens=cap)


@functools.lru_cache(maxsize=32)
def _capped(cap: int) -> SamplingParams:
    return replace(_NO_SAMPLING, max_tokens=cap)


def _caps(sampling: SamplingParams) -> bool:
    return sampling.max_tokens is not None or any(key in sampling.extra for key in CAP_KEYS)


class RepetitionDetector:
    """Watches one reply's text as it streams; says when it started repeating itself."""

    __slots__ = ("_checked", "_pieces", "_tail", "_unchecked")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._checked = 0  # pieces already in the tail
        self._tail = ""  # the last characters, enough for the longest span looked for
        self._unchecked = 0

    def feed(self, text: str) -> tuple[int, int] | None:
        """Add a piece of the reply; ``(period, span)`` once its tail repeats, else None."""
        self._pieces.append(text)
        self._unchecked += len(text)
        if self._unchecked < _CHECK_EVERY:
            return None
        self._unchecked = 0
        pieces = self._pieces
        tail = self._tail + "".join(pieces[self._checked :])
        self._checked = len(pieces)
        if len(tail) > _TAIL_KEPT:
            tail = tail[-_TAIL_KEPT:]
        self._tail = tail
        return repeating_tail(tail)

    def kept(self, period: int, span: int) -> str:
        """The reply up to and including the first copy of its repeating passage.

        The copy is taken to the end of its last word: where the repeating run
        starts depends on the text before it, not on word boundaries. A copy
        that already ends at a word's end (a line, say) is kept as it is.
        """
        text = self.text()
        end = len(text) - span + period
        limit = min(len(text), end + period)
        if end > 0 and text[end - 1].isspace():
            limit = end
        while end < limit and not text[end].isspace():
            end += 1
        return text[:end].rstrip()

    def text(self) -> str:
        """The reply so far."""
        return "".join(self._pieces)

    def stop(self, agent: str, period: int, span: int, *, what: str = "reply") -> AgentStopped:
        """The error that ends the turn (condition ``"repetition"``)."""
        return AgentStopped(
            f"agent {agent!r} stopped: the {what} kept repeating a {period}-character passage "
            f"({span // period} times); it was cut off after "
            f"{sum(map(len, self._pieces))} characters",
            condition=REPETITION,
        )


class StreamBounds:
    """Watches one streamed reply of agent ``agent`` for repeats (when ``guard``).

    :meth:`watch` the stream (or :meth:`feed` each event): once the text or
    the reasoning repeats, the stream ends with a ``Finished`` event whose
    response is the cut-off reply (:attr:`stopped` then says why).
    """

    __slots__ = ("_agent", "_guard", "_text", "_thinking", "stopped")

    def __init__(self, agent: str, *, guard: bool) -> None:
        self._agent = agent
        self._guard = guard
        self._text = RepetitionDetector() if guard else None
        self._thinking: RepetitionDetector | None = None
        self.stopped: AgentStopped | None = None

    def watch(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        """``events`` as they come, ended early by the cut-off reply's ``Finished``.

        Watched before anything downstream holds text back (a would-be
        written call), so the cut reply reaches it as the reply's end.
        Ending early, or closing this iterator, closes ``events``.
        """
        try:
            for event in events:
                cut = self.feed(event)
                if cut is not None:
                    yield Finished(cut.finish_reason, None, cut)
                    return
                yield event
        finally:
            close_iterator(events)

    def feed(self, event: StreamEvent) -> LlmResponse | None:
        """Note ``event``; the cut-off reply once the stream repeats itself, else None."""
        repeats = self._text
        if type(event) is TokenDelta:
            if repeats is not None:
                found = repeats.feed(event.text)
                if found is not None:
                    self.stopped = repeats.stop(self._agent, *found)
                    return repeated_reply(repeats.kept(*found))
        elif type(event) is ReasoningDelta and self._guard:
            self._thinking = thinking = self._thinking or RepetitionDetector()
            found = thinking.feed(event.text)
            if found is not None:
                self.stopped = thinking.stop(self._agent, *found, what="reasoning")
                return repeated_reply(repeats.text() if repeats is not None else "")
        return None


def repeated_reply(kept: str) -> LlmResponse:
    """The reply the guard cut off, as the loop reads it: ``kept`` with finish ``REPETITION``."""
    return LlmResponse(AssistantMessage(kept), REPETITION)


def repeating_tail(text: str) -> tuple[int, int] | None:
    """``(period, span)`` of the shortest passage ``text`` ends repeating, else None.

    The last ``span`` characters have period ``period`` (each character equals
    the one ``period`` before it), with ``span >= max(MIN_SPAN, MIN_REPEATS *
    period)``; ``span`` is the whole repeating tail. Candidate periods are the
    earlier places of the text's last :data:`_PROBE` characters (one ``rfind``
    in C: prose has none nearby), nearest first.
    """
    n = len(text)
    if n < MIN_SPAN:
        return None
    probe = text[n - _PROBE :]
    start = max(0, n - _PROBE - MAX_PERIOD)
    pos = text.rfind(probe, start, n - 1)
    while pos >= 0:
        period = n - _PROBE - pos
        need = max(MIN_SPAN, MIN_REPEATS * period)
        if need > n:
            return None  # longer periods need even more text
        earlier = pos - period  # a third copy must hold the probe too: a check without copies
        if (
            text.startswith(probe, earlier)
            and text[n - need + period :] == text[n - need : n - period]
        ):
            span = need
            while span < n and text[n - span - 1] == text[n - span - 1 + period]:
                span += 1
            return period, span
        pos = text.rfind(probe, start, pos + _PROBE - 1)
    return None
