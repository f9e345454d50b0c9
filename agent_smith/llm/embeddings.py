"""Embeddings: the smallest seam (texts in, vectors out) and its two HTTP implementations.

:class:`Embedder` is the protocol: ``embed(texts) -> list[list[float]]`` in
the order of ``texts``, plus ``dimensions`` when known. Chunking, indexes and
vector search are the application's choice, not this library's.

:class:`OpenAIEmbedder` posts to an OpenAI-compatible ``/v1/embeddings``
(OpenAI, vLLM, llama.cpp's server started with embeddings on);
:class:`OllamaEmbedder` to Ollama's ``/api/embed``. Both send ``batch_size``
texts per request, put the vectors back in input order (by ``index`` where
the server gives one: order is documented, not guaranteed under retries),
check that every text got exactly one vector, and share the chat clients'
HTTP path (retries, timeouts, cancellation, typed errors).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..base.cancellation import CancellationToken
from ..errors import ConfigError, ParseError
from ..runtime import Runtime
from .endpoint import display_url, resolve_url
from .ollama import ollama_host
from .retry import RetryPolicy
from .transport import HttpTransport

Vector = list[float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors, one per text, in order."""

    @property
    def dimensions(self) -> int | None:
        """The length of every vector, when known."""
        ...

    def embed(
        self, texts: Sequence[str], *, cancel: CancellationToken | None = None
    ) -> list[Vector]:
        """One vector per text, in the order of ``texts``."""
        ...


class _HttpEmbedder(ABC):
    """What both implementations share: batching, the transport, the checks."""

    _who = "embeddings server"
    _suffix = "/embeddings"
    _prefix = "/v1"

    def __init__(
        self,
        endpoint: str,
        model: str = "",
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        dimensions: int | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        if batch_size <= 0:
            raise ConfigError("batch_size must be positive")
        self._url = resolve_url(endpoint, self._suffix, prefix=self._prefix)
        self._shown = display_url(self._url)
        self._model = model
        self._batch = batch_size
        self._dimensions = dimensions  # asked for, else learned from the first reply
        self._ask_dimensions = dimensions
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._http = HttpTransport(
            who=self._who,
            shown=self._shown,
            timeout=request_timeout,
            policy=retry_policy or RetryPolicy(max_retries=max_retries),
            runtime=runtime,
            secret=api_key or None,
        )

    @property
    def dimensions(self) -> int | None:
        return self._dimensions

    def embed(
        self, texts: Sequence[str], *, cancel: CancellationToken | None = None
    ) -> list[Vector]:
        """One vector per text, in order; ``batch_size`` texts per request."""
        if isinstance(texts, str):
            raise ConfigError("embed() takes a sequence of texts, not one string")
        vectors: list[Vector] = []
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            reply = self._post(self._body(batch), cancel)
            found = self._vectors(reply, len(batch))
            if len(found) != len(batch):
                raise ParseError(
                    f"{self._who} {self._shown} returned {len(found)} vectors"
                    f" for {len(batch)} texts"
                )
            vectors.extend(found)
        if vectors and self._dimensions is None:
            self._dimensions = len(vectors[0])
        return vectors

    def cancel(self) -> None:
        """Abort every request in flight, from any thread."""
        self._http.cancel()

    def _body(self, batch: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"input": batch}
        if self._model:
            body["model"] = self._model
        if self._ask_dimensions is not None:
            body["dimensions"] = self._ask_dimensions
        return body

    @abstractmethod
    def _vectors(self, reply: dict[str, Any], count: int) -> list[Vector]:
        """The ``count`` vectors of one batch's reply, in input order."""

    def _post(self, body: dict[str, Any], cancel: CancellationToken | None) -> dict[str, Any]:
        parsed, data, status = self._http.post_json(self._url, body, dict(self._headers), cancel)
        if not isinstance(parsed, dict):
            raise ParseError(f"{self._who} {self._shown} reply is not a JSON object")
        if "error" in parsed:
            raise self._http.json_error(parsed, data, status)
        return parsed

    def _vector(self, value: object) -> Vector:
        if not isinstance(value, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value
        ):
            raise ParseError(f"{self._who} {self._shown}: an embedding must be an array of numbers")
        return [float(x) for x in value]


class OpenAIEmbedder(_HttpEmbedder):
    """OpenAI-compatible ``/v1/embeddings`` (see the module doc); ``dimensions`` is sent if set."""

    _who = "OpenAI-compatible embeddings server"

    def _vectors(self, reply: dict[str, Any], count: int) -> list[Vector]:
        data = reply.get("data")
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise ParseError(f"{self._who} {self._shown} reply has no data array")
        placed: dict[int, Vector] = {}
        for position, item in enumerate(data):
            index = item.get("index", position)
            if not isinstance(index, int) or not 0 <= index < count or index in placed:
                raise ParseError(f"{self._who} {self._shown}: bad or repeated index {index!r}")
            placed[index] = self._vector(item.get("embedding"))
        return [placed[i] for i in sorted(placed)]


class OllamaEmbedder(_HttpEmbedder):
    """Ollama's ``/api/embed`` (see the module doc).

    ``endpoint`` None: ``$OLLAMA_HOST`` (``host:port`` or a URL), else
    ``http://127.0.0.1:11434``.
    """

    _who = "Ollama"
    _suffix = "/embed"
    _prefix = "/api"

    def __init__(
        self,
        model: str,
        endpoint: str | None = None,
        *,
        batch_size: int = 64,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(
            endpoint or ollama_host(),
            model,
            api_key=None,
            batch_size=batch_size,
            dimensions=None,
            request_timeout=request_timeout,
            max_retries=max_retries,
            runtime=runtime,
            retry_policy=retry_policy,
        )

    def _vectors(self, reply: dict[str, Any], count: int) -> list[Vector]:
        found = reply.get("embeddings")
        if not isinstance(found, list):
            raise ParseError(f"{self._who} {self._shown} reply has no embeddings array")
        return [self._vector(v) for v in found]
