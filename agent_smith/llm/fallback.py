"""A chain of chat models: the next one answers when one fails in a way worth falling through.

``FallbackModel([primary, backup, ...])`` is itself a
:class:`~agent_smith.llm.model.ChatModel`. Each model keeps its own retries;
only a failure that survived them moves on to the next model. By default
these fall through (:func:`falls_through`): a connection failure or timeout,
an HTTP 5xx or 429, and a context-length error (the next model may have a
larger window). Anything else — a 4xx that would fail everywhere, a parse
error, a cancellation — is raised at once. A streamed reply never falls
through after its first event: what the caller saw cannot be taken back.

The reply says which model answered: ``response.model`` is set to the
answering model's name when its server did not say, and the fall-through
is logged (and given to ``on_fallback``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .._internal.closing import close_iterator
from ..errors import AgentSmithError, AgentTimeoutError, ConfigError, LlmApiError, TransportError
from ..observer import get_observer
from .events import Finished, StreamEvent
from .model import ChatModel, ModelCapabilities

if TYPE_CHECKING:
    from ..base.cancellation import CancellationToken
    from .request import LlmRequest, LlmResponse

log = logging.getLogger(__name__)

_CONTEXT = re.compile(
    r"context[_ ]length|context (size|window)|exceed_context|prompt is too long|too many tokens",
    re.IGNORECASE,
)


def falls_through(error: AgentSmithError) -> bool:
    """The default: connection failures, timeouts, 5xx, 429 and context-length errors."""
    if isinstance(error, (TransportError, AgentTimeoutError)):
        return True
    if isinstance(error, LlmApiError):
        if error.http_status >= 500 or error.http_status == 429:
            return True
        return bool(_CONTEXT.search(f"{error} {error.body_excerpt}"))
    return False


class FallbackModel:
    """Tries ``models`` in order (see the module doc).

    ``should_fall`` decides which failures move on (default
    :func:`falls_through`); ``on_fallback(model, error)`` is called, on the
    calling thread, each time ``model`` failed and the next one is tried.
    Capabilities are the first model's, with native structured output only
    if every model has it and the smallest known context size
    (:meth:`context_window` asks the models that ask their servers).
    """

    def __init__(
        self,
        models: Sequence[ChatModel],
        *,
        should_fall: Callable[[AgentSmithError], bool] = falls_through,
        on_fallback: Callable[[ChatModel, AgentSmithError], object] | None = None,
    ) -> None:
        if not models:
            raise ConfigError("FallbackModel needs at least one model")
        self._models = tuple(models)
        self._should_fall = should_fall
        self._on_fallback = on_fallback
        first = self._models[0].capabilities
        sizes = [m.capabilities.context_size for m in self._models]
        known = [s for s in sizes if s is not None]
        self._capabilities = replace(
            first,
            native_output=all(m.capabilities.native_output for m in self._models),
            context_size=min(known) if known else None,
            token_counting=False,
        )

    @property
    def models(self) -> tuple[ChatModel, ...]:
        return self._models

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._capabilities

    def context_window(self, *, ask: bool = True) -> int | None:
        """The smallest window the chain's models know; None while none is known.

        A model that asks its server for its window (``context_window()``,
        as :class:`~agent_smith.LlmClient` and the Ollama client do) is asked
        when ``ask``; the others say it in their capabilities. A window
        learned here is also the capabilities' ``context_size``.
        """
        known = [w for w in (_window_of(m, ask) for m in self._models) if w is not None]
        window = min(known) if known else None
        if window is not None and window != self._capabilities.context_size:
            self._capabilities = replace(self._capabilities, context_size=window)
        return window

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """The first model's reply that did not fail in a way that falls through."""
        for position, model in enumerate(self._models):
            try:
                return _named(model.complete(request, cancel=cancel), model)
            except AgentSmithError as error:
                self._fall(position, model, error)
        raise AssertionError("unreachable: the last model's failure is raised")

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """The first model's events that started without failing; never switches mid-stream."""
        for position, model in enumerate(self._models):
            events = model.stream(request, cancel=cancel)
            try:
                try:
                    first = next(events)
                except StopIteration:
                    return
                except AgentSmithError as error:
                    self._fall(position, model, error)
                    continue
                yield _named_event(first, model)
                for event in events:
                    yield _named_event(event, model)
                return
            finally:
                close_iterator(events)  # a caller that stopped early closes the live response too

    def _fall(self, position: int, model: ChatModel, error: AgentSmithError) -> None:
        if position == len(self._models) - 1 or not self._should_fall(error):
            raise error
        following = self._models[position + 1].capabilities
        log.warning(
            "model %s (%s) failed: %s; falling back to %s (%s)",
            model.capabilities.model or "?",
            model.capabilities.provider,
            error,
            following.model or "?",
            following.provider,
        )
        get_observer().on_fallback(model.capabilities.model, model.capabilities.provider, error)
        if self._on_fallback is not None:
            self._on_fallback(model, error)


def _window_of(model: ChatModel, ask: bool) -> int | None:
    """``model``'s window: asked of it when it can say, else from its capabilities."""
    asked = getattr(model, "context_window", None)
    if callable(asked):
        window = asked(ask=ask)
        return window if isinstance(window, int) else None
    return model.capabilities.context_size


def _named(response: LlmResponse, model: ChatModel) -> LlmResponse:
    if response.model:
        return response
    return replace(response, model=model.capabilities.model or model.capabilities.provider)


def _named_event(event: StreamEvent, model: ChatModel) -> StreamEvent:
    if type(event) is Finished and not event.response.model:
        return Finished(event.finish_reason, event.usage, _named(event.response, model))
    return event
