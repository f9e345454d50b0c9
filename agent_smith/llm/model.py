"""The one model seam: what an agent needs of any chat model.

:class:`ChatModel` is the protocol every provider implements
(:class:`~agent_smith.LlmClient` for OpenAI-compatible chat completions, the
native Anthropic, Gemini, Ollama, Responses and Bedrock clients, the test
model, :class:`~agent_smith.llm.fallback.FallbackModel`). Requests and
replies stay provider-neutral (:class:`LlmRequest`, :class:`LlmResponse`,
the stream events); each provider converts them at its own edge.

What the layers above want to know of a model without knowing its class
(which provider it speaks, its model name and server for tracing, whether it
constrains output to a JSON schema natively) is its :class:`ModelCapabilities`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .part_support import NO_PARTS, PartSupport

if TYPE_CHECKING:
    from ..base.cancellation import CancellationToken
    from .events import StreamEvent
    from .request import LlmRequest, LlmResponse


@dataclass(frozen=True)
class ModelCapabilities:
    """What a chat model is and can do, as the layers above it need to know.

    ``provider`` is the provider's name as tracing reports it (the GenAI
    ``gen_ai.provider.name``: ``"openai"``, ``"anthropic"``, ``"gcp.gemini"``,
    ``"ollama"``, ``"aws.bedrock"``, ``"test"``); ``model`` the model asked
    for (``""``: the server's one model); ``server_url`` where requests go
    (no secrets; ``""`` for an in-process model). ``native_output``: a
    JSON-schema ``response_format`` is enforced by the provider itself (typed
    output's ``auto`` mode uses it; otherwise the ``final_result`` tool).
    ``context_size``: the context window in tokens, when known.
    ``token_counting``: the model offers an exact ``count_tokens(request)``.
    ``parts``: the images, documents and audio it takes, checked before
    each request (:class:`~agent_smith.llm.part_support.PartSupport`).
    """

    provider: str
    model: str = ""
    server_url: str = ""
    native_output: bool = True
    context_size: int | None = None
    token_counting: bool = False
    parts: PartSupport = NO_PARTS


@runtime_checkable
class ChatModel(Protocol):
    """Anything an agent can talk to: one request in, one reply (or its events) out.

    Implementations are thread-safe (many agents may share one), raise only
    :mod:`agent_smith.errors` types, and honour ``cancel`` from any thread.
    ``stream`` yields :mod:`~agent_smith.llm.events` as they arrive and ends
    with :class:`~agent_smith.llm.events.Finished` carrying the whole reply.
    """

    @property
    def capabilities(self) -> ModelCapabilities:
        """What this model is and can do."""
        ...

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """Send ``request`` and return the whole reply."""
        ...

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """Send ``request``; yield its events as they arrive, ``Finished`` last."""
        ...
