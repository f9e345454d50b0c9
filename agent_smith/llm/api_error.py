"""Turning an LLM server's error reply into a readable :class:`LlmApiError`.

Servers answer errors as ``{"error": {"message", "type", "code", ...}}``
(OpenAI, llama-server, vLLM), ``{"error": "text"}`` or ``{"message": ...}``;
the same object may arrive as an SSE frame in a streamed reply. The exception
message quotes the server's own message on one line; the body excerpt is
redacted (seed §16.4) and bounded.

A request longer than the model's context window is a
:class:`~agent_smith.errors.ContextOverflowError`, recognised by llama-server's
error type ``exceed_context_size_error`` (with ``n_prompt_tokens`` and
``n_ctx``), OpenAI's code ``context_length_exceeded``, or a message such as
vLLM's and OpenAI's "maximum context length is N tokens" (N is then the
window).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._internal import json_input
from ..errors import ContextOverflowError, LlmApiError
from ..logs import REDACTED, redact

#: Longest body excerpt kept on the exception.
EXCERPT_LIMIT = 500
_MESSAGE_LIMIT = 300
_OVERFLOW_KINDS = frozenset({"exceed_context_size_error", "context_length_exceeded"})
_OVERFLOW_TEXT = re.compile(
    r"maximum context length is (\d+)|exceeds the available context size|context length exceeded",
    re.IGNORECASE,
)


def error_from_body(
    status: int, text: str, *, endpoint: str, secret: str | None = None
) -> LlmApiError:
    """The error for an HTTP ``status`` reply whose body is ``text``."""
    try:
        obj: Any = json_input.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        return error_from_json(obj, endpoint=endpoint, status=status, excerpt=text, secret=secret)
    detail = _one_line(text, secret)
    suffix = f": {detail}" if detail else ""
    return LlmApiError(
        f"LLM server {endpoint} answered HTTP {status}{suffix}",
        http_status=status,
        body_excerpt=excerpt_of(text, secret),
    )


def error_from_json(
    obj: dict[str, Any],
    *,
    endpoint: str,
    status: int | None,
    excerpt: str,
    secret: str | None = None,
) -> LlmApiError:
    """The error for a JSON error object (``status`` None: it came in a stream frame)."""
    error = obj.get("error", obj)
    kind = ""
    code: object = None
    details = ""
    prompt: object = None
    context: object = None
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or ""
        kind = error.get("type") or ""
        code = error.get("code")
        prompt, context = error.get("n_prompt_tokens"), error.get("n_ctx")
        if isinstance(prompt, int) and isinstance(context, int):
            details = f" (prompt: {prompt} tokens, context: {context} tokens)"
    else:
        message = error
    if status is None:
        status = code if isinstance(code, int) and 400 <= code <= 599 else 200
        where = f"LLM server {endpoint} sent an error in its stream"
    else:
        where = f"LLM server {endpoint} answered HTTP {status}"
    if isinstance(kind, str) and kind:
        where += f" ({_one_line(kind, secret)})"
    text = _one_line(message if isinstance(message, str) else json.dumps(message), secret)
    summary = f"{where}: {text or 'no message'}{details}"
    found = _OVERFLOW_TEXT.search(text)
    if kind in _OVERFLOW_KINDS or code in _OVERFLOW_KINDS or found is not None:
        if not isinstance(context, int) and found is not None and found.group(1):
            context = int(found.group(1))
        return ContextOverflowError(
            summary,
            http_status=status,
            body_excerpt=excerpt_of(excerpt, secret),
            prompt_tokens=prompt if isinstance(prompt, int) else None,
            context_window=context if isinstance(context, int) else None,
        )
    return LlmApiError(summary, http_status=status, body_excerpt=excerpt_of(excerpt, secret))


def excerpt_of(text: str, secret: str | None = None) -> str:
    """``text`` redacted (JSON secret fields, the API key) and cut to EXCERPT_LIMIT."""
    return _hide_and_cut(str(redact(text)), secret, EXCERPT_LIMIT)


def _one_line(text: str, secret: str | None) -> str:
    return _hide_and_cut(" ".join(str(text).split()), secret, _MESSAGE_LIMIT)


def _hide_and_cut(text: str, secret: str | None, limit: int) -> str:
    if secret:
        text = text.replace(secret, REDACTED)
    return text if len(text) <= limit else text[:limit] + "…"
