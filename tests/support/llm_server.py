"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Real HTTP (threaded, HTTP/1.1 keep-alive, chunked SSE flushed frame by frame)
so tests exercise the real ``requests`` + ``sseclient-py`` path. Replies come
from a script (a queue of :class:`Reply` values consumed in order) or, when the
script is empty, from a responder function of the request body.

    with ScriptedLlmServer() as server:
        server.script(Text("hi"), Calls(("add", {"a": 1})))
        client = LlmClient(server.url, "test")

Reply kinds:

* :class:`Text` — a text answer (streamed word by word when asked to stream).
* :class:`Calls` — one or more tool calls (arguments streamed in fragments).
* :class:`Raw` — an exact HTTP status, headers and body.
* :class:`Chunks` — exact body chunks for a streamed reply; a
  ``threading.Event`` in the list makes the server wait for it before going on;
  a :class:`Drop` in the list closes the connection mid-body.
* :class:`Drop` — close the connection without answering (like a kept-alive
  connection the server dropped).
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JsonObject = dict[str, Any]

#: How long a scripted pause waits for its event before giving up.
GATE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Text:
    content: str
    usage: tuple[int, int] = (10, 5)
    reasoning: str = ""
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Calls:
    calls: tuple[tuple[str, JsonObject], ...]
    usage: tuple[int, int] = (10, 5)
    content: str = ""

    def __init__(self, *calls: tuple[str, JsonObject], usage: tuple[int, int] = (10, 5)) -> None:
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "content", "")


@dataclass(frozen=True)
class Raw:
    status: int
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Drop:
    """Close the connection at once, without (the rest of) a response."""


@dataclass(frozen=True)
class Chunks:
    parts: tuple[bytes | threading.Event | Drop, ...]

    def __init__(self, *parts: bytes | str | threading.Event | Drop) -> None:
        object.__setattr__(
            self, "parts", tuple(p.encode() if isinstance(p, str) else p for p in parts)
        )


@dataclass(frozen=True)
class Hold:
    """Send nothing, not even headers, until ``gate`` is set; then answer ``then``.

    ``reached`` is set once the request arrived (the client now waits for headers).
    """

    gate: threading.Event
    then: Text | Calls | Raw | Chunks | Drop
    reached: threading.Event = field(default_factory=threading.Event)


Reply = Text | Calls | Raw | Chunks | Drop | Hold
Responder = Callable[[JsonObject], Reply]


def echo_tools_responder(body: JsonObject) -> Reply:
    """Behave like the tiny test model: call the first tool once, then answer.

    With tools and no tool result after the last user message: one call to
    the first tool with every string argument ``"Paris"``. Otherwise a text
    reply naming the last tool result, if any.
    """
    messages = body.get("messages", [])
    tools = body.get("tools") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    results = [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    if tools and not results:
        fn = tools[0]["function"]
        props = fn.get("parameters", {}).get("properties", {})
        args = {k: "Paris" for k, v in props.items() if v.get("type") == "string"}
        return Calls((fn["name"], args))
    if results:
        return Text(f"Result: {results[-1].get('content', '')}")
    return Text("Hello from the scripted server.")


class ScriptedLlmServer:
    """Threaded chat-completions server on a free loopback port."""

    def __init__(self, responder: Responder = echo_tools_responder, *, record: bool = True) -> None:
        self.responder = responder
        self.record = record  # False: keep no requests (long soak runs)
        self.requests: list[JsonObject] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each request's path and query, in order
        self.connections = 0
        #: What ``GET /props`` answers (llama-server's server properties); None: 404;
        #: a :class:`Drop`: the connection is closed without an answer.
        self.props: JsonObject | Drop | None = None
        self.props_asked = 0
        #: Whether ``POST /apply-template`` and ``/tokenize`` answer like llama-server's
        #: (the prompt is the messages' JSON, one token per 4 characters); else 404.
        self.counts_tokens = False
        self.tokens_counted = 0
        self._gates: list[threading.Event] = []  # set on stop so no handler stays blocked
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(0.05,),
            name="test-llm-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies, consumed one per request before the responder is used."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> ScriptedLlmServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            gates = list(self._gates)
        for gate in gates:
            gate.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __enter__(self) -> ScriptedLlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, body: JsonObject, headers: dict[str, str]) -> Reply:
        with self._lock:
            if self.record:
                self.requests.append(body)
                self.headers.append(headers)
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    def _count_connection(self) -> None:
        with self._lock:
            self.connections += 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # many agents connect at once in the load tests
    owner: ScriptedLlmServer

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        # Small SSE frames must not wait for Nagle's algorithm (about 40 ms each).
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.owner._count_connection()
        return conn, addr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        owner = self.server.owner
        with owner._lock:
            owner.props_asked += 1
            props = owner.props
        if isinstance(props, Drop):
            self._drop()
            return
        if self.path != "/props" or props is None:
            self._send(404, b'{"error": {"code": 404, "message": "File Not Found"}}')
            return
        self._send(200, json.dumps(props).encode())

    def _count_tokens(self, owner: ScriptedLlmServer, body: JsonObject) -> None:
        if not owner.counts_tokens:
            self._send(404, b'{"error": {"code": 404, "message": "File Not Found"}}')
            return
        if self.path == "/apply-template":
            self._send(200, json.dumps({"prompt": json.dumps(body["messages"])}).encode())
            return
        with owner._lock:
            owner.tokens_counted += 1
        tokens = list(range(len(body["content"]) // 4))
        self._send(200, json.dumps({"tokens": tokens}).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error": {"message": "invalid JSON"}}')
            return
        owner = self.server.owner
        with owner._lock:
            owner.paths.append(self.path)
        if self.path in ("/apply-template", "/tokenize"):
            self._count_tokens(owner, body)
            return
        if self.path == "/api/show":  # Ollama's model info: this server has none
            self._send(404, b'{"error": "model info is not served here"}')
            return
        reply = owner._next_reply(body, dict(self.headers))
        if isinstance(reply, Hold):
            with owner._lock:
                owner._gates.append(reply.gate)
            reply.reached.set()
            reply.gate.wait(GATE_TIMEOUT)
            reply = reply.then
        if isinstance(reply, Drop):
            self._drop()
        elif isinstance(reply, Raw):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send(reply.status, data, reply.headers)
        elif isinstance(reply, Chunks):
            self._stream(reply.parts)
        elif body.get("stream"):
            self._stream(tuple(f.encode() for f in sse_frames(reply, body)))
        else:
            self._send(200, json.dumps(completion_body(reply, body)).encode())

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = {"Content-Type": "application/json", **(headers or {})}
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client cancelled
            self.close_connection = True

    def _drop(self) -> None:
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _stream(self, parts: Iterable[bytes | threading.Event | Drop]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        owner = self.server.owner
        try:
            for part in parts:
                if isinstance(part, threading.Event):
                    with owner._lock:
                        owner._gates.append(part)
                    part.wait(GATE_TIMEOUT)
                    continue
                if isinstance(part, Drop):
                    self._drop()
                    return
                if part:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def completion_body(reply: Text | Calls, request: JsonObject) -> JsonObject:
    """The non-streamed JSON body for a reply."""
    message: JsonObject = {"role": "assistant", "content": reply.content}
    if isinstance(reply, Calls):
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.calls)
        ]
        finish = "tool_calls"
    else:
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        finish = reply.finish_reason
    prompt, completion = reply.usage
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model", "test"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def sse_frames(reply: Text | Calls, request: JsonObject) -> Iterator[str]:
    """The SSE frames llama-server would send for a reply, ending in [DONE]."""

    def frame(delta: JsonObject, finish: str | None = None) -> str:
        chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "model": request.get("model", "test"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield frame({"role": "assistant", "content": None})
    if isinstance(reply, Calls):
        for i, (name, args) in enumerate(reply.calls):
            yield frame(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
            text = json.dumps(args)
            for start in range(0, len(text), 4):
                piece = text[start : start + 4]
                yield frame({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        finish = "tool_calls"
    else:
        if reply.reasoning:
            yield frame({"reasoning_content": reply.reasoning})
        words = reply.content.split(" ")
        for i, word in enumerate(words):
            yield frame({"content": word if i == 0 else " " + word})
        finish = reply.finish_reason
    yield frame({}, finish)
    prompt, completion = reply.usage
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    yield f"data: {json.dumps({'id': 'chatcmpl-test', 'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"
