"""An in-memory MCP server behind the Transport interface, for client unit tests.

It answers each request synchronously from ``send`` (as the HTTP transport
does while it reads a response body). A handler returns the ``result``, raises
:class:`RpcFailure` for an error answer, or returns ``None`` to never answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_smith.mcp import McpClient, ServerConfig
from agent_smith.mcp.transport import CloseHandler, Frame, FrameHandler, StaleSession, Transport

Handler = Callable[[dict[str, Any]], dict[str, Any] | None]


class RpcFailure(Exception):
    def __init__(self, code: int, message: str = "failed", *, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class ScriptedServer(Transport):
    def __init__(
        self,
        handlers: dict[str, Handler] | None = None,
        *,
        protocol: str | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.server = "scripted"
        self.sent: list[Frame] = []
        self._sent_changed = threading.Condition()
        self.stale_once: set[str] = set()  # methods whose next send raises StaleSession
        self.closed = False
        self.negotiated_version: str | None = None
        self._on_frame: FrameHandler | None = None
        self._protocol = protocol
        caps = {"tools": {}} if capabilities is None else capabilities
        self.handlers: dict[str, Handler] = {
            "initialize": lambda p: {
                "protocolVersion": self._protocol or p["protocolVersion"],
                "capabilities": caps,
                "serverInfo": {"name": "scripted", "version": "9"},
            },
            "tools/list": lambda p: {
                "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]
            },
            "tools/call": lambda p: {"content": [{"type": "text", "text": "called"}]},
        }
        self.handlers.update(handlers or {})

    def methods(self) -> list[str]:
        return [f["method"] for f in self.sent if "method" in f]

    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        self._on_frame = on_frame

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        method = frame.get("method")
        if method in self.stale_once:
            self.stale_once.discard(method)
            raise StaleSession(method)
        with self._sent_changed:
            self.sent.append(frame)
            self._sent_changed.notify_all()
        if method is None or "id" not in frame:
            return
        handler = self.handlers.get(method)
        try:
            if handler is None:
                raise RpcFailure(-32601, f"method not found: {method}")
            result = handler(frame.get("params") or {})
        except RpcFailure as err:
            error: dict[str, Any] = {"code": err.code, "message": str(err)}
            if err.data is not None:
                error["data"] = err.data
            self.push({"jsonrpc": "2.0", "id": frame["id"], "error": error})
            return
        if result is not None:
            self.push({"jsonrpc": "2.0", "id": frame["id"], "result": result})

    def wait_for_answers(self, ids: set[Any], timeout: float = 5.0) -> dict[Any, Frame]:
        """Block until the client answered the server requests ``ids``; return them."""

        def answers() -> dict[Any, Frame]:
            return {f["id"]: f for f in self.sent if "method" not in f and f.get("id") in ids}

        with self._sent_changed:
            assert self._sent_changed.wait_for(lambda: set(answers()) == ids, timeout)
            return answers()

    def push(self, frame: Frame) -> None:
        """Deliver a frame as if the server sent it."""
        assert self._on_frame is not None
        self._on_frame(frame)

    def negotiated(self, protocol_version: str) -> None:
        self.negotiated_version = protocol_version

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., McpClient]]:
    """``connect(server, **config_fields)``: a client wired to a ScriptedServer."""
    clients: list[McpClient] = []

    def connect(server: ScriptedServer, **fields: Any) -> McpClient:
        monkeypatch.setattr(McpClient, "_make_transport", lambda self: server)
        hook = fields.pop("hook", None)
        handlers = {k: fields.pop(k) for k in list(fields) if k.endswith("_handler")}
        config = ServerConfig(alias=fields.pop("alias", "s"), command=("unused",), **fields)
        client = McpClient.connect(config, hook=hook, **handlers)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()
