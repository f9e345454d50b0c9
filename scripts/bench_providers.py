"""Benchmark: each provider's stream decoder against a minimal hand-written parser.

For every wire format (OpenAI chat-completions SSE, Anthropic Messages SSE,
OpenAI Responses SSE, Gemini SSE with CRLF and no [DONE], Ollama NDJSON) a
reply of N text deltas is built from the documented shapes
(tests/support/provider_wire.py), cut into one chunk per event as a server
flushes them, and decoded in process (no HTTP: the transport is shared and
measured by bench_stream.py):

  by-hand      the least a client can do: split events, json.loads each,
               pick the text out, join it (no validation, no events)
  agent_smith  the provider's decoder: every event checked, StreamEvents
               yielded, the reply assembled

The figure is deltas per second, best of --repeat runs; the target is
agent_smith >= 0.9x by-hand. Counts are scaled down for the shared 2-core
machine (default 20,000 deltas, 5 repeats).

    python scripts/bench_providers.py [--deltas 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_smith.llm.anthropic_reply import AnthropicStreamDecoder
from agent_smith.llm.events import TokenDelta
from agent_smith.llm.gemini_reply import GeminiStreamDecoder
from agent_smith.llm.ollama import OllamaDecoder
from agent_smith.llm.responses_reply import ResponsesStreamDecoder
from agent_smith.llm.stream_decoder import StreamDecoder
from tests.support.llm_server import Text, sse_frames
from tests.support.provider_wire import (
    anthropic_events,
    gemini_chunks,
    ollama_lines,
    responses_events,
)

Chunks = list[bytes]


def words(count: int) -> str:
    return " ".join(f"tok{i % 100}" for i in range(count))


def bodies(count: int) -> dict[str, Chunks]:
    text = words(count)
    message = {"type": "message", "id": "m", "role": "assistant"}
    message["content"] = [{"type": "output_text", "text": text}]  # type: ignore[assignment]
    return {
        "openai": [f.encode() for f in sse_frames(Text(text), {})],
        "anthropic": [e.encode() for e in anthropic_events([{"type": "text", "text": text}])],
        "responses": [e.encode() for e in responses_events([message])],
        "gemini": [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in gemini_chunks(text)],
        "ollama": [line.encode() for line in ollama_lines(text)],
    }


# -- minimal hand-written parsers: split, json.loads, pick the text ------------------


def sse_data(chunks: Iterable[bytes]) -> Iterator[str]:
    """The data of each SSE event: split on blank lines (LF or CRLF), keep 'data:' lines."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        while True:
            cut = pending.find(b"\n\n")
            crlf = pending.find(b"\r\n\r\n")
            if crlf >= 0 and (cut < 0 or crlf < cut):
                event, pending = pending[:crlf], pending[crlf + 4 :]
            elif cut >= 0:
                event, pending = pending[:cut], pending[cut + 2 :]
            else:
                break
            for line in event.splitlines():
                if line.startswith(b"data:"):
                    yield line[5:].strip().decode()


def by_hand_openai(chunks: Chunks) -> str:
    out = []
    for data in sse_data(chunks):
        if data == "[DONE]":
            continue
        for choice in json.loads(data).get("choices", ()):
            out.append(choice["delta"].get("content") or "")
    return "".join(out)


def by_hand_anthropic(chunks: Chunks) -> str:
    out = []
    for data in sse_data(chunks):
        event = json.loads(data)
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
            out.append(event["delta"]["text"])
    return "".join(out)


def by_hand_responses(chunks: Chunks) -> str:
    out = []
    for data in sse_data(chunks):
        event = json.loads(data)
        if event["type"] == "response.output_text.delta":
            out.append(event["delta"])
    return "".join(out)


def by_hand_gemini(chunks: Chunks) -> str:
    out = []
    for data in sse_data(chunks):
        for part in json.loads(data)["candidates"][0]["content"]["parts"]:
            out.append(part.get("text", ""))
    return "".join(out)


def by_hand_ollama(chunks: Chunks) -> str:
    out = []
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line:
                out.append(json.loads(line)["message"]["content"])
    return "".join(out)


def ours(make: Callable[[], object]) -> Callable[[Chunks], str]:
    def run(chunks: Chunks) -> str:
        decoder = make()
        events = decoder.events(chunks)  # type: ignore[attr-defined]
        return "".join(e.text for e in events if type(e) is TokenDelta)

    return run


PAIRS: dict[str, tuple[Callable[[Chunks], str], Callable[[Chunks], str]]] = {
    "openai": (by_hand_openai, ours(lambda: StreamDecoder(endpoint="bench"))),
    "anthropic": (by_hand_anthropic, ours(lambda: AnthropicStreamDecoder(endpoint="bench"))),
    "responses": (by_hand_responses, ours(lambda: ResponsesStreamDecoder(endpoint="bench"))),
    "gemini": (by_hand_gemini, ours(lambda: GeminiStreamDecoder(endpoint="bench"))),
    "ollama": (by_hand_ollama, ours(lambda: OllamaDecoder(endpoint="bench"))),
}


def timed(run: Callable[[Chunks], str], chunks: Chunks, expected: str) -> float:
    started = time.perf_counter()
    text = run(chunks)
    took = time.perf_counter() - started
    assert text == expected, (text[:40], expected[:40])
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    expected = words(args.deltas)
    print(f"python {platform.python_version()}, {args.deltas} deltas, best of {args.repeat}")
    print(f"{'format':<10} {'by-hand':>14} {'agent_smith':>14} {'ratio':>7}")
    failed = []
    for name, chunks in bodies(args.deltas).items():
        hand, mine = PAIRS[name]
        floor = took = float("inf")
        for _ in range(args.repeat):  # interleaved, so both see the same machine load
            floor = min(floor, timed(hand, chunks, expected))
            took = min(took, timed(mine, chunks, expected))
        ratio = floor / took
        print(
            f"{name:<10} {args.deltas / floor:>10,.0f}/s {args.deltas / took:>10,.0f}/s"
            f" {ratio:>6.2f}x"
        )
        if ratio < 0.9:
            failed.append(name)
    print("target >= 0.90x:", "met" if not failed else f"missed by {', '.join(failed)}")


if __name__ == "__main__":
    main()
