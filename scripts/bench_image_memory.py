#!/usr/bin/env python3
"""Benchmark: how many copies of a 20 MB image sending it holds at once (issue 33).

Each provider client that takes a 20 MB image sends one, not streamed, to a
server on 127.0.0.1 that reads the body in 64 KiB slices and throws them
away; ``tracemalloc`` reports the peak of what was allocated during the
call. The image exists before the measurement starts, so the copies held
are ``1 + peak / size``. Also measured: a whole agent turn
(``agent.send(..., images=[data])``, streamed, a new agent so that the
history holds that one image), and for comparison the
usual way of building such a body (base64 text in a dict, ``json.dumps``,
``.encode()``).

    python scripts/bench_image_memory.py [--mb 20]
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import sys
import threading
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_smith import (  # noqa: E402
    Agent,
    GeminiClient,
    ImagePart,
    LlmClient,
    LlmRequest,
    OllamaClient,
    ResponsesClient,
    UserMessage,
)

_OPENAI = {
    "id": "c",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "A cat."}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
_STREAM = (
    'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    '"delta":{"role":"assistant","content":"A cat."},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)
_REPLIES: dict[str, object] = {
    "/v1/chat/completions": _OPENAI,
    "/v1/responses": {
        "id": "r",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [
            {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "A cat.", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    },
    "/api/chat": {
        "model": "m",
        "message": {"role": "assistant", "content": "A cat."},
        "done": True,
        "done_reason": "stop",
    },
    "gemini": {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "A cat."}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
    },
}


class _Sink(BaseHTTPRequestHandler):
    """Reads a request body a slice at a time, keeps none of it, answers as the path asks."""

    def do_POST(self) -> None:
        left = int(self.headers["Content-Length"])
        while left:
            left -= len(self.rfile.read(min(left, 65536)))
        streamed = "stream" in self.path or self.headers.get("Accept") == "text/event-stream"
        if streamed and self.path.endswith("/chat/completions"):
            body, kind = _STREAM.encode(), "text/event-stream"
        else:
            key = "gemini" if ":generateContent" in self.path else self.path
            body, kind = json.dumps(_REPLIES[key]).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def copies(size: int, send: Callable[[], object]) -> float:
    """The copies of a ``size``-byte image held at the peak of ``send()``, the image included."""
    send()  # warm up: imports, connections, caches
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        send()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return 1 + peak / size


def naive(image: bytes) -> Callable[[], object]:
    """The usual body: base64 text in a dict, dumped to JSON text, encoded to bytes."""

    def build() -> object:
        url = "data:image/png;base64," + base64.b64encode(image).decode("ascii")
        body = {"messages": [{"role": "user", "content": [{"image_url": {"url": url}}]}]}
        return json.dumps(body).encode("utf-8")

    return build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20.0, help="image size in MB (10^6 bytes)")
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (size // 256)
    size = len(image)
    request = LlmRequest(
        (UserMessage(("What is in this picture?", ImagePart("image/png", data=image))),)
    )

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=server.serve_forever, name="bench-sink", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    clients = {
        "OpenAI chat (`LlmClient`)": LlmClient(url, "m"),
        "Responses": ResponsesClient(url, "m"),
        "Gemini": GeminiClient(url, "m"),
        "Ollama": OllamaClient(url, "m"),
    }
    print(f"Python {platform.python_version()}, {platform.machine()}, image {size:,} bytes")
    print("| what | copies held at the peak (image included) |")
    print("|---|---:|")
    try:
        for name, client in clients.items():
            held = copies(size, lambda c=client: c.complete(request))
            print(f"| {name}, `complete()` | {held:.2f} |")
        chat = LlmClient(url, "m")  # a new agent each time: one image in the history
        turn = copies(size, lambda: Agent(chat).send("What is in this?", images=[image]))
        print(f"| agent turn, streamed (`send(..., images=[data])`) | {turn:.2f} |")
        usual = copies(size, naive(image))
        print(f"| the usual body: base64 in a dict, `json.dumps`, `.encode()` | {usual:.2f} |")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


if __name__ == "__main__":
    main()
