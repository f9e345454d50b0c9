"""The 2026-07-28 ``InputRequiredResult`` loop: answer the server's questions, then ask again.

A 2026-07-28 server cannot send the client requests; when a ``tools/call``
(or ``prompts/get``, ``resources/read``) needs the user (elicitation), a
model (sampling) or the roots, it answers ``resultType: "input_required"``
with ``inputRequests`` (a map of key -> ``{method, params}``) and an opaque
``requestState``. The client answers every input request with its handlers
(on the calling thread), then sends the original request again with
``inputResponses`` (the same keys) and the ``requestState`` echoed unchanged,
under a fresh JSON-RPC id. A server may ask again, for several rounds; the
loop gives up after :data:`MAX_INPUT_ROUNDS`. An answer carrying only
``requestState`` (work in progress) is retried after a short backoff.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..base.cancellation import CancellationToken
from ..errors import McpError, McpProtocolError
from .generation import INPUT_REQUIRED, result_type
from .jsonrpc import RequestHandler

log = logging.getLogger(__name__)

#: Rounds of input requests one call may take before the client gives up.
MAX_INPUT_ROUNDS = 10
_BACKOFF_FIRST = 0.05
_BACKOFF_CAP = 0.25

#: Sends the original request again with these params; returns the server's result.
Retry = Callable[[dict[str, Any]], dict[str, Any]]


def complete(
    method: str,
    params: dict[str, Any] | None,
    result: dict[str, Any],
    *,
    retry: Retry,
    handlers: dict[str, RequestHandler],
    server: str,
    cancel: CancellationToken | None = None,
    max_rounds: int = MAX_INPUT_ROUNDS,
) -> dict[str, Any]:
    """Drive ``result`` (the first answer to ``method``) to a complete result.

    Raises McpError when the server asks for something no handler answers,
    or a handler fails; McpProtocolError after ``max_rounds`` rounds or for
    a malformed ``inputRequests``.
    """
    base = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
    delay = _BACKOFF_FIRST
    rounds = 0
    while result_type(result, method=method, server=server) == INPUT_REQUIRED:
        rounds += 1
        if rounds > max_rounds:
            raise McpProtocolError(
                f"MCP server {server!r} still wanted input for {method} after {max_rounds} rounds",
                server=server,
            )
        again = dict(base)
        requests = result.get("inputRequests")
        if requests:
            if not isinstance(requests, dict):
                raise McpProtocolError(
                    f"MCP server {server!r}: inputRequests of {method} is not an object",
                    server=server,
                )
            again["inputResponses"] = {
                key: _answer(key, request, handlers, server) for key, request in requests.items()
            }
            delay = _BACKOFF_FIRST
        else:
            # Only state: the server is still working. Wait a little (or until cancelled).
            if cancel is not None:
                cancel.raise_if_cancelled(method)
                cancel.wait(delay)
            else:
                threading.Event().wait(delay)
            delay = min(delay * 2, _BACKOFF_CAP)
        state = result.get("requestState")
        if state is not None:
            again["requestState"] = state  # echoed byte for byte: it is the server's, not ours
        result = retry(again)
    return result


def _answer(key: str, request: Any, handlers: dict[str, RequestHandler], server: str) -> Any:
    """One input request answered by the handler for its method."""
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        raise McpProtocolError(
            f"MCP server {server!r}: input request {key!r} has no method", server=server
        )
    method = request["method"]
    handler = handlers.get(method)
    if handler is None:
        raise McpError(
            f"MCP server {server!r} asked for {method}, which this client does not offer",
            server=server,
        )
    params = request.get("params")
    try:
        return handler(params if isinstance(params, dict) else {})
    except McpError:
        raise
    except Exception as err:
        log.warning("handler for %s (input request of %s) failed", method, server, exc_info=True)
        raise McpError(
            f"the client's {method} handler failed: {type(err).__name__}: {err}", server=server
        ) from err
