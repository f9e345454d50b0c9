"""A scriptable 2024-11-05 HTTP+SSE MCP server on 127.0.0.1, for the legacy transport's edge cases.

GET ``/sse`` opens the stream and sends an ``endpoint`` event (``endpoint``
sets its data; None sends none); POST ``/messages`` takes a frame (202) and
answers on the stream, as protocol revision ``protocol``. ``post_status``
makes every POST fail with that status; ``end_streams()`` ends the open
streams (the server going away).
"""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from tests.support.fake_http import FakeHttpServer, QuietHandler


class FakeLegacySseServer(FakeHttpServer):
    """``with FakeLegacySseServer() as srv:``; ``srv.url`` is the SSE endpoint."""

    def __init__(
        self,
        *,
        endpoint: str | None = "/messages?session_id=s1",
        protocol: str = "2024-11-05",
        post_status: int = 202,
    ) -> None:
        self.endpoint = endpoint
        self.protocol = protocol
        self.post_status = post_status
        self.streams: list[queue.Queue[bytes | None]] = []
        self.posts: list[dict[str, Any]] = []
        self.post_headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        super().__init__(_Handler, name="fake-legacy-sse")
        self.url = f"{self.base}/sse"

    def stop(self) -> None:
        self.end_streams()
        super().stop()

    def send(self, message: dict[str, Any]) -> None:
        chunk = f"event: message\ndata: {json.dumps(message)}\n\n".encode()
        with self.lock:
            for stream in self.streams:
                stream.put(chunk)

    def end_streams(self) -> None:
        with self.lock:
            for stream in self.streams:
                stream.put(None)


class _Handler(QuietHandler):
    fake: FakeLegacySseServer
    protocol_version = "HTTP/1.0"  # the stream ends when the connection closes

    def do_GET(self) -> None:
        if self.path != "/sse":
            self.send_error(404)
            return
        stream: queue.Queue[bytes | None] = queue.Queue()
        with self.fake.lock:
            self.fake.streams.append(stream)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            if self.fake.endpoint is not None:
                self.wfile.write(f"event: endpoint\ndata: {self.fake.endpoint}\n\n".encode())
            self.wfile.write(b": keep going\n\n")
            self.wfile.flush()
            while (chunk := stream.get(timeout=60)) is not None:
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            pass
        finally:
            with self.fake.lock:
                self.fake.streams.remove(stream)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with self.fake.lock:
            self.fake.posts.append(body)
            self.fake.post_headers.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(self.fake.post_status)
        self.send_header("Content-Length", "0")
        self.end_headers()
        if self.fake.post_status != 202 or "id" not in body or "method" not in body:
            return
        method = body["method"]
        result: dict[str, Any] = {}
        if method == "initialize":
            result = {
                "protocolVersion": self.fake.protocol,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy", "version": "0"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            text = str(body["params"].get("arguments", {}).get("text", ""))
            result = {"content": [{"type": "text", "text": text}]}
        self.fake.send({"jsonrpc": "2.0", "id": body["id"], "result": result})
