"""Compaction: older turns replaced by an LLM-written summary, only when the summary succeeded.

:class:`Compaction` (``AgentConfig.compaction``) says when and how much:
the gate (:mod:`~agent_smith.agent.context_gate`) calls :func:`compact`
before a request that would fill more than ``threshold`` of what one
request may take of the context window (the window less its reply's room,
:func:`~agent_smith.agent.context_fit.request_room`), so it comes before
the trimming of what is sent. :func:`compact` keeps the newest messages that fit in
``keep_recent`` of the window verbatim (whole tool-call groups: a call and
its results are never split; the newest group always stays), asks the
model for a summary of the rest in one bounded sub-call (no tools, at most
``summary_max_tokens``, its input cut to fit the window), and only then
replaces the memory's history with the summary (a system message at its
head, marked as a summary) and the kept messages. A failed or empty summary
changes nothing: the history stays as it is and what is *sent* is trimmed
to fit instead (:mod:`~agent_smith.agent.context_fit`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..base.cancellation import CancellationToken
from ..errors import AgentSmithError, ConfigError
from ..llm.request import LlmRequest, LlmResponse, SamplingParams
from ..memory import (
    CHARS_PER_TOKEN,
    SUMMARY_HEADER,
    SUMMARY_PROMPT,
    Memory,
    estimate_tokens,
    keep_newest,
    transcript,
)
from ..messages import Message, SystemMessage, UserMessage

log = logging.getLogger(__name__)

#: Replaces the middle of a transcript too long for the summary call.
OMITTED = "\n[... part of the conversation omitted to fit the summary request ...]\n"


@dataclass(frozen=True)
class Compaction:
    """When an agent compacts its history, and how (``AgentConfig.compaction``, on by default).

    ``threshold``: compact before a request over this share of the window
    (less the reply's room).
    ``keep_recent``: the share of the window the newest messages kept
    verbatim may take. ``summary_max_tokens``: the summary's reply cap.
    ``prompt``: the summarising instruction.
    """

    threshold: float = 0.8
    keep_recent: float = 0.3
    summary_max_tokens: int = 512
    prompt: str = SUMMARY_PROMPT

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError(f"Compaction.threshold must be in (0, 1], got {self.threshold!r}")
        if not 0 < self.keep_recent < self.threshold:
            raise ConfigError("Compaction.keep_recent must be above 0 and below threshold")
        if isinstance(self.summary_max_tokens, bool) or self.summary_max_tokens < 1:
            raise ConfigError("Compaction.summary_max_tokens must be positive")


class Completer(Protocol):
    """What :func:`compact` needs of the model: one non-streamed reply."""

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse: ...


@dataclass(frozen=True)
class Compacted:
    """A compaction that succeeded: the summary, and the messages it replaced and kept."""

    summary: str
    replaced: int
    kept: int


def compact(
    ask: Callable[[LlmRequest], LlmResponse],
    memory: Memory,
    settings: Compaction,
    window: int,
) -> Compacted | None:
    """Summarise the older part of ``memory`` and replace it (see the module doc).

    ``ask`` sends the summary request. Returns None when there is nothing
    older to summarise; raises what ``ask`` raises (or AgentSmithError for
    an empty summary) with the memory untouched.
    """
    history = memory.messages()
    recent = keep_newest(history, max_messages=None, max_tokens=int(window * settings.keep_recent))
    split = len(history) - len(recent)
    if split <= 0 or history[split:] != recent:  # nothing older, or orphans: leave it
        return None
    older = history[:split]
    budget = (window - settings.summary_max_tokens) * CHARS_PER_TOKEN * 3 // 4
    text = _fitted(transcript(older), budget - len(settings.prompt))
    request = LlmRequest(
        (SystemMessage(settings.prompt), UserMessage(text)),
        sampling=SamplingParams(temperature=0, max_tokens=settings.summary_max_tokens),
    )
    response = ask(request)
    summary = response.message.content.strip()
    if not summary:
        raise AgentSmithError("the summary came back empty")
    memory.clear()
    for message in (SystemMessage(SUMMARY_HEADER + summary), *recent):
        memory.append(message)
    log.info("compacted %d messages into a summary of %d characters", split, len(summary))
    return Compacted(summary, split, len(recent))


def estimate(messages: Sequence[Message]) -> int:
    """The ~4 characters per token estimate of ``messages``."""
    return sum(estimate_tokens(message) for message in messages)


def _fitted(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its head and (longer) tail, the middle omitted."""
    if len(text) <= limit:
        return text
    room = max(limit - len(OMITTED), 0)
    head = room // 4
    return text[:head] + OMITTED + text[len(text) - (room - head) :]
