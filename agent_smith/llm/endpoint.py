"""Where a request goes: resolving the configured endpoint of any provider.

The endpoint is a base URL. A bare host (``http://127.0.0.1:8080``) posts to
``/v1/chat/completions``; a base that already ends in a path
(``https://api.openai.com/v1``, ``http://proxy/llm/openai``) posts to
``<base>/chat/completions``; a URL that already names ``.../chat/completions``
is used as it is. Trailing slashes do not matter; a query string is kept.
Other providers' paths (``/messages``, ``/responses``, ``/embeddings``)
resolve the same way through :func:`resolve_url`.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError

_SUFFIX = "/chat/completions"


def resolve_chat_url(endpoint: str) -> str:
    """The chat-completions URL for ``endpoint``; ConfigError if it is not an HTTP URL."""
    return resolve_url(endpoint, _SUFFIX)


def resolve_url(endpoint: str, suffix: str, *, prefix: str = "/v1") -> str:
    """``endpoint`` + ``suffix`` (a bare host: ``prefix`` + ``suffix``); ConfigError if not HTTP."""
    text = endpoint.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"LLM endpoint must be an http(s) URL such as http://127.0.0.1:8080, got {text!r}"
        )
    path = parts.path.rstrip("/")
    if not path:
        path = prefix + suffix
    elif not path.endswith(suffix):
        path += suffix
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def display_url(url: str) -> str:
    """``url`` without user info or query, safe to put in messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal needs its brackets back
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
