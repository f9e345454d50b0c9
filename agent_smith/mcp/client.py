"""McpClient: a blocking MCP client for one server, safe to share between threads.

``McpClient.connect(config)`` spawns (stdio) or reaches (Streamable HTTP, or
the legacy HTTP+SSE transport; OAuth when ``config.auth`` is set) the
server, settles the protocol generation (:mod:`.negotiation`), lists its
tools, resources and prompts (:mod:`.listing`, which also keeps them
current), and returns the connected client. Calls may come from many
threads at once. Hook events and ``list_changed`` refreshes run on one event
thread per client (:mod:`.dispatcher`), in arrival order; user handlers for
server requests (elicitation, sampling, roots) each on a thread of their own
(:mod:`.handler_timeout`), so neither a slow hook nor a handler waiting for a
person holds up the frames of other calls or the events. While an
elicitation handler waits, the timeouts of the client's requests in flight
stop counting (:mod:`agent_smith.tools.person_wait`).

Every request goes through :mod:`.request_path`: the result cache, the
request's span, the reconnect policy and, at 2026-07-28, the loop that
answers a server needing input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from .._internal.closing import Closeable
from ..base.cancellation import CancellationToken
from ..errors import ConfigError, McpError
from ..messages import Message
from ..tools.base import ToolResult, ToolSchema
from ..tools.person_wait import WaitClock
from .catalog import PromptInfo, ResourceInfo, ServerInfo, ToolInfo
from .config import ServerConfig
from .connection import Connection, ConnectionKeeper
from .content import content_text, prompt_messages
from .dispatcher import EventDispatcher
from .events import McpHook, Notification
from .generation import request_meta
from .handler_timeout import HandlerThreads, server_request_handlers
from .jsonrpc import JsonRpcPeer, RequestHandler
from .listing import Offerings
from .negotiation import client_capabilities, client_info
from .progress import ProgressCallback, ProgressRoutes
from .request_path import RequestPath
from .result_cache import ResultCache
from .subscriptions import listen
from .tasks import McpTask, TaskTable
from .tool_call import tool_result
from .transport import Transport

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
        self._clock = WaitClock()  # held while a handler asks a person
        self._handlers, self._bound = server_request_handlers(
            config,
            elicitation=elicitation_handler,
            sampling=sampling_handler,
            roots=roots_handler,
            clock=self._clock,
        )
        self._handler_threads = HandlerThreads(config.alias)
        self._capabilities = client_capabilities(
            elicitation=elicitation_handler, sampling=sampling_handler, roots=roots_handler
        )
        # What every 2026-07-28 request carries in its ``_meta``.
        self._meta = request_meta(self._capabilities, client_info(), log_level=config.log_level)
        self._cache = ResultCache()
        self._progress = ProgressRoutes(config.alias)
        self._tasks = TaskTable(config.alias)
        self._events = EventDispatcher(config.alias, hook)
        self._keeper = ConnectionKeeper(
            config,
            capabilities=self._capabilities,
            make_transport=lambda: self._make_transport(),
            make_peer=self._make_peer,
            on_open=self._opened,
            emit=self._events.emit,
        )
        self._path = RequestPath(
            config,
            self._keeper,
            self._meta,
            handlers=self._handlers,
            cache=self._cache,
            clock=self._clock,
        )
        self._offered = Offerings(
            config, call=self._path.request, current=lambda: self._keeper.current()
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

    @overload
    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        progress_token: str | int | None = None,
        on_progress: ProgressCallback | None = None,
        task: Literal[False] = False,
        task_ttl: float | None = None,
    ) -> ToolResult: ...

    @overload
    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        progress_token: str | int | None = None,
        on_progress: ProgressCallback | None = None,
        task: Literal[True],
        task_ttl: float | None = None,
    ) -> McpTask: ...

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        cancel: CancellationToken | None = None,
        progress_token: str | int | None = None,
        on_progress: ProgressCallback | None = None,
        task: bool = False,
        task_ttl: float | None = None,
    ) -> ToolResult | McpTask:
        """Call tool ``name``; a result with ``isError`` comes back with ``is_error``.

        On ``timeout`` (default: the config's request timeout) the server is
        cancelled (``notifications/cancelled``, or at 2026-07-28 over HTTP by
        closing the answer's stream) and AgentTimeoutError is raised; the
        same happens, with CancelledError, when ``cancel`` fires. With
        ``on_progress`` (or a ``progress_token``) the server may send
        ``notifications/progress``: ``on_progress(progress, total, message)``
        hears them on the event thread; the hook too. A tool with an
        ``outputSchema`` must return structured content that fits it
        (McpError otherwise). A server asking for input on the way
        (2026-07-28) is answered by the client's handlers.

        With ``task=True`` the server runs the call as a task (kept
        ``task_ttl`` seconds, if given) and an :class:`McpTask` handle comes
        back at once (McpProtocolError if the server made no task).
        """
        if not self.config.allows(name):
            raise McpError(
                f"tool {name!r} of MCP server {self.alias!r} is not allowed by its config",
                server=self.alias,
            )
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if task:
            params["task"] = {} if task_ttl is None else {"ttl": round(task_ttl * 1000)}
        if on_progress is not None:
            progress_token = self._progress.add(on_progress, progress_token)
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        try:
            result = self._path.request(
                "tools/call", params, timeout=timeout, cancel=cancel, replay=False
            )
        finally:
            if on_progress is not None and progress_token is not None:
                self._progress.remove(progress_token)
        if task:
            return self._tasks.start(
                name,
                result,
                request=lambda method, params, *, timeout: self._path.request(
                    method, params, timeout=timeout
                ),
                to_result=lambda raw: self._tool_result(name, raw),
            )
        return self._tool_result(name, result)

    def tool_info(self, name: str) -> ToolInfo | None:
        """Title, icons, output schema and annotations of tool ``name`` (None if not listed)."""
        return self._offered.tool_infos.get(name)

    def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        *,
        context: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> list[str]:
        """Completions the server suggests for ``argument`` typed so far as ``value``.

        ``ref`` names what is completed: ``{"type": "ref/prompt", "name": ...}``
        or ``{"type": "ref/resource", "uri": <template>}``; ``context`` holds
        arguments already chosen. Raises McpError if the server offers no
        completion.
        """
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = self._path.request("completion/complete", params, timeout=timeout)
        completion = result.get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []

    def read_resource(self, uri: str, *, timeout: float | None = None) -> str:
        """The resource's text contents joined; binary contents are described."""
        result = self._path.request("resources/read", {"uri": uri}, timeout=timeout)
        return content_text(result.get("contents"))

    def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> list[Message]:
        """Render prompt ``name``; raises McpError if a message is not text."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result = self._path.request("prompts/get", params, timeout=timeout)
        return prompt_messages(result, prompt=name, server=self.alias)

    def refresh_tools(self) -> list[ToolSchema]:
        """List the server's tools again (done automatically on ``list_changed``)."""
        return list(self._offered.refresh_tools())

    def close(self) -> None:
        """Fail pending calls, shut the connection down, join every thread."""
        if self._keeper.close():
            self._handler_threads.close()
            self._events.close()
            if self._bound is not None:
                self._bound.close()
            if self._oauth is not None:
                self._oauth.close()

    def __repr__(self) -> str:
        return f"McpClient(alias={self.alias!r})"

    def _tool_result(self, name: str, result: dict[str, Any]) -> ToolResult:
        info = self._offered.tool_infos.get(name)
        schema = info.output_schema if info is not None else None
        return tool_result(result, tool=name, output_schema=schema, server=self.alias)

    # -- opening a connection ---------------------------------------------------

    def _make_peer(self, transport: Transport) -> JsonRpcPeer:
        return JsonRpcPeer(
            self.alias,
            transport.send,
            on_notification=self._on_notification,
            handlers=self._handlers,
            dispatch=self._handler_threads.submit,
            abandon=transport.cancel_by_closing,
            clock=self._clock,
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

    def _opened(self, conn: Connection) -> None:
        """A new connection is up: list what it offers, then listen for changes (2026-07-28)."""
        self._offered.list_everything(conn)
        if conn.modern:
            listen(conn, self._meta, timeout=self.config.request_timeout)
        elif self.config.log_level is not None and "logging" in conn.capabilities:
            # The handshake generation sets the level once per session (later: in ``_meta``).
            self._path.request("logging/setLevel", {"level": self.config.log_level}, conn=conn)

    # -- events ------------------------------------------------------------------

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Called by the reader: refreshes run on the event thread, then the hook sees it."""
        self._cache.on_notification(method, params)
        if method == "notifications/progress":
            job = self._progress.deliver(params)
            if job is not None:
                self._events.submit(job)
        elif method == "notifications/tasks/status":
            self._tasks.on_status(params)
        event = Notification(method, params)
        refresh = self._offered.refresher(method)
        if refresh is None:
            self._events.emit(event)
        else:
            # A refresh cut short by close() is no news: log it quietly.
            closed = lambda: self._keeper.closed  # noqa: E731
            self._events.refresh_then_emit(refresh, event, quiet=closed)
