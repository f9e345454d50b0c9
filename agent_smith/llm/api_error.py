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
# Anthropic's documented error types, for an error event inside a 200 stream.
_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def error_from_body(
    status: int,
    text: str,
    *,
    endpoint: str,
    secret: str | None = None,
    who: str = "LLM server",
    kind: str = "",
) -> LlmApiError:
    """The error for an HTTP ``status`` reply whose body is ``text``.

    ``who`` names the provider (``"LLM server"``, ``"Anthropic API"``), ``endpoint`` its URL;
    ``kind`` is an error type the headers gave (AWS's ``x-amzn-ErrorType``).
    """
    try:
        obj: Any = json_input.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        return error_from_json(
            obj, endpoint=endpoint, status=status, excerpt=text, secret=secret, who=who, kind=kind
        )
    detail = _one_line(text, secret)
    suffix = f": {detail}" if detail else ""
    named = f" ({_one_line(kind, secret)})" if kind else ""
    return LlmApiError(
        f"{who} {endpoint} answered HTTP {status}{named}{suffix}",
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
    who: str = "LLM server",
    kind: str = "",
) -> LlmApiError:
    """The error for a JSON error object (``status`` None: it came in a stream frame).

    Anthropic's ``overloaded_error`` in a stream counts as HTTP 529, its other
    error types by their documented statuses; Google's ``status`` names the
    error's kind and its ``details`` are summed up.
    """
    error = obj.get("error", obj)
    code: object = None
    details = ""
    prompt: object = None
    context: object = None
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or ""
        kind = error.get("type") or error.get("status") or kind  # Google names it status
        code = error.get("code")
        prompt, context = error.get("n_prompt_tokens"), error.get("n_ctx")
        if isinstance(prompt, int) and isinstance(context, int):
            details = f" (prompt: {prompt} tokens, context: {context} tokens)"
        elif isinstance(error.get("details"), list):
            details = _google_details(error["details"])
    else:
        message = error
    if status is None:
        if isinstance(code, int) and 400 <= code <= 599:
            status = code
        else:
            status = _STATUS_OF_TYPE.get(kind, 200) if isinstance(kind, str) else 200
        where = f"{who} {endpoint} sent an error in its stream"
    else:
        where = f"{who} {endpoint} answered HTTP {status}"
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


def _google_details(details: list[Any]) -> str:
    """Google's error ``details``: each entry's ``reason``, else its type's last name."""
    named = []
    for entry in details:
        if isinstance(entry, dict):
            name = entry.get("reason") or str(entry.get("@type", "")).rsplit(".", 1)[-1]
            if isinstance(name, str) and name:
                named.append(name)
    return f" (details: {', '.join(named)})" if named else ""


def excerpt_of(text: str, secret: str | None = None) -> str:
    """``text`` redacted (JSON secret fields, the API key) and cut to EXCERPT_LIMIT."""
    return _hide_and_cut(str(redact(text)), secret, EXCERPT_LIMIT)


def _one_line(text: str, secret: str | None) -> str:
    return _hide_and_cut(" ".join(str(text).split()), secret, _MESSAGE_LIMIT)


def _hide_and_cut(text: str, secret: str | None, limit: int) -> str:
    if secret:
        text = text.replace(secret, REDACTED)
    return text if len(text) <= limit else text[:limit] + "…"
