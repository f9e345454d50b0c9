"""What every chat model over HTTP shares: its settings, its transport, its observed calls.

:class:`HttpChatModel` is the base of :class:`~agent_smith.LlmClient` and the
native provider clients (Anthropic, Gemini, Ollama, Responses, Bedrock). It
holds what they all have (the URL, model, API key, default sampling, runtime,
capabilities and the :class:`~agent_smith.llm.transport.HttpTransport`) and
the two request shapes they all make: a whole JSON reply, and a streamed body
decoded into events, each observed as one chat call. A provider module keeps
only its dialect: its URL and headers, its request body, its reply decoder.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..base.cancellation import CancellationToken
from ..observer import NO_CHAT, ChatObservation, get_observer
from ..runtime import Runtime
from .endpoint import display_url
from .events import StreamEvent
from .model import ModelCapabilities
from .part_support import NO_PARTS, PartSupport, check_parts, place_tool_parts
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .transport import HttpTransport, Signer

_LEARNING = threading.Lock()  # capabilities are rarely learned: one lock for every model


class HttpChatModel(ABC):
    """A chat model at ``url`` reached through one :class:`HttpTransport` (see the module doc).

    ``who`` names the provider in errors; ``headers`` are sent with every
    request (``Content-Type: application/json`` is always among them);
    ``provider``, ``native_output``, ``context_size``, ``token_counting`` and
    ``parts`` make its :class:`ModelCapabilities`. Thread-safe.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        who: str,
        provider: str,
        api_key: str | None,
        headers: Mapping[str, str],
        request_timeout: float,
        max_retries: int,
        retry_policy: RetryPolicy | None,
        default_sampling: SamplingParams,
        runtime: Runtime | None,
        native_output: bool = True,
        context_size: int | None = None,
        token_counting: bool = False,
        server_tools: Sequence[Mapping[str, Any]] = (),
        parts: PartSupport = NO_PARTS,
    ) -> None:
        self._url = url
        self._who = who
        self._server_tools = [dict(t) for t in server_tools]
        self._stream_url = url  # where streamed requests go, when the dialect has another
        self._shown = display_url(url)
        self._model = model
        self._api_key = api_key or None
        self._defaults = default_sampling
        self._runtime = runtime
        self._headers = {"Content-Type": "application/json", **headers}
        self._signer: Signer | None = None  # signs each attempt (AWS SigV4)
        self._http = HttpTransport(
            who=who,
            shown=self._shown,
            timeout=request_timeout,
            policy=retry_policy or RetryPolicy(max_retries=max_retries),
            runtime=runtime,
            secret=self._api_key,
        )
        self._capabilities = ModelCapabilities(
            provider=provider,
            model=model,
            server_url=url,
            native_output=native_output,
            context_size=context_size,
            token_counting=token_counting,
            parts=parts,
        )

    def _offered_server_tools(self) -> list[dict[str, Any]]:
        """The provider's own tools to offer, after the request's: fresh copies a body may edit."""
        return [dict(t) for t in self._server_tools]

    @property
    def capabilities(self) -> ModelCapabilities:
        """What this model is and can do (what the server said of itself, once it said it)."""
        return self._capabilities

    def _learned(self, *, context_size: int | None = None, token_counting: bool = False) -> None:
        """Update the capabilities with what the server said: its window, or exact counting."""
        known = self._capabilities
        if (context_size is None or context_size == known.context_size) and (
            not token_counting or known.token_counting
        ):
            return
        with _LEARNING:
            known = self._capabilities
            self._capabilities = replace(
                known,
                context_size=context_size or known.context_size,
                token_counting=token_counting or known.token_counting,
            )

    @property
    def model(self) -> str:
        """The model asked for."""
        return self._model

    @property
    def default_sampling(self) -> SamplingParams:
        """The sampling every request starts from (its own fields override these)."""
        return self._defaults

    @property
    def url(self) -> str:
        """Where chat requests go."""
        return self._url

    @property
    def runtime(self) -> Runtime | None:
        """The runtime given at construction (``None``: the process default is used)."""
        return self._runtime

    def cancel(self) -> None:
        """Abort every request of this client in flight, from any thread."""
        self._http.cancel()

    def _post_json(
        self,
        url: str,
        body: dict[str, Any],
        cancel: CancellationToken | None,
        span: ChatObservation = NO_CHAT,
    ) -> Any:
        """POST ``body`` and return the whole JSON reply; an error it reports is raised."""
        headers = {**self._headers, "Accept": "application/json"}
        parsed, data, status = self._http.post_json(url, body, headers, cancel, span, self._signer)
        if self._reports_error(parsed):
            raise self._http.json_error(parsed, data, status)
        return parsed

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """Send ``request`` and return the whole reply."""
        body = self._request_body(self._with_parts(request), stream=False)
        with get_observer().on_chat_start(self, request, body) as span:
            return span.finish(self._parse(self._post_json(self._url, body, cancel, span)))

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """Send ``request`` streaming; yield events as they arrive, ``Finished`` last.

        Closing the generator early closes the HTTP response.
        """
        body = self._request_body(self._with_parts(request), stream=True)
        headers = {**self._headers, "Accept": self._accept}
        with get_observer().on_chat_start(self, request, body) as span:
            yield from span.watch(
                self._http.post_stream(
                    self._stream_url, body, headers, cancel, self._decode, span, self._signer
                )
            )

    def _with_parts(self, request: LlmRequest) -> LlmRequest:
        """``request`` with its parts checked, and tool results' parts placed where they go.

        PartError names the first part of a user message the provider would not
        take; tool results' parts are placed where it takes them, or noted as not
        sent (:func:`~agent_smith.llm.part_support.place_tool_parts`).
        """
        support = self._capabilities.parts
        check_parts(request.messages, support, self._who)
        messages = place_tool_parts(request.messages, support, self._who)
        if messages is request.messages:
            return request
        return replace(request, messages=tuple(messages))

    # -- the dialect: what each provider defines -----------------------------

    #: The media type of a streamed reply.
    _accept = "text/event-stream"

    @abstractmethod
    def _request_body(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        """The dialect's request body for ``request``."""

    @abstractmethod
    def _parse(self, parsed: Any) -> LlmResponse:
        """The reply in a whole JSON body."""

    @abstractmethod
    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """The events of a streamed body's chunks."""

    def _reports_error(self, parsed: Any) -> bool:
        """Whether a 2xx JSON reply is an error report instead of a reply."""
        return False
