"""Benchmark: tokens/s delivered to user code from a 20,000-delta SSE stream.

A local server (a separate process, so it does not share our GIL) answers
every POST with the same chunked SSE body, flushing each frame on its own.
One run measures, side by side:

  raw      reading the body bytes with iter_content(None), no parsing (floor)
  by-hand  requests iter_lines + json.loads, the minimal hand-written client
  agent_smith  LlmClient.stream(): sseclient-py + the delta parser + events
  openai   the official openai SDK's synchronous streaming

    /work/venv/bin/python scripts/bench_stream.py [--deltas 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Callable

import requests

MODEL = "bench"


def frames(count: int) -> list[bytes]:
    """The SSE frames of one reply, each already framed as one HTTP chunk."""

    def chunk(obj: dict[str, object]) -> bytes:
        data = b"data: " + json.dumps(obj).encode() + b"\n\n"
        return b"%x\r\n%s\r\n" % (len(data), data)

    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": MODEL}
    out = [chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})]
    for i in range(count):
        delta = {"content": f" tok{i % 100}"}
        out.append(
            chunk({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        )
    out.append(chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    usage = {"prompt_tokens": 5, "completion_tokens": count, "total_tokens": count + 5}
    out.append(chunk({**base, "choices": [], "usage": usage}))
    data = b"data: [DONE]\n\n"
    out.append(b"%x\r\n%s\r\n" % (len(data), data))
    out.append(b"0\r\n\r\n")
    return out


def serve(count: int) -> None:
    """Server process: print the port, answer POSTs until stdin closes."""
    body = frames(count)
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
    )
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    listener.settimeout(0.5)
    import threading

    def handle(conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = conn.makefile("rb")
        with conn, reader:
            while True:
                length = 0
                line = reader.readline()
                if not line:
                    return
                while line not in (b"\r\n", b"\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                    line = reader.readline()
                reader.read(length)
                conn.sendall(head)
                for part in body:  # one send per frame: flushed frame by frame
                    conn.sendall(part)

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def run_raw(url: str, session: requests.Session) -> int:
    with session.post(url, json=_body(), stream=True) as response:
        size = 0
        for chunk in response.iter_content(chunk_size=None):
            size += len(chunk)
    return size


def run_by_hand(url: str, session: requests.Session) -> int:
    tokens = 0
    with session.post(url, json=_body(), stream=True) as response:
        for line in response.iter_lines(chunk_size=None):
            if not line.startswith(b"data: "):
                continue
            payload = line[6:]
            if payload == b"[DONE]":
                continue
            obj = json.loads(payload)
            choices = obj["choices"]
            if choices and choices[0]["delta"].get("content"):
                tokens += 1
    return tokens


def make_ours(endpoint: str) -> Callable[[], int]:
    from agent_smith import LlmClient, LlmRequest, Runtime, TokenDelta, UserMessage

    client = LlmClient(endpoint, MODEL, runtime=Runtime())
    request = LlmRequest((UserMessage("go"),))

    def run() -> int:
        return sum(1 for e in client.stream(request) if type(e) is TokenDelta)

    return run


def make_openai(endpoint: str) -> Callable[[], int]:
    import openai

    client = openai.OpenAI(base_url=endpoint + "/v1", api_key="bench", max_retries=0)

    def run() -> int:
        tokens = 0
        stream = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "go"}], stream=True
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                tokens += 1
        return tokens

    return run


def _body() -> dict[str, object]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "go"}], "stream": True}


def measure(runs: dict[str, Callable[[], int]], repeat: int) -> dict[str, tuple[float, int]]:
    """Best time per path; the paths take turns so background load hits all alike."""
    counts = {name: run() for name, run in runs.items()}  # warm up: connection, caches
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            counts[name] = run()
            times[name].append(time.perf_counter() - start)
    return {name: (min(times[name]), counts[name]) for name in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.deltas)
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--deltas", str(args.deltas)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        endpoint = f"http://127.0.0.1:{port}"
        url = endpoint + "/v1/chat/completions"
        session = requests.Session()
        results = measure(
            {
                "raw (floor)": lambda: run_raw(url, session),
                "iter_lines + json.loads": lambda: run_by_hand(url, session),
                "agent_smith stream()": make_ours(endpoint),
                "openai SDK": make_openai(endpoint),
            },
            args.repeat,
        )
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"python {platform.python_version()}, requests {requests.__version__}")
    print(f"{args.deltas} deltas per stream, best of {args.repeat} interleaved runs\n")
    print(f"{'path':28} {'seconds':>8} {'tokens/s':>12}")
    for name, (seconds, _) in results.items():
        rate = args.deltas / seconds
        print(f"{name:28} {seconds:8.3f} {rate:12,.0f}")
    ours = results["agent_smith stream()"][0]
    hand = results["iter_lines + json.loads"][0]
    sdk = results["openai SDK"][0]
    raw = results["raw (floor)"][0]
    print(f"\nagent_smith vs iter_lines+json.loads: {hand / ours:.2f}x (target >= 0.8x)")
    print(f"agent_smith vs openai SDK:            {sdk / ours:.2f}x (target >= 10x)")
    print(f"agent_smith vs raw floor:             {raw / ours:.2f}x")
    counts = {name: n for name, (_, n) in results.items() if "raw" not in name}
    assert all(n == args.deltas for n in counts.values()), counts


if __name__ == "__main__":
    main()
