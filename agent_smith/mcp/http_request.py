"""One HTTP request to an MCP server, authorized, and the excerpt of an error answer.

Both HTTP transports (Streamable HTTP in :mod:`.http`, the legacy HTTP+SSE
transport in :mod:`.legacy_sse`) send through :func:`authorized_request`: it
adds the headers of the server's :class:`RequestAuth` (a fixed bearer token,
or the OAuth provider of :mod:`.auth`) and, when the server answers 401 or
403, lets the auth decide whether the request goes out once more (it got a
new token, or more scopes). The auth bounds how often that happens; a hard
cap here keeps a misbehaving one from looping.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import requests

from .._internal.text import truncate_utf8
from ..logs import redact, redact_headers
from ..observer import get_observer

log = logging.getLogger(__name__)

_EXCERPT_BYTES = 300
_MAX_TRIES = 8  # far above what any auth allows: only a buggy one gets here


class RequestAuth(Protocol):
    """How a transport authorizes its requests to one server."""

    def headers(self, method: str, url: str) -> dict[str, str]:
        """Headers to add to request ``method url`` (``Authorization``, ``DPoP``), possibly none."""
        ...

    def challenged(
        self, response: requests.Response, sent: Mapping[str, str], attempt: int
    ) -> bool:
        """The server answered 401 or 403 to a request sent with headers ``sent``.

        ``attempt`` counts the answers this request already had (0 for the
        first). True when the request should be sent again with fresh
        :meth:`headers`; False leaves the answer to the caller. May block (an
        authorization flow); raises :class:`~agent_smith.errors.McpAuthError`
        when authorizing failed.
        """
        ...


class BearerToken:
    """The fixed ``ServerConfig.bearer_token``: sent as is, never renewed."""

    def __init__(self, token: str | None) -> None:
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}

    def headers(self, method: str, url: str) -> dict[str, str]:
        return dict(self._headers)

    def challenged(
        self, response: requests.Response, sent: Mapping[str, str], attempt: int
    ) -> bool:
        return False

    def __repr__(self) -> str:
        return f"BearerToken({'<redacted>' if self._headers else None})"


def authorized_request(
    session: requests.Session,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    auth: RequestAuth,
    challenge: bool = True,
    authorizing: Callable[[bool], None] | None = None,
    **kwargs: Any,
) -> requests.Response:
    """``session.request(...)`` with ``auth``'s headers, sent again while ``auth`` asks for it.

    With ``challenge=False`` a 401 or 403 is returned as it is (for requests
    that must not start an authorization flow, like the GET listening
    stream). ``authorizing(True)`` is called before ``auth`` answers a
    challenge and ``authorizing(False)`` after.
    Raises what ``session.request`` and ``auth.challenged`` raise.
    """
    for attempt in range(_MAX_TRIES):
        sent = {**headers, **auth.headers(method, url)}
        get_observer().inject(sent)  # the current trace context, when the application traces
        log.debug("%s %s headers=%s", method, url, redact_headers(sent))
        response = session.request(method, url, headers=sent, **kwargs)
        if not challenge or response.status_code not in (401, 403):
            return response
        # Read the (small) error body now: the connection goes back to the pool
        # while the auth works, which may take as long as a user's consent.
        with contextlib.suppress(requests.RequestException, OSError):
            _ = response.content
        if authorizing is not None:
            authorizing(True)
        try:
            again = auth.challenged(response, sent, attempt)
        finally:
            if authorizing is not None:
                authorizing(False)
        if not again:
            return response
        response.close()
    return response


def error_excerpt(response: requests.Response) -> str:
    """A short, redacted, one-line excerpt of an error answer's body."""
    try:
        text = response.content[: 64 * 1024].decode("utf-8", errors="replace")
    except (requests.RequestException, OSError):
        return "<body unreadable>"
    shown = redact(text)
    return " ".join(truncate_utf8(str(shown), _EXCERPT_BYTES).split())


def rpc_error_answer(response: requests.Response, request_id: Any) -> dict[str, Any] | None:
    """The JSON-RPC error answer to ``request_id`` an HTTP error carries in its body, if any.

    A 2026-07-28 server answers some errors (an unsupported protocol version)
    with a 4xx whose JSON body is the request's error answer.
    """
    if request_id is None or not response.headers.get("Content-Type", "").startswith(
        "application/json"
    ):
        return None
    try:
        answer = json.loads(response.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, requests.RequestException, OSError):
        return None
    if isinstance(answer, dict) and "error" in answer and answer.get("id") == request_id:
        return answer
    return None
