"""One request of a client, end to end: cache, span, reconnect policy, input loop.

Every request of an :class:`~agent_smith.mcp.client.McpClient` goes through
:meth:`RequestPath.request`: a fresh cached list or read result
(:mod:`.result_cache`) is returned as is; otherwise the request is sent,
inside its MCP client span (:mod:`agent_smith.observer`), on the current
connection under the policy of seed §11.2 (:mod:`.connection` keeps the
connection): an operation other than ``tools/call`` that failed because the
connection broke, or because the server forgot the session, is sent once
more after reconnecting or re-initialising; a ``tools/call`` already written
is never sent again. At 2026-07-28 each attempt carries the client's
``_meta``, and an answer that needs input is completed by
:mod:`.input_required` with the client's handlers. While a request is in
flight, the clock of the tool call that made it follows the client's clock:
a person asked by the client's elicitation handler stops that call's
timeout too (:mod:`agent_smith.tools.person_wait`).
"""

from __future__ import annotations

from typing import Any

from ..base.cancellation import CancellationToken
from ..errors import TransportError
from ..observer import McpObservation, get_observer
from ..tools.person_wait import WaitClock, current_clock
from .config import ServerConfig
from .connection import Connection, ConnectionKeeper
from .generation import stamped
from .input_required import complete
from .jsonrpc import PendingRequest, RequestHandler
from .result_cache import CACHEABLE, ResultCache
from .transport import StaleSession


class RequestPath:
    """Sends the requests of one client (see the module docstring).

    ``meta`` is its 2026-07-28 ``_meta``, ``handlers`` answer input requests,
    ``cache`` keeps list and read results.
    """

    def __init__(
        self,
        config: ServerConfig,
        keeper: ConnectionKeeper,
        meta: dict[str, Any],
        *,
        handlers: dict[str, RequestHandler],
        cache: ResultCache,
        clock: WaitClock,
    ) -> None:
        self._config = config
        self._clock = clock
        self._keeper = keeper
        self._meta = meta
        self._handlers = handlers
        self._cache = cache

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        replay: bool = True,
        conn: Connection | None = None,
    ) -> dict[str, Any]:
        """``method``'s result (see the module docstring); ``conn`` pins a connection being opened.

        ``replay=False`` (``tools/call``) never sends the request twice.
        """
        cacheable = method in CACHEABLE
        if cacheable:
            cached = self._cache.get(method, params)
            if cached is not None:
                return cached
        with (
            self._clock.followed_by(current_clock()),
            get_observer().on_mcp_request(self._config, method, params) as span,
        ):
            params = span.propagate(params)
            result = self._send(method, params, span, timeout, cancel, replay=replay, conn=conn)
            if "resultType" in result:  # 2026-07-28: maybe input required (one place for it)

                def retry(again: dict[str, Any]) -> dict[str, Any]:
                    return self._send(
                        method, again, span, timeout, cancel, replay=replay, conn=conn
                    )

                result = complete(
                    method,
                    params,
                    result,
                    retry=retry,
                    handlers=self._handlers,
                    server=self._config.alias,
                    cancel=cancel,
                )
            if cacheable:
                self._cache.put(method, params, result)
            return span.finish(result)

    def _send(
        self,
        method: str,
        params: dict[str, Any] | None,
        span: McpObservation,
        timeout: float | None,
        cancel: CancellationToken | None,
        *,
        replay: bool,
        conn: Connection | None,
    ) -> dict[str, Any]:
        """Send ``method`` and wait for its result (``conn`` pins a connection being opened).

        A pinned connection's requests re-initialise a stale session but never reconnect.
        """
        budget = self._config.request_timeout if timeout is None else max(timeout, 0.0)
        pinned = conn is not None
        conn = conn if conn is not None else self._keeper.live()
        retried = False
        while True:
            epoch = conn.epoch
            sent = stamped(params, self._meta) if conn.modern else params
            try:
                pending = conn.rpc.start(method, sent, timeout=budget)
            except StaleSession as err:
                self._keeper.reinitialise(conn, epoch)
                if not replay or retried:
                    raise self._keeper.error(method, "the server dropped the session") from err
                retried = True
                continue
            except TransportError:
                if not replay or retried or pinned:
                    raise
                retried = True
                conn = self._keeper.live()
                continue
            span.sent(pending.id, conn.protocol_version)
            try:
                return _wait(conn, pending, budget, cancel)
            except TransportError:
                if not replay or retried or pinned or not self._config.reconnect:
                    raise
                retried = True
                conn = self._keeper.live()


def _wait(
    conn: Connection, pending: PendingRequest, timeout: float, cancel: CancellationToken | None
) -> dict[str, Any]:
    if cancel is None:
        return conn.rpc.wait(pending, timeout)
    unregister = cancel.on_cancel(lambda: conn.rpc.cancel(pending, "cancelled by the caller"))
    try:
        return conn.rpc.wait(pending, timeout)
    finally:
        unregister()
