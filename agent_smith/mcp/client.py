"""McpClient: a blocking MCP client for one server, safe to share between threads.

``McpClient.connect(config)`` spawns (stdio) or reaches (Streamable HTTP) the
server, runs the ``initialize`` handshake, lists its tools, resources and
prompts, and returns the connected client. Calls may come from many threads
at once. Hook events, ``list_changed`` refreshes and user handlers for
server requests (elicitation, sampling, roots) run on one event thread per
client, in arrival order, so neither a slow hook nor a slow handler holds up
the frames of other calls.

Reconnect policy (seed §11.2): when the connection is lost, the next operation
reconnects once (RECONNECTING, then CONNECTED or RECONNECT_FAILED). An
operation other than ``tools/call`` that failed because the connection broke
is retried once on the new connection; a ``tools/call`` already written is
never sent again.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..cancellation import CancellationToken
from ..errors import AgentSmithError, ConfigError, McpError, McpProtocolError, TransportError
from ..logs import invoke_hook
from ..messages import AssistantMessage, Message, UserMessage
from ..tools.base import ToolResult, ToolSchema
from .catalog import (
    PromptInfo,
    ResourceInfo,
    ServerInfo,
    parse_prompt,
    parse_resource,
    parse_tool,
)
from .config import SUPPORTED_PROTOCOL_VERSIONS, ServerConfig
from .content import content_text
from .events import LifecycleEvent, LifecycleKind, McpEvent, McpHook, Notification
from .jsonrpc import JsonRpcPeer, PendingRequest, RequestHandler
from .transport import StaleSession, Transport

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)

CLIENT_NAME = "agent_smith"


class McpClient:
    """A connected MCP client (see the module docstring). Use :meth:`connect`."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        hook: McpHook | None = None,
        runtime: Runtime | None = None,
        elicitation_handler: RequestHandler | None = None,
        sampling_handler: RequestHandler | None = None,
        roots_handler: RequestHandler | None = None,
    ) -> None:
        if not isinstance(config, ServerConfig):
            raise ConfigError("McpClient needs a ServerConfig")
        self.config = config
        self._hook = hook
        self._runtime = runtime
        self._handlers: dict[str, RequestHandler] = {
            "elicitation/create": elicitation_handler or _decline,
        }
        if sampling_handler is not None:
            self._handlers["sampling/createMessage"] = sampling_handler
        if roots_handler is not None:
            self._handlers["roots/list"] = roots_handler
        self._capabilities: dict[str, Any] = {}
        if elicitation_handler is not None:
            self._capabilities["elicitation"] = {}
        if sampling_handler is not None:
            self._capabilities["sampling"] = {}
        if roots_handler is not None:
            self._capabilities["roots"] = {"listChanged": False}
        self._lock = threading.RLock()  # guards the connection: swaps and handshakes
        self._conn: _Connection | None = None
        self._closed = False
        self._events = _EventThread(f"agent_smith-mcp-events-{config.alias}")
        self._tools: list[ToolSchema] = []
        self._resources: list[ResourceInfo] = []
        self._prompts: list[PromptInfo] = []

    @classmethod
    def connect(
        cls,
        config: ServerConfig,
        *,
        hook: McpHook | None = None,
        runtime: Runtime | None = None,
        elicitation_handler: RequestHandler | None = None,
        sampling_handler: RequestHandler | None = None,
        roots_handler: RequestHandler | None = None,
    ) -> McpClient:
        """Connect, initialise and list the server's capabilities; block until done.

        Handlers answer server requests: each takes the request's ``params``
        and returns its ``result`` (spec shapes). Without one, sampling and
        roots get "method not found" and elicitation is declined.
        Raises TransportError, McpError, McpProtocolError or AgentTimeoutError.
        """
        client = cls(
            config,
            hook=hook,
            runtime=runtime,
            elicitation_handler=elicitation_handler,
            sampling_handler=sampling_handler,
            roots_handler=roots_handler,
        )
        try:
            with client._lock:
                client._conn = client._open()
        except BaseException:
            client.close()
            raise
        client._emit(LifecycleEvent(LifecycleKind.CONNECTED, config.alias, "connected"))
        return client

    # -- what the server offers ---------------------------------------------

    @property
    def alias(self) -> str:
        return self.config.alias

    @property
    def tools(self) -> list[ToolSchema]:
        """The server's tools after allow/deny filtering (input schemas untouched)."""
        return list(self._tools)

    @property
    def resources(self) -> list[ResourceInfo]:
        return list(self._resources)

    @property
    def prompts(self) -> list[PromptInfo]:
        return list(self._prompts)

    @property
    def server_info(self) -> ServerInfo:
        return self._current().server_info

    @property
    def protocol_version(self) -> str:
        """The protocol revision the server chose."""
        return self._current().protocol_version

    def set_hook(self, hook: McpHook | None) -> None:
        """Send later notifications and lifecycle events to ``hook`` (on the event thread)."""
        self._hook = hook

    # -- operations -----------------------------------------------------------

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        progress_token: str | int | None = None,
    ) -> ToolResult:
        """Call tool ``name``; a result with ``isError`` comes back with ``is_error``.

        On ``timeout`` (default: the config's request timeout) the server is
        sent ``notifications/cancelled`` and AgentTimeoutError is raised; the
        same happens, with CancelledError, when ``cancel`` fires. With a
        ``progress_token`` the server may send ``notifications/progress``
        (delivered to the hook).
        """
        if not self.config.allows(name):
            raise McpError(
                f"tool {name!r} of MCP server {self.alias!r} is not allowed by its config",
                server=self.alias,
            )
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        result = self._call("tools/call", params, timeout=timeout, cancel=cancel, replay=False)
        structured = result.get("structuredContent")
        return ToolResult(
            content=content_text(result.get("content")),
            is_error=result.get("isError") is True,
            structured=structured if isinstance(structured, dict) else None,
        )

    def read_resource(self, uri: str, *, timeout: float | None = None) -> str:
        """The resource's text contents joined; binary contents are described."""
        result = self._call("resources/read", {"uri": uri}, timeout=timeout)
        return content_text(result.get("contents"))

    def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> list[Message]:
        """Render prompt ``name``; raises McpError if a message is not text."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result = self._call("prompts/get", params, timeout=timeout)
        items = result.get("messages")
        if not isinstance(items, list):
            raise McpProtocolError(
                f"MCP server {self.alias!r}: prompts/get result has no list of messages",
                server=self.alias,
            )
        messages: list[Message] = []
        for item in items:
            content = item.get("content") if isinstance(item, dict) else None
            if not isinstance(content, dict) or content.get("type") != "text":
                kind = content.get("type") if isinstance(content, dict) else "missing"
                raise McpError(
                    f"prompt {name!r} of MCP server {self.alias!r} has {kind} content,"
                    " which cannot become a text message",
                    server=self.alias,
                )
            text = str(content.get("text", ""))
            role = item.get("role")
            message = AssistantMessage(content=text) if role == "assistant" else UserMessage(text)
            messages.append(message)
        return messages

    def refresh_tools(self) -> list[ToolSchema]:
        """List the server's tools again (done automatically on ``list_changed``)."""
        self._tools = self._list_tools()
        return self.tools

    def close(self) -> None:
        """Fail pending calls, shut the connection down, join every thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.shutdown(self._error("close", "the client was closed"))
            self._emit(LifecycleEvent(LifecycleKind.DISCONNECTED, self.alias, "closed"))
        self._events.close()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"McpClient(alias={self.alias!r})"

    # -- requests, reconnect and stale sessions -------------------------------

    def _call(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        replay: bool = True,
        conn: _Connection | None = None,
    ) -> dict[str, Any]:
        """One request with the reconnect / stale-session policy of the module docstring.

        Every request goes through here. ``conn`` pins a connection being
        opened (its requests re-initialise a stale session but never reconnect).
        """
        budget = self.config.request_timeout if timeout is None else max(timeout, 0.0)
        pinned = conn is not None
        conn = conn if conn is not None else self._live_connection()
        retried = False
        while True:
            epoch = conn.epoch
            try:
                pending = conn.rpc.start(method, params, timeout=budget)
            except StaleSession as err:
                self._reinitialise(conn, epoch)
                if not replay or retried:
                    raise self._error(method, "the server dropped the session") from err
                retried = True
                continue
            except TransportError:
                if not replay or retried or pinned:
                    raise
                retried = True
                conn = self._live_connection()
                continue
            try:
                return self._wait(conn, pending, budget, cancel)
            except TransportError:
                if not replay or retried or pinned or not self.config.reconnect:
                    raise
                retried = True
                conn = self._live_connection()

    def _wait(
        self,
        conn: _Connection,
        pending: PendingRequest,
        timeout: float,
        cancel: CancellationToken | None,
    ) -> dict[str, Any]:
        if cancel is None:
            return conn.rpc.wait(pending, timeout)
        unregister = cancel.on_cancel(lambda: conn.rpc.cancel(pending, "cancelled by the caller"))
        try:
            return conn.rpc.wait(pending, timeout)
        finally:
            unregister()

    def _current(self) -> _Connection:
        conn = self._conn
        if conn is None:
            raise self._error("connect", "not connected")
        return conn

    def _live_connection(self) -> _Connection:
        """The live connection, reconnecting once if it was lost."""
        with self._lock:
            if self._closed:
                raise self._error("request", "the client is closed")
            old = self._conn
            if old is not None and old.alive:
                return old
            if not self.config.reconnect:
                raise self._error("request", "the connection was lost (reconnect is off)")
            self._emit(LifecycleEvent(LifecycleKind.RECONNECTING, self.alias, "reconnecting"))
            self._conn = None
            if old is not None:
                old.shutdown(self._error("reconnect", "the connection was lost"))
            try:
                self._conn = self._open()
            except AgentSmithError as err:
                self._emit(LifecycleEvent(LifecycleKind.RECONNECT_FAILED, self.alias, str(err)))
                raise self._error("reconnect", f"reconnecting failed: {err}") from err
            self._emit(LifecycleEvent(LifecycleKind.CONNECTED, self.alias, "reconnected"))
            return self._conn

    def _reinitialise(self, conn: _Connection, epoch: int) -> None:
        """Run the handshake again after a stale session (once per stale epoch)."""
        with self._lock:
            if conn.epoch != epoch:
                return  # another thread already did it
            log.info("MCP server %s dropped the session; initialising again", self.alias)
            try:
                self._handshake(conn)
            except StaleSession as err:  # ``initialized`` found the new session gone too
                raise self._error("initialize", "the server dropped the new session") from err
            conn.epoch += 1

    # -- opening a connection ---------------------------------------------------

    def _open(self) -> _Connection:
        """Start a transport, handshake, and list everything (caller holds the lock)."""
        transport = self._make_transport()
        conn = _Connection(transport)
        conn.rpc = JsonRpcPeer(
            self.alias,
            transport.send,
            on_notification=self._on_notification,
            handlers=self._handlers,
            dispatch=self._events.submit,
        )
        try:
            transport.start(conn.rpc.handle_frame, lambda err: self._lost(conn, err))
            self._handshake(conn)
            self._tools = self._list_tools(conn)
            self._resources = [parse_resource(r) for r in self._optional_list("resources", conn)]
            self._prompts = [parse_prompt(p) for p in self._optional_list("prompts", conn)]
        except StaleSession as err:
            conn.shutdown(self._error("connect", "session refused"))
            raise self._error("connect", "the server refused the new session") from err
        except BaseException:
            conn.shutdown(self._error("connect", "connecting failed"))
            raise
        conn.established = True
        return conn

    def _make_transport(self) -> Transport:
        if self.config.command:
            from .stdio import StdioTransport

            return StdioTransport(self.config)
        from ..runtime import default_runtime
        from .http import StreamableHttpTransport  # type: ignore[import-not-found,unused-ignore]

        transport: Transport = StreamableHttpTransport(
            self.config, self._runtime or default_runtime()
        )
        return transport

    def _handshake(self, conn: _Connection) -> None:
        from .. import __version__

        result = conn.rpc.request(
            "initialize",
            {
                "protocolVersion": self.config.protocol_version,
                "capabilities": self._capabilities,
                "clientInfo": {"name": CLIENT_NAME, "version": __version__},
            },
            timeout=self.config.request_timeout,
        )
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise McpProtocolError(
                f"MCP server {self.alias!r} chose protocol revision {version!r}; this client "
                f"speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}",
                server=self.alias,
            )
        info = result.get("serverInfo")
        if not isinstance(info, dict):
            info = {}
        conn.server_info = ServerInfo(
            name=str(info.get("name", "")), version=str(info.get("version", "")), raw=result
        )
        caps = result.get("capabilities")
        conn.capabilities = caps if isinstance(caps, dict) else {}
        conn.protocol_version = str(version)
        conn.rpc.notify("notifications/initialized")
        conn.transport.negotiated(conn.protocol_version)
        log.info(
            "connected to MCP server %s (%s %s, protocol %s)",
            self.alias,
            conn.server_info.name,
            conn.server_info.version,
            version,
        )

    def _list_tools(self, conn: _Connection | None = None) -> list[ToolSchema]:
        try:
            raw = self._list_all("tools", conn)
        except McpError as err:
            if self.config.tools_required:
                raise
            log.warning("MCP server %s: tools/list failed (%s); no tools", self.alias, err)
            return []
        tools = [parse_tool(self.alias, item) for item in raw]
        return [t for t in tools if self.config.allows(t.name)]

    def _optional_list(self, kind: str, conn: _Connection | None = None) -> list[dict[str, Any]]:
        if kind not in (conn or self._current()).capabilities:
            return []
        try:
            return self._list_all(kind, conn)
        except McpError as err:
            log.warning("MCP server %s: %s/list failed (%s); empty", self.alias, kind, err)
            return []

    def _list_all(self, kind: str, conn: _Connection | None) -> list[dict[str, Any]]:
        """Every page of ``<kind>/list``, following ``nextCursor`` (each page via _call)."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params = {"cursor": cursor} if cursor is not None else None
            result = self._call(f"{kind}/list", params, conn=conn)
            page = result.get(kind)
            if not isinstance(page, list) or not all(isinstance(i, dict) for i in page):
                raise McpProtocolError(
                    f"MCP server {self.alias!r}: {kind}/list result has no list of {kind}",
                    server=self.alias,
                )
            items.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                return items
            if not isinstance(cursor, str) or cursor in seen:
                raise McpProtocolError(
                    f"MCP server {self.alias!r}: {kind}/list gave a bad or repeated nextCursor",
                    server=self.alias,
                )
            seen.add(cursor)

    # -- events ------------------------------------------------------------------

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Called by the reader: refreshes run on the event thread, then the hook sees it."""
        event = Notification(method, params)
        refresh = _REFRESHERS.get(method)
        if refresh is None:
            self._emit(event)
            return

        def job() -> None:
            try:
                refresh(self)
            except AgentSmithError as err:
                level = logging.DEBUG if self._closed else logging.WARNING
                log.log(level, "MCP server %s: refresh on %s failed: %s", self.alias, method, err)
            invoke_hook(self._hook, event, name="MCP event hook")

        self._events.submit(job)

    def _lost(self, conn: _Connection, error: Exception | None) -> None:
        """The transport ended on its own: fail its calls, tell the hook."""
        if not conn.mark_lost():
            return
        why = f"{error}" if error is not None else "the server closed the connection"
        log.warning("MCP server %s disconnected: %s", self.alias, why)
        conn.rpc.fail_all(self._error("receive", f"connection lost: {why}"))
        if conn.established and not self._closed:
            self._emit(LifecycleEvent(LifecycleKind.DISCONNECTED, self.alias, why))

    def _emit(self, event: McpEvent) -> None:
        self._events.submit(lambda: invoke_hook(self._hook, event, name="MCP event hook"))

    def _error(self, operation: str, what: str) -> TransportError:
        return TransportError(
            f"MCP server {self.alias!r}: {what}", operation=operation, endpoint_or_server=self.alias
        )

    def _refresh_resources(self) -> None:
        self._resources = [parse_resource(r) for r in self._optional_list("resources")]

    def _refresh_prompts(self) -> None:
        self._prompts = [parse_prompt(p) for p in self._optional_list("prompts")]


_REFRESHERS: dict[str, Callable[[McpClient], object]] = {
    "notifications/tools/list_changed": McpClient.refresh_tools,
    "notifications/resources/list_changed": McpClient._refresh_resources,
    "notifications/prompts/list_changed": McpClient._refresh_prompts,
}


class _Connection:
    """One transport plus its JSON-RPC peer and what its handshake learned."""

    rpc: JsonRpcPeer

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.epoch = 0  # bumped by every re-initialisation after a stale session
        self.protocol_version = ""
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
        self.mark_lost()
        self.rpc.fail_all(error)
        self.transport.close()


class _EventThread:
    """Runs jobs (hook calls, refreshes, request handlers) one at a time, in order."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def close(self, timeout: float = 10.0) -> None:
        self._jobs.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("%s is stuck in a hook or handler; not joined", self._thread.name)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                log.exception("MCP event job failed")


def _decline(params: dict[str, Any]) -> dict[str, Any]:
    """Elicitation without a handler: decline (there is no user to ask)."""
    return {"action": "decline"}
