"""One connection to an MCP server, and the keeper that opens, re-initialises and reconnects it.

A :class:`Connection` is a transport, its JSON-RPC peer and what
negotiating its generation learned (:mod:`.negotiation`). The :class:`ConnectionKeeper` holds a
client's current connection and applies the policy of seed §11.2: when the
connection is lost, the next operation reconnects once (RECONNECTING, then
CONNECTED or RECONNECT_FAILED); when the server forgets the session, the
handshake runs again once on the same transport.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..errors import AgentSmithError, TransportError
from .catalog import ServerInfo
from .config import ServerConfig
from .events import LifecycleEvent, LifecycleKind, McpEvent
from .jsonrpc import JsonRpcPeer
from .negotiation import negotiate
from .transport import StaleSession, Transport

log = logging.getLogger(__name__)


class Connection:
    """One transport plus its JSON-RPC peer and what negotiating its generation learned."""

    rpc: JsonRpcPeer

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.epoch = 0  # bumped by every re-initialisation after a stale session
        self.protocol_version = ""
        self.modern = False  # True once the server is spoken to at 2026-07-28 (no session)
        self.server_info = ServerInfo("", "")
        self.capabilities: dict[str, Any] = {}
        self.established = False  # only a connection that was up can be "disconnected"
        self._alive = True
        self._lock = threading.Lock()

    @property
    def alive(self) -> bool:
        return self._alive

    def mark_lost(self) -> bool:
        """Mark the connection dead; True only for the first caller."""
        with self._lock:
            was_alive, self._alive = self._alive, False
            return was_alive

    def shutdown(self, error: AgentSmithError) -> None:
        """Fail its pending requests with ``error`` and close the transport."""
        self.mark_lost()
        self.rpc.fail_all(error)
        self.transport.close()


class ConnectionKeeper:
    """Owns a client's current connection (see the module docstring).

    ``make_transport`` and ``make_peer`` build a new connection's parts;
    ``on_open`` runs after its handshake (the client lists tools, resources
    and prompts there) and may raise to refuse it; ``emit`` receives the
    lifecycle events.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        capabilities: dict[str, Any],
        make_transport: Callable[[], Transport],
        make_peer: Callable[[Transport], JsonRpcPeer],
        on_open: Callable[[Connection], None],
        emit: Callable[[McpEvent], None],
    ) -> None:
        self.config = config
        self.alias = config.alias
        self._capabilities = capabilities
        self._make_transport = make_transport
        self._make_peer = make_peer
        self._on_open = on_open
        self._emit = emit
        self._lock = threading.RLock()  # guards the connection: swaps and handshakes
        self._conn: Connection | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def open(self) -> None:
        """Open the first connection; raises what opening raised."""
        with self._lock:
            self._conn = self._open()
        self._emit(LifecycleEvent(LifecycleKind.CONNECTED, self.alias, "connected"))

    def current(self) -> Connection:
        """The current connection, live or not; TransportError if there is none."""
        conn = self._conn
        if conn is None:
            raise self.error("connect", "not connected")
        return conn

    def live(self) -> Connection:
        """The live connection, reconnecting once if it was lost."""
        conn = self._conn
        if conn is not None and conn.alive and not self._closed:
            # Every request comes here: in the steady state it takes no lock, so
            # concurrent callers do not queue behind one another. A connection lost
            # just after this check fails the request as it would a moment later.
            return conn
        with self._lock:
            if self._closed:
                raise self.error("request", "the client is closed")
            old = self._conn
            if old is not None and old.alive:
                return old
            if not self.config.reconnect:
                raise self.error("request", "the connection was lost (reconnect is off)")
            self._emit(LifecycleEvent(LifecycleKind.RECONNECTING, self.alias, "reconnecting"))
            self._conn = None
            if old is not None:
                old.shutdown(self.error("reconnect", "the connection was lost"))
            try:
                self._conn = self._open()
            except AgentSmithError as err:
                self._emit(LifecycleEvent(LifecycleKind.RECONNECT_FAILED, self.alias, str(err)))
                raise self.error("reconnect", f"reconnecting failed: {err}") from err
            self._emit(LifecycleEvent(LifecycleKind.CONNECTED, self.alias, "reconnected"))
            return self._conn

    def reinitialise(self, conn: Connection, epoch: int) -> None:
        """Run the handshake again after a stale session (once per stale epoch)."""
        with self._lock:
            if conn.epoch != epoch:
                return  # another thread already did it
            log.info("MCP server %s dropped the session; initialising again", self.alias)
            try:
                self._handshake(conn)
            except StaleSession as err:  # ``initialized`` found the new session gone too
                raise self.error("initialize", "the server dropped the new session") from err
            conn.epoch += 1

    def close(self) -> bool:
        """Fail pending calls and shut the connection down; False if already closed."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.shutdown(self.error("close", "the client was closed"))
            self._emit(LifecycleEvent(LifecycleKind.DISCONNECTED, self.alias, "closed"))
        return True

    def error(self, operation: str, what: str) -> TransportError:
        """A TransportError about this server."""
        return TransportError(
            f"MCP server {self.alias!r}: {what}", operation=operation, endpoint_or_server=self.alias
        )

    # -- opening ---------------------------------------------------------------

    def _open(self) -> Connection:
        """Start a transport, handshake, run ``on_open`` (the caller holds the lock)."""
        transport = self._make_transport()
        conn = Connection(transport)
        conn.rpc = self._make_peer(transport)
        try:
            transport.start(conn.rpc.handle_frame, lambda err: self._lost(conn, err))
            self._handshake(conn)
            self._on_open(conn)
        except StaleSession as err:
            conn.shutdown(self.error("connect", "session refused"))
            raise self.error("connect", "the server refused the new session") from err
        except BaseException:
            conn.shutdown(self.error("connect", "connecting failed"))
            raise
        conn.established = True
        return conn

    def _handshake(self, conn: Connection) -> None:
        """Negotiate the generation (the one exchange not sent through the client's retry path)."""
        negotiate(conn, self.config, self._capabilities)

    def _lost(self, conn: Connection, error: Exception | None) -> None:
        """The transport ended on its own: fail its calls, tell the hook."""
        if not conn.mark_lost():
            return
        if isinstance(error, TransportError):
            failure = error  # the transport already said what happened, and where
        else:
            why = f"{error}" if error is not None else "the server closed the connection"
            failure = self.error("receive", f"connection lost: {why}")
        log.warning("%s", failure)
        conn.rpc.fail_all(failure)
        if conn.established and not self._closed:
            self._emit(LifecycleEvent(LifecycleKind.DISCONNECTED, self.alias, failure.message))
