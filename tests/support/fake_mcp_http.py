"""A scriptable MCP-ish Streamable HTTP server on 127.0.0.1, for transport tests.

It speaks just enough MCP to drive the client through the cases real servers
rarely produce on demand: SSE bodies split inside multi-byte characters, with
comments and empty events; a server request inside an unrelated SSE answer;
a session the server forgets; a GET stream that pushes notifications, drops,
and records the ``Last-Event-ID`` it is resumed with.
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_http import WAIT, FakeHttpServer, QuietHandler, send_json

PROTOCOL = "2025-06-18"


@dataclass
class Seen:
    """One request the server received."""

    method: str  # HTTP method
    headers: dict[str, str]
    body: Any = None

    @property
    def rpc_method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None


@dataclass
class _State:
    sse: bool = True
    get_mode: str = "sse"  # "sse" or "405"
    get_retry_ms: int = 200
    get_delay: float = 0.0  # seconds the GET stream's headers are held back
    sessions: set[str] = field(default_factory=set)
    counter: int = 0
    seen: list[Seen] = field(default_factory=list)
    client_answers: dict[Any, Any] = field(default_factory=dict)
    get_streams: list[queue.Queue[bytes | None]] = field(default_factory=list)
    event_counter: int = 0
    resume_answers: dict[str, Any] = field(default_factory=dict)


class FakeMcpServer(FakeHttpServer):
    """Start with ``with FakeMcpServer() as srv:``; ``srv.url`` is the endpoint."""

    def __init__(
        self,
        *,
        sse: bool = True,
        get_mode: str = "sse",
        get_retry_ms: int = 200,
        get_delay: float = 0.0,
    ):
        self.state = _State(
            sse=sse, get_mode=get_mode, get_retry_ms=get_retry_ms, get_delay=get_delay
        )
        self.cond = threading.Condition()
        super().__init__(_Handler, name="fake-mcp-http")
        self.url = f"{self.base}/mcp"

    def stop(self) -> None:
        self.drop_get_streams()
        super().stop()

    # -- scripting ---------------------------------------------------------------

    def forget_sessions(self) -> None:
        with self.cond:
            self.state.sessions.clear()

    def push(self, message: dict[str, Any]) -> None:
        """Send ``message`` on every open GET stream (with an event id)."""
        with self.cond:
            self.state.event_counter += 1
            chunk = f"id: g{self.state.event_counter}\ndata: {json.dumps(message)}\n\n".encode()
            for stream in self.state.get_streams:
                stream.put(chunk)

    def drop_get_streams(self) -> None:
        with self.cond:
            for stream in self.state.get_streams:
                stream.put(None)

    def wait_for(self, predicate: Any, timeout: float = WAIT) -> list[Seen]:
        """Wait until ``predicate(seen)`` is true; return the requests seen so far."""
        with self.cond:
            ok = self.cond.wait_for(lambda: predicate(self.state.seen), timeout)
            assert ok, f"server never saw what the test waited for: {self.state.seen}"
            return list(self.state.seen)

    def seen(self) -> list[Seen]:
        with self.cond:
            return list(self.state.seen)

    def get_streams_open(self) -> int:
        with self.cond:
            return len(self.state.get_streams)


class _Handler(QuietHandler):
    fake: FakeMcpServer
    protocol_version = "HTTP/1.0"  # bodies end at close: no chunking to get right

    # -- plumbing ----------------------------------------------------------------

    def _record(self, body: Any = None) -> Seen:
        seen = Seen(self.command, {k.lower(): v for k, v in self.headers.items()}, body)
        with self.fake.cond:
            self.fake.state.seen.append(seen)
            self.fake.cond.notify_all()
        return seen

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        send_json(self, status, payload, headers)

    def _empty(self, status: int, text: str = "") -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def _write(self, chunk: bytes) -> None:
        self.wfile.write(chunk)
        self.wfile.flush()

    def _session_ok(self, seen: Seen) -> bool:
        sid = seen.headers.get("mcp-session-id")
        with self.fake.cond:
            return sid is not None and sid in self.fake.state.sessions

    # -- verbs -------------------------------------------------------------------

    def do_DELETE(self) -> None:
        self._record()
        self._empty(200)

    def do_GET(self) -> None:
        seen = self._record()
        if self.fake.state.get_mode == "405":
            self._empty(405)
            return
        if not self._session_ok(seen):
            self._empty(404, "unknown session")
            return
        resumed = self.fake.state.resume_answers.pop(seen.headers.get("last-event-id", ""), None)
        if resumed is not None:  # a POST stream being resumed: replay its answer, end
            self._sse_start()
            self._write(f"id: p2\ndata: {json.dumps(resumed)}\n\n".encode())
            return
        if self.fake.state.get_delay:  # a slow server: its answer to the GET comes late
            threading.Event().wait(self.fake.state.get_delay)
        stream: queue.Queue[bytes | None] = queue.Queue()
        with self.fake.cond:
            self.fake.state.get_streams.append(stream)
            self.fake.cond.notify_all()
        try:
            self._sse_start()
            self._write(f"retry: {self.fake.state.get_retry_ms}\n: listening\n\n".encode())
            while True:
                chunk = stream.get(timeout=60)
                if chunk is None:
                    return
                self._write(chunk)
        except OSError:
            return
        finally:
            with self.fake.cond:
                self.fake.state.get_streams.remove(stream)
                self.fake.cond.notify_all()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        seen = self._record(body)
        method = body.get("method")
        if method == "initialize":
            with self.fake.cond:
                self.fake.state.counter += 1
                sid = f"s{self.fake.state.counter}"
                self.fake.state.sessions.add(sid)
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": {"name": "fake", "version": "0"},
            }
            self._json(
                200, {"jsonrpc": "2.0", "id": body["id"], "result": result}, {"Mcp-Session-Id": sid}
            )
            return
        if not self._session_ok(seen):
            self._empty(404, "session not found")
            return
        if method is None:  # a client's answer to a server request, or junk
            with self.fake.cond:
                self.fake.state.client_answers[body.get("id")] = body
                self.fake.cond.notify_all()
            self._empty(202)
            return
        if "id" not in body:  # notification
            self._empty(202)
            return
        handler = getattr(self, "_rpc_" + method.replace("/", "_"), None)
        if handler is None:
            self._error(body, -32601, "no such method")
            return
        handler(body)

    # -- methods -----------------------------------------------------------------

    def _answer(self, body: dict[str, Any], result: Any) -> None:
        frame = {"jsonrpc": "2.0", "id": body["id"], "result": result}
        if self.fake.state.sse:
            self._sse_start()
            self._write(f"event: message\ndata: {json.dumps(frame)}\n\n".encode())
        else:
            self._json(200, frame)

    def _error(self, body: dict[str, Any], code: int, message: str) -> None:
        error = {"code": code, "message": message}
        self._json(200, {"jsonrpc": "2.0", "id": body["id"], "error": error})

    def _rpc_tools_list(self, body: dict[str, Any]) -> None:
        tools = [
            {"name": n, "inputSchema": {"type": "object"}}
            for n in ("echo", "utf8", "asks_client", "slow")
        ]
        self._answer(body, {"tools": tools})

    def _rpc_resources_list(self, body: dict[str, Any]) -> None:
        self._answer(body, {"resources": []})

    def _rpc_resources_read(self, body: dict[str, Any]) -> None:
        uri = body["params"]["uri"]
        self._answer(body, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hi"}]})

    def _rpc_prompts_list(self, body: dict[str, Any]) -> None:
        self._answer(body, {"prompts": []})

    def _rpc_ping(self, body: dict[str, Any]) -> None:
        self._answer(body, {})

    def _rpc_tools_call(self, body: dict[str, Any]) -> None:
        name = body["params"]["name"]
        args = body["params"].get("arguments") or {}
        if name == "echo":
            self._answer(body, _text(str(args.get("text", ""))))
        elif name == "utf8":
            self._utf8(body)
        elif name == "asks_client":
            self._asks_client(body)
        elif name == "drops":
            self._drops(body)
        elif name == "slow":  # a tool that takes its time; JSON mode answers only when done
            threading.Event().wait(float(args.get("seconds", 1)))
            self._answer(body, _text("slept"))
        elif name == "truncated":  # a JSON body that promises more bytes than it sends
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self._write(b'{"jsonrpc": "2.0", "id": ')
        elif name == "drops_without_id":
            self._sse_start()
            self._write(b": nothing to resume from\n\n")
        else:
            self._error(body, -32602, f"unknown tool {name}")

    def _utf8(self, body: dict[str, Any]) -> None:
        """An SSE answer split inside multi-byte characters, with comments and empty events."""
        text = "héllo wörld — 日本語 🙂"
        frame = json.dumps(
            {"jsonrpc": "2.0", "id": body["id"], "result": _text(text)}, ensure_ascii=False
        ).encode("utf-8")
        note = json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "ünïcödé"},
            },
            ensure_ascii=False,
        ).encode("utf-8")
        payload = (
            b": a comment\n\n"
            + b"data:\n\n"
            + b"event: message\ndata: "
            + note
            + b"\n\n"
            + b"data: "
            + frame
            + b"\n\n"
        )
        self._sse_start()
        for i in range(len(payload)):  # one byte per write: every split is exercised
            self._write(payload[i : i + 1])

    def _drops(self, body: dict[str, Any]) -> None:
        """Prime the stream with an event id, then end it; the answer waits for a resume."""
        with self.fake.cond:
            self.fake.state.resume_answers["p1"] = {
                "jsonrpc": "2.0",
                "id": body["id"],
                "result": _text("resumed"),
            }
        self._sse_start()
        self._write(b"id: p1\nretry: 100\ndata:\n\n")

    def _asks_client(self, body: dict[str, Any]) -> None:
        """Send a server request (id 0) inside this SSE answer; answer after the client did."""
        self._sse_start()
        request = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
        self._write(f"data: {json.dumps(request)}\n\n".encode())
        with self.fake.cond:
            ok = self.fake.cond.wait_for(lambda: 0 in self.fake.state.client_answers, WAIT)
            answer = self.fake.state.client_answers.get(0)
        text = f"client answered: {json.dumps(answer)}" if ok else "client never answered"
        frame = {"jsonrpc": "2.0", "id": body["id"], "result": _text(text)}
        self._write(f"data: {json.dumps(frame)}\n\n".encode())


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}
