"""The ``chat {model}`` span: one LLM call, retries included, as the GenAI inference span.

The span covers the logical call — every retry is an ``agent_smith.retry``
event on it — and is never made current: a streamed call is a generator, and
nothing below the client needs the span but the outgoing request, which gets
its ``traceparent`` through ``inject``. Streamed calls record
the time to the first chunk.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .._internal.closing import close_iterator
from ..llm.events import Finished
from ..observer import ChatClientFacts, ChatObservation, ChatReplyFacts, ChatRequestFacts
from ..runtime import default_runtime
from .names import (
    CHAT,
    ERROR_TYPE,
    INPUT_MESSAGES,
    OPERATION_NAME,
    OUTPUT_MESSAGES,
    OUTPUT_TYPE,
    PROVIDER_NAME,
    REQUEST_MODEL,
    RESPONSE_FINISH_REASONS,
    RESPONSE_ID,
    RESPONSE_MODEL,
    RESPONSE_TIME_TO_FIRST_CHUNK,
    RETRY_ATTEMPT,
    RETRY_DELAY,
    RETRY_EVENT,
    SAMPLING,
    SYSTEM_INSTRUCTIONS,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
)
from .otel import api
from .span import (
    Attributes,
    LiveHandle,
    LiveSpan,
    client_provider,
    error_type,
    server_attributes,
)

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer


E = TypeVar("E")
R = TypeVar("R", bound=ChatReplyFacts)


class ChatSpan(LiveHandle, ChatObservation):
    """The span of one chat-completions call of ``body`` to ``url``, started when made."""

    __slots__ = ("_started",)

    def __init__(
        self, t: Tracer, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> None:
        model, url = client.model, client.url
        attributes: Attributes = {OPERATION_NAME: CHAT, PROVIDER_NAME: client_provider(client)}
        if model:
            attributes[REQUEST_MODEL] = model
        attributes.update(server_attributes(url))
        for key, value in body.items():
            name = SAMPLING.get(key)
            if name is not None and _is_attribute(value):
                attributes[name] = value
        if body.get("response_format") is not None:
            attributes[OUTPUT_TYPE] = "json"
        name = f"{CHAT} {model}" if model else CHAT
        self._started = time.monotonic()
        kind = api().SpanKind.CLIENT
        content = (client.runtime or default_runtime()).trace_content
        super().__init__(LiveSpan(t, name, kind, attributes, content=content, attach=False))
        if self._live.content:
            from . import content as text

            recorded: Attributes = {INPUT_MESSAGES: text.input_messages(request.messages)}
            instructions = text.system_instructions(request.messages)
            if instructions is not None:
                recorded[SYSTEM_INSTRUCTIONS] = instructions
            self._live.set(recorded)

    def inject(self, headers: dict[str, str]) -> None:
        api().inject(headers, context=self._live.context)

    def retry(self, attempt: int, delay: float, failure: BaseException) -> None:
        self._live.span.add_event(
            RETRY_EVENT,
            {RETRY_ATTEMPT: attempt, RETRY_DELAY: delay, ERROR_TYPE: error_type(failure)},
        )

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        return self._watch(events)

    def _watch(self, events: Iterator[E]) -> Iterator[E]:
        first = True
        try:
            for event in events:
                if first:
                    first = False
                    elapsed = time.monotonic() - self._started
                    self._live.set({RESPONSE_TIME_TO_FIRST_CHUNK: elapsed})
                if isinstance(event, Finished):
                    self.finish(event.response)
                yield event
        finally:
            close_iterator(events)

    def finish(self, response: R) -> R:
        attributes: Attributes = {RESPONSE_FINISH_REASONS: [response.finish_reason]}
        if response.model:
            attributes[RESPONSE_MODEL] = response.model
        if response.response_id:
            attributes[RESPONSE_ID] = response.response_id
        usage = response.usage
        if usage is not None:
            attributes[USAGE_INPUT_TOKENS] = usage.prompt
            attributes[USAGE_OUTPUT_TOKENS] = usage.completion
        if self._live.content:
            from . import content as text

            attributes[OUTPUT_MESSAGES] = text.output_messages(
                response.message, response.finish_reason
            )
        self._live.set(attributes)
        return response


def _is_attribute(value: object) -> bool:
    """Whether a sampling value is one a span attribute can hold (numbers, text, stop lists)."""
    if type(value) is list:
        return bool(value) and all(type(v) is str for v in value)
    return type(value) in (int, float, str)  # not bool, not None
