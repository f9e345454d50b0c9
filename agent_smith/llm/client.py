"""The synchronous chat-completions client: ``complete``, ``stream``, ``cancel``.

The OpenAI-compatible :class:`~agent_smith.llm.model.ChatModel`. Bytes move
through the :class:`~agent_smith.llm.transport.HttpTransport` every provider
shares (one ``requests`` path, retries, cancellation from any thread); this
module builds the chat-completions body and reads its replies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import requests

from ..base.cancellation import CancellationToken
from ..errors import ContextOverflowError, TransportError
from ..observer import ChatObservation, get_observer
from ..runtime import Runtime, default_runtime
from .body import OPENAI_PARTS, build_body
from .endpoint import resolve_chat_url
from .events import Finished, StreamEvent, response_events
from .http_model import HttpChatModel
from .part_support import PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .server_props import Asked, KnownWindow, fetch_context_window, props_url
from .stream_decoder import StreamDecoder
from .think_tags import split_events, split_response
from .token_count import TokenCounter
from .transport import LiveCall

log = logging.getLogger(__name__)


class LlmClient(HttpChatModel):
    """A client for one OpenAI-compatible chat-completions endpoint.

    ``endpoint`` is a base URL (``http://127.0.0.1:8080`` or
    ``https://api.openai.com/v1``); ``model`` is sent when non-empty.
    ``request_timeout`` bounds connecting and each wait for data (seconds).
    ``retry_policy`` overrides ``max_retries``. ``think_tags``: reasoning the
    server writes inline as ``<think>…</think>`` in the content is split out
    into reasoning (:mod:`.think_tags`). ``parts``: the images, documents and
    audio the server takes (OpenAI's by default; a llama.cpp server with a
    vision projector takes images only: ``PartSupport(media_types=COMMON_IMAGES)``).
    Thread-safe: many threads may call
    one client at once.
    """

    def __init__(
        self,
        endpoint: str,
        model: str = "",
        *,
        api_key: str | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
        think_tags: bool = False,
        parts: PartSupport = OPENAI_PARTS,
    ) -> None:
        super().__init__(
            resolve_chat_url(endpoint),
            model,
            who="LLM server",
            provider="openai",
            api_key=api_key,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            parts=parts,
        )
        self._endpoint = endpoint
        self._think_tags = think_tags
        self._timeout = request_timeout
        self._window = KnownWindow()
        self._counter = TokenCounter(self._url)
        log.info("LLM client for %s (model %r)", self._shown, model)

    @property
    def endpoint(self) -> str:
        """The endpoint as configured."""
        return self._endpoint

    @property
    def url(self) -> str:
        """The resolved chat-completions URL requests are posted to."""
        return self._url

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """Send ``request`` and return the whole reply (no streaming)."""
        body = self._request_body(self._with_parts(request), stream=False)
        with self._chat_span(request, body) as span:
            return span.finish(self._complete(body, cancel, span))

    def _complete(
        self, body: dict[str, Any], cancel: CancellationToken | None, span: ChatObservation
    ) -> LlmResponse:
        with self._http.live_call(cancel) as call:
            response = self._send(body, call, span)
            try:
                parsed, data = self._http.read_json(response, call)
            finally:
                response.close()
        return self._whole_reply(parsed, data, response.status_code)

    def _whole_reply(self, parsed: Any, data: bytes, status: int) -> LlmResponse:
        """A whole JSON reply: the response, or the error it reports."""
        if isinstance(parsed, dict) and "error" in parsed and "choices" not in parsed:
            raise self._http.json_error(parsed, data, status)
        return self._parse(parsed)

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """Send ``request`` streaming; yield events as they arrive, ``Finished`` last.

        Closing the generator early closes the HTTP response.
        """
        body = self._request_body(self._with_parts(request), stream=True)
        with self._chat_span(request, body) as span, self._http.live_call(cancel) as call:
            response = self._send(body, call, span)
            try:
                if _is_json(response):
                    # Some proxies answer stream: true with the whole reply
                    # (and a few label their SSE as JSON: the body tells).
                    data = self._http.read_body(response, call)
                    if data.lstrip()[:1] == b"{":
                        parsed, _ = self._http.read_json_bytes(data)
                        events = response_events(self._whole_reply(parsed, data, 200))
                    else:
                        events = self._decode([data])
                else:
                    events = self._decode(self._http.chunks(response, call))
                if self._think_tags:
                    events = split_events(events)
                yield from span.watch(events)
                call.check()
            finally:
                response.close()

    def complete_stream(
        self,
        request: LlmRequest,
        on_event: Callable[[StreamEvent], object],
        *,
        cancel: CancellationToken | None = None,
    ) -> LlmResponse:
        """Stream ``request``, calling ``on_event`` for each event; return the response.

        An exception raised by ``on_event`` ends the stream and propagates.
        """
        result: LlmResponse | None = None
        for event in self.stream(request, cancel=cancel):
            on_event(event)
            if isinstance(event, Finished):
                result = event.response
        if result is None:  # stream() always ends with Finished or raises
            raise TransportError(
                f"stream from {self._shown} ended without a result",
                operation="stream",
                endpoint_or_server=self._shown,
            )
        return result

    def context_window(self, *, ask: bool = True) -> int | None:
        """The tokens one request may fill, when the server says; None while unknown.

        Asked of the server (llama-server's ``GET /props``, see
        :mod:`~agent_smith.llm.server_props`) until it answers, and the answer
        remembered (a 404 too: no window); also learned from a
        :class:`~agent_smith.errors.ContextOverflowError` that names it.
        ``ask=False`` returns what is known without asking. A known window is
        also the capabilities' ``context_size``.
        """
        window = self._window.get(self._ask_window if ask else None)
        self._learned(context_size=window)
        return window

    def _ask_window(self) -> Asked:
        session = (self._runtime or default_runtime()).session
        url = props_url(self._url)
        return fetch_context_window(
            session,
            url,
            headers={**self._headers, "Accept": "application/json"},
            timeout=min(self._timeout, 10.0),
        )

    # -- the dialect: OpenAI chat completions -----------------------------------

    def _request_body(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        return build_body(request, model=self._model, defaults=self._defaults, stream=stream)

    def _parse(self, parsed: Any) -> LlmResponse:
        reply = LlmResponse.from_openai(parsed, lenient_arguments=True)
        return split_response(reply) if self._think_tags else reply

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return StreamDecoder(endpoint=self._shown).events(chunks)

    def count_tokens(self, request: LlmRequest) -> int | None:
        """The exact prompt tokens of ``request`` where the server counts them, else None.

        llama-server renders and tokenizes it (see :mod:`~agent_smith.llm.token_count`);
        a server that cannot is asked once. None means: estimate (~4 characters a token).
        Once the server has counted, the capabilities say ``token_counting``.
        """
        body = self._request_body(self._with_parts(request), stream=False)
        session = (self._runtime or default_runtime()).session
        timeout = min(self._timeout, 10.0)
        counted = self._counter.count(session, body, headers=self._headers, timeout=timeout)
        if counted is not None:
            self._learned(token_counting=True)
        return counted

    # -- internals ---------------------------------------------------------

    def _chat_span(self, request: LlmRequest, body: dict[str, Any]) -> ChatObservation:
        return get_observer().on_chat_start(self, request, body)

    def _send(
        self, body: dict[str, Any], call: LiveCall, span: ChatObservation
    ) -> requests.Response:
        """POST ``body`` with retries; return a response with a 2xx status, body unread."""
        accept = "text/event-stream" if body.get("stream") else "application/json"
        headers = {**self._headers, "Accept": accept}
        log.debug(
            "chat completion to %s: %d messages, %d tools",
            self._shown,
            len(body["messages"]),
            len(body.get("tools", ())),
        )
        try:
            return self._http.post(self._url, body, headers, call, span)
        except ContextOverflowError as failure:
            self._window.learn(failure.context_window)  # the server said how big it is
            self._learned(context_size=failure.context_window)
            raise


def _is_json(response: requests.Response) -> bool:
    """Whether a reply to a streamed request came as one JSON body instead of SSE."""
    kind = response.headers.get("Content-Type", "")
    return kind.split(";", 1)[0].strip().lower() == "application/json"
