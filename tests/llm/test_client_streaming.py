"""Streaming against the real loopback server: latency, cancellation, keep-alive."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from agent_smith import (
    CancellationSource,
    CancelledError,
    Finished,
    LlmClient,
    LlmRequest,
    Runtime,
    StreamEvent,
    TokenDelta,
    UserMessage,
)
from tests.support.background import Background
from tests.support.llm_server import Chunks, Hold, ScriptedLlmServer, Text

REQUEST = LlmRequest((UserMessage("hi"),))
BOUND = 10.0  # generous bound on every wait so a bug fails instead of hanging


def delta(content: str, finish: str | None = None) -> bytes:
    chunk: dict[str, Any] = {
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def test_first_delta_arrives_before_the_server_sends_more(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None
) -> None:
    received = threading.Event()
    llm_server.script(
        Chunks(delta("first"), received, delta(" second", "stop"), b"data: [DONE]\n\n")
    )
    client = LlmClient(llm_server.url, runtime=runtime)
    seen: list[StreamEvent] = []
    stream = client.stream(REQUEST)
    try:
        # The server blocks on `received` after the first frame: if the client
        # buffered, next() would wait for the gate's timeout and the
        # assertion below would see the second delta glued to the first.
        first = next(stream)
        seen.append(first)
        received.set()
        seen.extend(stream)
    finally:
        stream.close()
    assert first == TokenDelta("first")
    assert [e for e in seen if isinstance(e, TokenDelta)] == [
        TokenDelta("first"),
        TokenDelta(" second"),
    ]


def test_cancel_from_another_thread_ends_a_stalled_stream(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None
) -> None:
    stall = threading.Event()  # never set by the test: the server stalls 30 s
    llm_server.script(Chunks(delta("a"), stall, delta("b", "stop")), Text("after"))
    client = LlmClient(llm_server.url, runtime=runtime)
    got_first = threading.Event()

    def consume() -> None:
        for _ in client.stream(REQUEST):
            got_first.set()

    reader = Background(consume, name="test-stream-reader")
    assert got_first.wait(BOUND)
    client.cancel()
    assert reader.join(2.0), "cancel did not end the stalled read within 2 s"
    assert isinstance(reader.error, CancelledError)
    # The cancelled connection was closed, not returned to the pool.
    assert client.complete(REQUEST).message.content == "after"
    assert llm_server.connections == 2
    stall.set()


def test_cancel_token_ends_a_stalled_stream_from_another_thread(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    stall = threading.Event()
    llm_server.script(Chunks(delta("a"), stall, delta("b", "stop")))
    client = LlmClient(llm_server.url, runtime=runtime)
    source = CancellationSource()
    stream = client.stream(REQUEST, cancel=source.token)
    assert next(stream) == TokenDelta("a")
    timer = threading.Timer(0.05, source.cancel)
    timer.start()
    with pytest.raises(CancelledError):
        next(stream)
    timer.join(BOUND)
    stall.set()


@pytest.mark.parametrize("stream", [False, True])
def test_cancel_while_waiting_for_response_headers_ends_the_call(
    llm_server: ScriptedLlmServer, runtime: Runtime, no_thread_leak: None, stream: bool
) -> None:
    # A non-streamed completion is sent whole when generation ends: the
    # client waits for headers all that time, and cancel must not.
    held = Hold(threading.Event(), Text("too late"))
    llm_server.script(held, Text("after"))
    client = LlmClient(llm_server.url, runtime=runtime)
    source = CancellationSource()

    def call() -> object:
        if stream:
            return list(client.stream(REQUEST, cancel=source.token))
        return client.complete(REQUEST, cancel=source.token)

    caller = Background(call, name="test-complete")
    assert held.reached.wait(BOUND)
    source.cancel()
    assert caller.join(2.0), "cancel did not end the wait for headers within 2 s"
    assert isinstance(caller.error, CancelledError)
    held.gate.set()
    assert client.complete(REQUEST).message.content == "after"


def test_already_cancelled_token_sends_nothing(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    source = CancellationSource()
    source.cancel()
    with pytest.raises(CancelledError):
        LlmClient(llm_server.url, runtime=runtime).complete(REQUEST, cancel=source.token)
    assert llm_server.requests == []


def test_consecutive_streams_share_one_connection(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    client = LlmClient(llm_server.url, runtime=runtime)
    for _ in range(5):
        events = list(client.stream(REQUEST))
        assert isinstance(events[-1], Finished)
    client.complete(REQUEST)
    assert len(llm_server.requests) == 6
    assert llm_server.connections == 1


def test_closing_the_stream_early_closes_the_response(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    client = LlmClient(llm_server.url, runtime=runtime)
    llm_server.script(Text("one two three four"))
    stream = client.stream(REQUEST)
    assert next(stream) == TokenDelta("one")
    stream.close()
    # The half-read connection is dropped, so the next call connects anew.
    assert client.complete(REQUEST).message.content
    assert llm_server.connections == 2


def test_complete_stream_calls_back_and_returns_the_response(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("hello world", reasoning="hmm"))
    seen: list[StreamEvent] = []
    response = LlmClient(llm_server.url, runtime=runtime).complete_stream(REQUEST, seen.append)
    assert response.message.content == "hello world"
    assert response.message.reasoning == "hmm"
    assert isinstance(seen[-1], Finished) and seen[-1].response == response
