"""Reasoning written inline as ``<think>…</think>`` in the content, split out of it.

Some OpenAI-compatible servers (and models served raw: Qwen3, DeepSeek-R1
distills) put the model's thinking in ``content`` between think tags rather
than in a ``reasoning_content`` field. With ``LlmClient(think_tags=True)``
it goes where reasoning belongs — :class:`ReasoningDelta` events and the
reply's ``reasoning`` — and never into the answer or the history. A tag
may arrive split across deltas; the splitter holds back only what could
still be the start of a tag.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from .._internal.closing import close_iterator
from ..messages import AssistantMessage
from .events import Finished, ReasoningDelta, StreamEvent, TokenDelta
from .request import LlmResponse

OPEN = "<think>"
CLOSE = "</think>"


class ThinkSplitter:
    """Splits streamed text into (is_reasoning, piece) pairs at think tags."""

    def __init__(self) -> None:
        self._pending = ""
        self._thinking = False
        self._after_close = False  # drop the blank lines between </think> and the answer

    def feed(self, text: str) -> list[tuple[bool, str]]:
        """The pieces of ``text`` that are certain; a possible partial tag is kept back."""
        buffer = self._pending + text
        pieces: list[tuple[bool, str]] = []
        while True:
            tag = CLOSE if self._thinking else OPEN
            at = buffer.find(tag)
            if at < 0:
                break
            self._emit(pieces, buffer[:at])
            buffer = buffer[at + len(tag) :]
            self._thinking = not self._thinking
            self._after_close = not self._thinking
        keep = _partial_tag(buffer, CLOSE if self._thinking else OPEN)
        self._emit(pieces, buffer[: len(buffer) - keep])
        self._pending = buffer[len(buffer) - keep :]
        return pieces

    def flush(self) -> list[tuple[bool, str]]:
        """What was held back, at the end of the text."""
        pieces: list[tuple[bool, str]] = []
        self._emit(pieces, self._pending)
        self._pending = ""
        return pieces

    def _emit(self, pieces: list[tuple[bool, str]], text: str) -> None:
        if self._after_close and not self._thinking:
            text = text.lstrip()
            if text:
                self._after_close = False
        if text:
            pieces.append((self._thinking, text))


def _partial_tag(text: str, tag: str) -> int:
    """How many trailing characters of ``text`` could begin ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def split_message(message: AssistantMessage) -> AssistantMessage:
    """``message`` with think-tagged content moved to its reasoning."""
    if OPEN not in message.content:
        return message
    splitter = ThinkSplitter()
    pieces = splitter.feed(message.content) + splitter.flush()
    answer = "".join(p for thinking, p in pieces if not thinking)
    thought = "".join(p for thinking, p in pieces if thinking)
    reasoning = "\n\n".join(r for r in (message.reasoning, thought) if r) or None
    return replace(message, content=answer, reasoning=reasoning)


def split_response(response: LlmResponse) -> LlmResponse:
    """``response`` with its message's think tags split out."""
    return replace(response, message=split_message(response.message))


def split_events(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """A stream's events with think-tagged text turned into ReasoningDelta events."""
    splitter = ThinkSplitter()
    try:
        for event in events:
            if type(event) is TokenDelta:
                for thinking, piece in splitter.feed(event.text):
                    yield ReasoningDelta(piece) if thinking else TokenDelta(piece)
            elif type(event) is Finished:
                for thinking, piece in splitter.flush():
                    yield ReasoningDelta(piece) if thinking else TokenDelta(piece)
                yield Finished(event.finish_reason, event.usage, split_response(event.response))
            else:
                yield event
    finally:
        close_iterator(events)
