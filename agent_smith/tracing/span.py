"""What every live span of ours shares: start under the current context, fail, end once.

Each span kind is a live subclass (a :class:`LiveHandle` over a
:class:`LiveSpan`) of the observation the seam declares
(:mod:`agent_smith.observer`), whose own methods do nothing. A live span starts under
the current context of the thread that made it. It is made current
(attached) only around synchronous work (a tool call, an MCP request), never
across a generator's ``yield``: a context attached there would leak into the
caller's code between events.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from ..errors import AgentSmithError, AgentTimeoutError, CancelledError, LlmApiError
from ..logs import redact
from ..observer import Observation
from .names import CANCELLED, ERROR_TYPE, SERVER_ADDRESS, SERVER_PORT, TIMEOUT
from .otel import api

if TYPE_CHECKING:
    from contextvars import Token
    from types import TracebackType

    from opentelemetry.context import Context
    from opentelemetry.trace import SpanKind, Tracer
    from opentelemetry.util.types import AttributeValue

    from ..observer import ChatClientFacts

Attributes = dict[str, "AttributeValue"]
L = TypeVar("L", bound="LiveHandle")

# Hosts whose provider the conventions name; anything else speaks the OpenAI
# chat-completions API, which is what gen_ai.provider.name "openai" describes.
_PROVIDERS = {
    "api.openai.com": "openai",
    "api.groq.com": "groq",
    "api.deepseek.com": "deepseek",
    "api.mistral.ai": "mistral_ai",
    "api.x.ai": "x_ai",
    "api.perplexity.ai": "perplexity",
    "generativelanguage.googleapis.com": "gcp.gemini",
}


class LiveSpan:
    """One started span and the context that has it as the current span.

    ``attach`` makes the span current in this thread between ``enter()`` and
    ``exit()``. ``content`` is whether to record prompts, replies and tool
    data (asked for and the span is sampled). Ending is idempotent and
    thread-safe: a tool's span may be ended by the dispatcher on timeout
    while its worker still runs.
    """

    __slots__ = ("_attach", "_ended", "_lock", "_token", "content", "context", "span")

    def __init__(
        self,
        tracer: Tracer,
        name: str,
        kind: SpanKind,
        attributes: Attributes,
        *,
        content: bool,
        attach: bool,
    ) -> None:
        otel = api()
        parent = otel.get_current()
        self.span = tracer.start_span(name, context=parent, kind=kind, attributes=attributes)
        self.context: Context = otel.set_span_in_context(self.span, parent)
        self.content = content and self.span.is_recording()
        self._attach = attach
        self._token: Token[Context] | None = None
        self._lock = threading.Lock()
        self._ended = False

    def enter(self) -> None:
        if self._attach:
            self._token = api().attach(self.context)

    def exit(self, error: BaseException | None) -> None:
        """Detach (if attached) and end; an exception (not GeneratorExit) marks an error."""
        if self._token is not None:
            api().detach(self._token)
            self._token = None
        if error is None or isinstance(error, GeneratorExit):
            self.end()
        else:
            self.end(error_type(error), self.describe(error))

    def set(self, attributes: Mapping[str, AttributeValue]) -> None:
        """Set attributes unless the span already ended."""
        with self._lock:
            if not self._ended:
                self.span.set_attributes(attributes)

    def end(self, error: str | None = None, description: str | None = None) -> None:
        """End the span (once), with ``error.type`` and an error status when ``error`` is set."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            if error is not None:
                otel = api()
                self.span.set_attribute(ERROR_TYPE, error)
                self.span.set_status(otel.Status(otel.StatusCode.ERROR, description))
            self.span.end()

    def describe(self, error: BaseException) -> str | None:
        """Status text: our errors' messages (secret-free by design), others' with content."""
        if isinstance(error, AgentSmithError):
            return str(error)
        return str(redact(str(error))) if self.content else None


class LiveHandle(Observation):
    """A handle over a live span: entering makes it current (if attached), leaving ends it."""

    __slots__ = ("_live",)

    def __init__(self, live: LiveSpan) -> None:
        self._live = live

    def __enter__(self: L) -> L:
        self._live.enter()
        self._entered()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._leaving(error)
        self._live.exit(error)

    def _entered(self) -> None:
        """Called once the span is current."""

    def _leaving(self, error: BaseException | None) -> None:
        """Called before the span ends (``error``: what left the block)."""


def error_type(error: BaseException) -> str:
    """The ``error.type`` of an exception (the list is in docs/tracing.md)."""
    if isinstance(error, AgentTimeoutError):
        return TIMEOUT
    if isinstance(error, CancelledError):
        return CANCELLED
    if isinstance(error, LlmApiError) and error.http_status:
        return str(error.http_status)
    code = rpc_code(error)
    return str(code) if code is not None else type(error).__name__


def rpc_code(error: BaseException | None) -> int | None:
    """The JSON-RPC error code an error carries (McpError, McpProtocolError), if any."""
    code = getattr(error, "rpc_code", None)
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def provider(url: str) -> str:
    """``gen_ai.provider.name`` for a chat-completions URL."""
    host = _server(url)[0]
    if host.endswith(".openai.azure.com"):
        return "azure.ai.openai"
    return _PROVIDERS.get(host, "openai")


def model_provider(name: str, url: str) -> str:
    """``gen_ai.provider.name`` of a model: its own name, or the URL's for OpenAI-compatible ones.

    An OpenAI-compatible client reaches many providers (Groq, Azure, ...)
    that only its URL tells apart.
    """
    return provider(url) if name in ("", "openai") else name


def client_provider(client: ChatClientFacts) -> str:
    """``gen_ai.provider.name`` of a chat client: its model's (a chat model names its
    provider in its capabilities), else its URL's."""
    known = getattr(client, "capabilities", None)
    return model_provider(known.provider if known is not None else "", client.url)


def server_attributes(url: str) -> Attributes:
    """``server.address`` and ``server.port`` of a URL (none for a URL without a host)."""
    host, port = _server(url)
    return {SERVER_ADDRESS: host, SERVER_PORT: port} if host else {}


@functools.lru_cache(maxsize=64)
def _server(url: str) -> tuple[str, int]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "", 0
    host = parts.hostname or ""
    return host, port if port is not None else (443 if parts.scheme == "https" else 80)
