"""Conversation memory: what an agent keeps and what it sends each turn (seed §13).

* :class:`FullMemory` keeps everything.
* :class:`RollingWindowMemory` keeps the newest messages within a message
  count and/or a token budget (estimated at ~4 characters per token).
* :class:`SummaryMemory` asks an LLM to summarise the older part once the
  history grows past a threshold, and falls back to dropping it when the
  summary call fails, so a turn never stalls on memory.

Truncation happens in :meth:`Memory.snapshot`, called before each LLM request
when the history is complete, never in :meth:`Memory.append`: between an
assistant tool-call turn and its results the history is legitimately
incomplete. Every strategy passes what it keeps through :func:`strip_orphans`
so a tool message is never separated from the turn that called it.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Protocol

from .base.parts import Content, content_text, estimated_tokens, media_parts
from .errors import AgentSmithError, ConfigError
from .llm.request import LlmRequest, LlmResponse
from .messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators the chat template adds

SUMMARY_PROMPT = (
    "You condense conversations. Summarise the conversation below so it can replace "
    "the original: keep facts, names, numbers, decisions, tool results that are still "
    "needed and any unfinished task. Be brief. Reply with the summary only."
)
SUMMARY_HEADER = "Summary of the earlier conversation:\n"
#: Starts a session's record of a compaction (:func:`compaction_record`).
COMPACTION_MARK = "[context compacted; messages kept: "


class Memory(ABC):
    """Where an agent's history lives. Not thread-safe: one agent, one thread."""

    @abstractmethod
    def append(self, message: Message) -> None:
        """Add a message to the end of the history."""

    def extend(self, messages: Iterable[Message]) -> None:
        """Add ``messages`` to the end of the history, in order (a session load adds thousands)."""
        for message in messages:
            self.append(message)

    @abstractmethod
    def snapshot(self, base_system: SystemMessage | None = None) -> list[Message]:
        """The messages to send now: ``base_system`` first (if non-empty), then history.

        Strategies that truncate do it here.
        """

    @abstractmethod
    def messages(self) -> list[Message]:
        """A copy of the stored history (without the base system message)."""

    @abstractmethod
    def size(self) -> int:
        """The number of stored messages."""

    @abstractmethod
    def clear(self) -> None:
        """Forget everything."""


class FullMemory(Memory):
    """Keeps every message; the snapshot is the whole history.

    A system message at the head of the history (a summary written by
    compaction or :class:`SummaryMemory`) is folded into the base system
    message in the snapshot, because many chat templates accept only one
    system message, first.
    """

    def __init__(self) -> None:
        self._history: list[Message] = []

    def append(self, message: Message) -> None:
        self._history.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        if type(self).append is FullMemory.append:
            self._history.extend(messages)
        else:  # a subclass's own append sees every message
            super().extend(messages)

    def snapshot(self, base_system: SystemMessage | None = None) -> list[Message]:
        self._truncate(base_system)
        return _with_system(base_system, strip_orphans(self._history))

    def messages(self) -> list[Message]:
        return list(self._history)

    def size(self) -> int:
        return len(self._history)

    def clear(self) -> None:
        self._history.clear()

    def _truncate(self, base_system: SystemMessage | None) -> None:
        """Shrink ``self._history`` before a snapshot; FullMemory keeps it all."""


class RollingWindowMemory(FullMemory):
    """Keeps the newest messages within ``max_messages`` and/or ``max_tokens``.

    Tokens are estimated at ~4 characters each plus a few per message; the
    base system message counts against ``max_tokens`` but not against
    ``max_messages``. The newest message and its tool-call group are always
    kept, even when they alone exceed the budget, so the model has something
    to answer.
    """

    def __init__(self, *, max_messages: int | None = None, max_tokens: int | None = None) -> None:
        super().__init__()
        if max_messages is None and max_tokens is None:
            raise ConfigError("RollingWindowMemory needs max_messages or max_tokens")
        if max_messages is not None and max_messages < 1:
            raise ConfigError(f"max_messages must be at least 1, got {max_messages}")
        if max_tokens is not None and max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
        self.max_messages = max_messages
        self.max_tokens = max_tokens

    def _truncate(self, base_system: SystemMessage | None) -> None:
        budget = self.max_tokens
        if budget is not None and base_system is not None and base_system.content:
            budget -= estimate_tokens(base_system)
        self._history = keep_newest(
            self._history, max_messages=self.max_messages, max_tokens=budget
        )


class Summarizer(Protocol):
    """Anything that can answer a chat request without streaming (an ``LlmClient``)."""

    def complete(self, request: LlmRequest, /) -> LlmResponse: ...


class SummaryMemory(FullMemory):
    """Replaces older messages with an LLM-written summary once the history grows.

    When more than ``threshold`` messages are stored, everything but the
    newest ``keep_recent`` (default: half the threshold) becomes one
    ``SystemMessage`` summary. If the summary call fails the older part is
    simply dropped (a rolling window), so memory never stalls or raises.
    In the snapshot the summary is folded into the base system message
    (as every memory does with a leading system message, see :meth:`FullMemory.snapshot`).
    """

    def __init__(
        self,
        llm: Summarizer,
        *,
        threshold: int,
        keep_recent: int | None = None,
        prompt: str = SUMMARY_PROMPT,
    ) -> None:
        super().__init__()
        if threshold < 2:
            raise ConfigError(f"threshold must be at least 2, got {threshold}")
        recent = keep_recent if keep_recent is not None else max(1, threshold // 2)
        if not 1 <= recent < threshold:
            raise ConfigError(f"keep_recent must be between 1 and threshold - 1, got {recent}")
        self._llm = llm
        self.threshold = threshold
        self.keep_recent = recent
        self.prompt = prompt

    def _truncate(self, base_system: SystemMessage | None) -> None:
        if len(self._history) <= self.threshold:
            return
        split = _group_start(self._history, len(self._history) - self.keep_recent)
        older, recent = self._history[:split], self._history[split:]
        if not older:
            return
        try:
            summary = self._summarise(older)
        except AgentSmithError as err:
            log.warning(
                "summarising %d messages failed (%s); dropping them instead", len(older), err
            )
            self._history = strip_orphans(recent)
            return
        log.debug("summarised %d messages into %d characters", len(older), len(summary))
        self._history = [SystemMessage(SUMMARY_HEADER + summary), *strip_orphans(recent)]

    def _summarise(self, older: Sequence[Message]) -> str:
        request = LlmRequest(messages=(SystemMessage(self.prompt), UserMessage(transcript(older))))
        text = self._llm.complete(request).message.content.strip()
        if not text:
            raise AgentSmithError("the summary came back empty")
        return text


def strip_orphans(messages: Sequence[Message]) -> list[Message]:
    """Drop tool messages and tool-call turns that lost their partner.

    Keeps a tool message only when it follows (possibly after sibling tool
    messages) the assistant turn that called it, and keeps a tool-calling
    assistant turn only when all its results follow it; an incomplete group
    is dropped whole. Duplicate results for one call keep the first.
    """
    # Exact type tests (no subclasses of the message classes exist): isinstance against
    # the messages' ABC base costs several times more, and a session load strips 10,000.
    kept: list[Message] = []
    append = kept.append
    i, n = 0, len(messages)
    while i < n:
        message = messages[i]
        if type(message) is ToolMessage:
            i += 1  # an orphan: no calling turn directly before it
            continue
        calls = message.tool_calls if type(message) is AssistantMessage else ()
        if not calls:
            append(message)
            i += 1
            continue
        end = i + 1
        while end < n and type(messages[end]) is ToolMessage:
            end += 1
        if end == i + 2 and len(calls) == 1:  # the common group: one call, its result
            result = messages[i + 1]
            if type(result) is ToolMessage and result.tool_call_id == calls[0].id:
                append(message)
                append(result)
            i = end
            continue
        wanted = {call.id for call in calls}
        results: list[Message] = []
        answered: set[str] = set()
        for result in messages[i + 1 : end]:
            assert isinstance(result, ToolMessage)
            if result.tool_call_id in wanted and result.tool_call_id not in answered:
                answered.add(result.tool_call_id)
                results.append(result)
        if answered == wanted:
            kept.append(message)
            kept.extend(results)
        i = end
    return kept


def keep_newest(
    messages: Sequence[Message], *, max_messages: int | None, max_tokens: int | None
) -> list[Message]:
    """The longest tail of ``messages`` within the bounds, without orphans.

    The newest message's group is kept even when it alone exceeds a bound.
    """
    n = len(messages)
    start, tokens = n, 0
    while start > 0:
        candidate = messages[start - 1]
        if max_messages is not None and n - start + 1 > max_messages:
            break
        cost = estimate_tokens(candidate)
        if max_tokens is not None and tokens + cost > max_tokens:
            break
        start -= 1
        tokens += cost
    while start < n and isinstance(messages[start], ToolMessage):
        start += 1  # its calling turn was cut: the results go too
    if start == n and n:
        start = _group_start(messages, n - 1)
    return strip_orphans(messages[start:])


def estimate_tokens(message: Message) -> int:
    """A rough token count: ~4 characters per token plus a small per-message cost, and each
    image, document or audio part's estimate (:func:`~agent_smith.base.parts.estimated_tokens`)."""
    content = message.content
    if isinstance(content, str):
        chars, media = len(content), 0
    else:
        chars = len(content_text(content))
        media = sum(estimated_tokens(part) for part in media_parts(content))
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            chars += len(call.name) + len(call.arguments_text()) + len(call.id)
    return -(-chars // CHARS_PER_TOKEN) + media + _MESSAGE_OVERHEAD_TOKENS


def transcript(messages: Sequence[Message]) -> str:
    """Render messages as plain text for a summarising prompt."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            lines.append(f"[earlier summary] {message.content}")
        elif isinstance(message, UserMessage):
            lines.append(f"user: {_with_media(message.content)}")
        elif isinstance(message, AssistantMessage):
            if message.content:
                lines.append(f"assistant: {message.content}")
            for call in message.tool_calls:
                lines.append(f"assistant called {call.name}({call.arguments_text()})")
        else:
            status = "error" if message.is_error else "result"
            lines.append(f"tool {message.name} {status}: {_with_media(message.content)}")
    return "\n".join(lines)


def _with_media(content: Content) -> str:
    """The text of ``content``, each image, document or audio named in brackets after it."""
    if isinstance(content, str):
        return content
    named = " ".join(f"[{part.describe()}]" for part in media_parts(content))
    return f"{content_text(content)} {named}".strip()


def _group_start(messages: Sequence[Message], index: int) -> int:
    """Move ``index`` back to the start of its tool-call group (or forward past it at 0)."""
    start = index
    while start > 0 and isinstance(messages[start], ToolMessage):
        start -= 1
    if isinstance(messages[start], ToolMessage):  # no calling turn before it
        while start < len(messages) and isinstance(messages[start], ToolMessage):
            start += 1
    return start


def _with_system(base_system: SystemMessage | None, history: list[Message]) -> list[Message]:
    base = base_system.content if base_system is not None else ""
    if not base:
        return history
    if history and isinstance(history[0], SystemMessage):
        return [SystemMessage(f"{base}\n\n{history[0].content}"), *history[1:]]
    return [base_system, *history] if base_system is not None else history


def compaction_record(summary: str, kept: int) -> SystemMessage:
    """What a session stores when a history is compacted: the summary, and how much stayed.

    ``kept``: the newest messages before this record that stay verbatim after
    the summary (:func:`compacted_view` rebuilds the compacted history).
    """
    return SystemMessage(f"{COMPACTION_MARK}{kept}]\n{SUMMARY_HEADER}{summary}")


def compacted_view(messages: Sequence[Message]) -> list[Message]:
    """A stored conversation as its last compaction left it (everything if never compacted).

    The last :func:`compaction_record` becomes the summary at the head, followed by
    the messages it kept and everything said after it.
    """
    if SystemMessage not in map(type, messages):  # never compacted: no record to look for
        return list(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, SystemMessage) and message.content.startswith(COMPACTION_MARK):
            head, _, summary = message.content.partition("\n")
            count = head.removeprefix(COMPACTION_MARK).rstrip("]")
            kept = int(count) if count.isdigit() else 0
            start = max(index - kept, 0)
            return [SystemMessage(summary), *messages[start:index], *messages[index + 1 :]]
    return list(messages)
