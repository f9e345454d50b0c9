"""One request on the current connection, with the reconnect and stale-session policy.

The policy of seed §11.2 (:mod:`.connection` keeps the connection): an
operation other than ``tools/call`` that failed because the connection broke,
or because the server forgot the session, is sent once more after
reconnecting or re-initialising; a ``tools/call`` already written is never
sent again. At 2026-07-28 each attempt carries the client's ``_meta``.
"""

from __future__ import annotations

from typing import Any

from ..cancellation import CancellationToken
from ..errors import TransportError
from ..observer import McpObservation
from .config import ServerConfig
from .connection import Connection, ConnectionKeeper
from .generation import stamped
from .jsonrpc import PendingRequest
from .transport import StaleSession


class RequestPath:
    """Sends requests for one client (``meta``: its 2026-07-28 ``_meta``)."""

    def __init__(
        self, config: ServerConfig, keeper: ConnectionKeeper, meta: dict[str, Any]
    ) -> None:
        self._config = config
        self._keeper = keeper
        self._meta = meta

    def send(
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
