"""The compaction gate: before each model request, is compaction due?

One :class:`ContextGate` per agent with ``AgentConfig.compaction`` keeps a
token count of what the next request will send, *incrementally*: the
server's own count of the last request (``usage.prompt``, exact) plus the
~4 characters per token estimate of each message recorded since
(:meth:`ContextGate.note`, called as the turn records it). When the last
request was trimmed before it was sent, the server's count of what was sent
plus the estimate of what the trimming left out stands for the whole. When
the server reports no usage, the estimate of the whole history (also kept
incrementally) plus the system prompt and tool schemas stands in. A memory
whose size changed behind the gate's back (a session reloaded, a
``clear()``) is counted again, once.

So the check before a request is a few additions and one comparison
(:meth:`ContextGate.due`). The window comes from what is already known
(configured, or said by the server before); the server is asked for it
only once the count passes :meth:`ContextGate.worth_asking`'s floor, below
which no window in use could need compacting, so a short conversation with
a model whose window is unknown costs no request. Only when the count
passes ``threshold`` of the window does the gate look closer: the exact
count where the model offers one (llama-server's ``/tokenize``,
:meth:`~agent_smith.LlmClient.count_tokens`), then
:func:`~agent_smith.agent.compaction.compact`. A compaction that fails
is not tried again until the history has grown by a tenth of the window;
meanwhile what is sent is trimmed to fit. A request whose system prompt and
newest message alone cannot fit raises
:class:`~agent_smith.errors.ContextOverflowError` (``http_status`` 0) before
it is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import AgentSmithError, ContextOverflowError
from ..llm.request import LlmRequest, LlmResponse
from ..memory import CHARS_PER_TOKEN, Memory, estimate_tokens, keep_newest
from ..messages import Message, SystemMessage
from ..observer import get_observer
from ..tools.base import ToolSchema
from .compaction import Compaction, compact, estimate
from .context_fit import request_room
from .events import ContextCompacted

if TYPE_CHECKING:
    from .config import AgentConfig

log = logging.getLogger(__name__)

#: The smallest context window the gate looks out for unasked: a request under its
#: threshold share (~300 tokens) could not need compacting in any window in use, so the
#: server is not asked for its window on its account. A smaller window is learned from
#: the first context-overflow answer.
SMALL_WINDOW = 512


class ContextGate:
    """One agent's token count of its next request, and the decision to compact (module doc)."""

    __slots__ = ("_all", "_base", "_failed", "_floor", "_schemas", "_since", "_size", "settings")

    def __init__(self, settings: Compaction) -> None:
        self.settings = settings
        self._floor = settings.threshold * request_room(SMALL_WINDOW, None)
        self._base: int | None = None  # the server's count of the last request
        self._since = 0  # estimated tokens recorded after it
        self._all = 0  # estimated tokens of the whole history
        self._size = -1  # the memory size these describe; -1: count again
        self._failed: int | None = None  # the count at which a compaction last failed
        self._schemas: tuple[Sequence[ToolSchema], int] = ((), 0)

    @classmethod
    def of(cls, config: AgentConfig) -> ContextGate | None:
        """The gate of an agent with ``config``; None without ``compaction``."""
        return cls(config.compaction) if config.compaction is not None else None

    def note(self, message: Message) -> None:
        """Count a message the turn just recorded."""
        tokens = estimate_tokens(message)
        self._since += tokens
        self._all += tokens
        self._size += 1

    def observed(self, prompt_tokens: int | None, built: LlmRequest, sent: LlmRequest) -> None:
        """The server's count of the request just answered (None or 0: not said).

        ``sent`` is what was sent of the request the history ``built``: when
        it was trimmed to the window, the server's count stands for what was
        sent and the estimate only for what the trimming left out.
        """
        if not prompt_tokens:
            self._base = None
        elif sent is built:
            self._base = prompt_tokens
        else:
            left_out = estimate(built.messages) - estimate(sent.messages)
            self._base = prompt_tokens + max(left_out, 0)
        self._since = 0

    def tokens(self, memory: Memory, prompt: str, schemas: Sequence[ToolSchema]) -> int:
        """The count of the next request: exact base plus estimates, or all estimated.

        With an exact base, the larger of the two: the estimate is what the
        trimming of :mod:`~agent_smith.agent.context_fit` goes by, and
        compaction must come first.
        """
        if memory.size() != self._size:
            self._recount(memory)
        estimated = self._all + (len(prompt) + self._schema_chars(schemas)) // CHARS_PER_TOKEN
        if self._base is not None:
            return max(self._base + self._since, estimated)
        return estimated

    def worth_asking(self, tokens: int) -> bool:
        """Whether a request of ``tokens`` could need compacting in the smallest window in use.

        Below that, the server is not asked for an unknown window.
        """
        return tokens > self._floor

    def due(self, tokens: int, room: int) -> bool:
        """Whether a request of ``tokens`` passes the threshold (and no failure holds it back).

        ``room``: what one request may take of the window, its reply's room
        left aside (:func:`~agent_smith.agent.context_fit.request_room`).
        """
        if tokens <= self.settings.threshold * room:
            return False
        return self._failed is None or tokens > self._failed + room // 10

    def compact(
        self,
        ask: Callable[[LlmRequest], LlmResponse],
        count: Callable[[LlmRequest], int | None] | None,
        memory: Memory,
        request: LlmRequest,
        prompt: str,
        tokens: int,
        window: int,
        room: int,
    ) -> ContextCompacted | None:
        """Compact ``memory`` if the exact count agrees it is due; the event, or None.

        ``ask`` sends the summary request, ``count`` counts a request exactly
        (None: the model cannot). ``request`` is the one about to be sent
        (for the exact count and the size check), ``prompt`` its system prompt;
        ``room`` what of ``window`` it may take.
        """
        exact = None
        if count is not None:
            try:
                exact = count(request)
            except AgentSmithError as err:  # counting is a refinement: estimate instead
                log.debug("counting the request's tokens failed (%s): estimating", err)
        if exact is not None:
            self._base, self._since, tokens = exact, 0, exact
            if not self.due(tokens, room):
                return None
        try:
            done = compact(ask, memory, self.settings, window)
        except AgentSmithError as err:
            log.warning("compaction failed (%s): the history stays, what is sent is trimmed", err)
            done = None
        if done is None:
            self._failed = tokens
            _check_fits(request, window)
            return None
        self._failed = None
        self._recount(memory)
        after = self._all + (len(prompt) + self._schema_chars(request.tools)) // CHARS_PER_TOKEN
        event = ContextCompacted(
            done.replaced, done.kept, done.summary, tokens, after, window, exact is not None
        )
        get_observer().on_compaction(
            event.replaced, event.kept, event.tokens_before, event.tokens_after
        )
        return event

    def _recount(self, memory: Memory) -> None:
        history = memory.messages()
        self._all = sum(estimate_tokens(message) for message in history)
        self._size = len(history)
        self._base = None
        self._since = 0

    def _schema_chars(self, schemas: Sequence[ToolSchema]) -> int:
        known, chars = self._schemas
        # Equal, not identical: each round builds a new tuple of the same schema objects
        # (compared by identity first), and printing them all costs more than the rest.
        if schemas != known:
            chars = sum(len(str(schema)) for schema in schemas)
            self._schemas = (schemas, chars)
        return chars


def _check_fits(request: LlmRequest, window: int) -> None:
    """Raise before sending when the system prompt and the newest message alone overflow."""
    messages = list(request.messages)
    system = messages.pop(0) if messages and isinstance(messages[0], SystemMessage) else None
    newest = keep_newest(messages, max_messages=None, max_tokens=0)
    least = estimate(newest) + (estimate_tokens(system) if system is not None else 0)
    if least > window:
        raise ContextOverflowError(
            f"the request cannot fit the {window}-token context window even after compaction: "
            f"its system prompt and newest message alone take ~{least} tokens (estimated)",
            http_status=0,
            prompt_tokens=least,
            context_window=window,
        )
