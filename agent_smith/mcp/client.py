"""McpClient: a blocking MCP client for one server, safe to share between threads.

``McpClient.connect(config)`` spawns (stdio) or reaches (Streamable HTTP, or
the legacy HTTP+SSE transport; OAuth when ``config.auth`` is set) the
server, runs the ``initialize`` handshake, lists its tools, resources and
prompts (:mod:`.listing`, which also keeps them current), and returns the
connected client. Calls may come from many threads
at once. Hook events, ``list_changed`` refreshes and user handlers for
server requests (elicitation, sampling, roots) run on one event thread per
client (:mod:`.dispatcher`), in arrival order, so neither a slow hook nor a
slow handler holds up the frames of other calls.

Every request goes through :meth:`McpClient._call`, which applies the
reconnect policy of :mod:`.connection` (seed §11.2): an operation other than
``tools/call`` that failed because the connection broke, or because the
server forgot the session, is sent once more after reconnecting or
re-initialising; a ``tools/call`` already written is never sent again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._internal.closing import Closeable
from ..cancellation import CancellationToken
from ..errors import ConfigError, McpError, TransportError
from ..messages import Message
from ..observer import McpObservation, get_observer
from ..tools.base import ToolResult, ToolSchema
from .catalog import PromptInfo, ResourceInfo, ServerInfo
from .config import ServerConfig
from .connection import Connection, ConnectionKeeper
from .content import content_text, prompt_messages
from .dispatcher import EventDispatcher
from .events import McpHook, Notification
from .jsonrpc import JsonRpcPeer, PendingRequest, RequestHandler
from .listing import Offerings
from .transport import StaleSession, Transport

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .auth.provider import OAuthProvider


class McpClient(Closeable):
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
        self._events = EventDispatcher(config.alias, hook)
        self._offered = Offerings(config, call=self._call, current=lambda: self._keeper.current())
        self._keeper = ConnectionKeeper(
            config,
            capabilities=self._capabilities,
            make_transport=lambda: self._make_transport(),
            make_peer=self._make_peer,
            on_open=self._offered.list_everything,
            emit=self._events.emit,
        )
        self._oauth: OAuthProvider | None = None

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
            client._keeper.open()
        except BaseException:
            client.close()
            raise
        return client

    # -- what the server offers ---------------------------------------------

    @property
    def alias(self) -> str:
        return self.config.alias

    @property
    def tools(self) -> list[ToolSchema]:
        """The server's tools after allow/deny filtering (input schemas untouched)."""
        return list(self._offered.tools)

    @property
    def resources(self) -> list[ResourceInfo]:
        return list(self._offered.resources)

    @property
    def prompts(self) -> list[PromptInfo]:
        return list(self._offered.prompts)

    @property
    def server_info(self) -> ServerInfo:
        return self._keeper.current().server_info

    @property
    def protocol_version(self) -> str:
        """The protocol revision the server chose."""
        return self._keeper.current().protocol_version

    def set_hook(self, hook: McpHook | None) -> None:
        """Send later notifications and lifecycle events to ``hook`` (on the event thread)."""
        self._events.hook = hook

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
        return prompt_messages(result, prompt=name, server=self.alias)

    def refresh_tools(self) -> list[ToolSchema]:
        """List the server's tools again (done automatically on ``list_changed``)."""
        return list(self._offered.refresh_tools())

    def close(self) -> None:
        """Fail pending calls, shut the connection down, join every thread."""
        if self._keeper.close():
            self._events.close()
            if self._oauth is not None:
                self._oauth.close()

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
        conn: Connection | None = None,
    ) -> dict[str, Any]:
        """One request with the reconnect / stale-session policy of the module docstring.

        Every request goes through here, inside its MCP client span. ``conn``
        pins a connection being opened (its requests re-initialise a stale
        session but never reconnect).
        """
        with get_observer().on_mcp_request(self.config, method, params) as span:
            params = span.propagate(params)
            return span.finish(
                self._request(method, params, span, timeout, cancel, replay=replay, conn=conn)
            )

    def _request(
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
        budget = self.config.request_timeout if timeout is None else max(timeout, 0.0)
        pinned = conn is not None
        conn = conn if conn is not None else self._keeper.live()
        retried = False
        while True:
            epoch = conn.epoch
            try:
                pending = conn.rpc.start(method, params, timeout=budget)
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
                return self._wait(conn, pending, budget, cancel)
            except TransportError:
                if not replay or retried or pinned or not self.config.reconnect:
                    raise
                retried = True
                conn = self._keeper.live()

    def _wait(
        self,
        conn: Connection,
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

    # -- opening a connection ---------------------------------------------------

    def _make_peer(self, transport: Transport) -> JsonRpcPeer:
        return JsonRpcPeer(
            self.alias,
            transport.send,
            on_notification=self._on_notification,
            handlers=self._handlers,
            dispatch=self._events.submit,
        )

    def _make_transport(self) -> Transport:
        from ..runtime import default_runtime
        from .transports import make_transport, oauth_provider

        if self.config.command:
            return make_transport(self.config, None, auth=None)
        runtime = self._runtime or default_runtime()
        if self.config.auth is not None and self._oauth is None:
            # One per client, so a reconnect keeps its tokens.
            self._oauth = oauth_provider(self.config, runtime)
        return make_transport(self.config, runtime, auth=self._oauth)

    # -- events ------------------------------------------------------------------

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Called by the reader: refreshes run on the event thread, then the hook sees it."""
        event = Notification(method, params)
        refresh = self._offered.refresher(method)
        if refresh is None:
            self._events.emit(event)
        else:
            # A refresh cut short by close() is no news: log it quietly.
            closed = lambda: self._keeper.closed  # noqa: E731
            self._events.refresh_then_emit(refresh, event, quiet=closed)


def _decline(params: dict[str, Any]) -> dict[str, Any]:
    """Elicitation without a handler: decline (there is no user to ask)."""
    return {"action": "decline"}
