"""End to end against a real llama.cpp server (see conftest.py for which one).

The model is real (the default local model, Qwen2.5-Coder-0.5B, unless
LLAMA_SERVER_URL names another server), so the assertions are on structure:
finish reasons, usage, streamed text equal to the assembled reply, a tool
call made and its result sent back and used. Then the llama-server specifics
of DESIGN §7 that any model produces on demand (the usage frame, context
overflow, a kept-alive connection closed after a stream), and
LocalLlamaServer itself. The specifics that need a native tool call cut at
an exact token (ids without ``call_``, ``content: ""`` beside calls, a reply
cut inside the arguments) are pinned on recordings of the real server in
tests/llm/test_llama_recorded.py: this model writes its calls as text.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import urllib3.connectionpool

from agent_smith import (
    Agent,
    AgentConfig,
    AgentRequest,
    AgentStopped,
    AssistantTurn,
    ConfigError,
    FinalAnswer,
    LlmApiError,
    LlmClient,
    LlmRequest,
    Runtime,
    SamplingParams,
    TokenDelta,
    ToolCallRequested,
    ToolMessage,
    ToolResultReady,
    TransportError,
    UserMessage,
    tool,
)
from agent_smith.llm.local_server import LocalLlamaServer
from tests.integration.conftest import LlamaEndpoint, require_local_llama
from tests.support.local_llama import require_xllamacpp

pytestmark = [pytest.mark.slow, pytest.mark.llama, pytest.mark.usefixtures("no_thread_leak")]

ASK_WEATHER = "Use the get_weather tool to find the weather in Paris, then tell me."
WEATHER = "Sunny and 21 C in Paris."
#: Greedy, so a real model's reply is the same on every run of one build; and short.
SAMPLING = SamplingParams(temperature=0, max_tokens=128)
#: A generous bound: a real model on two shared cores can take its time (one slot, queued).
REQUEST_TIMEOUT = 300.0


@pytest.fixture
def llm(llama_endpoint: LlamaEndpoint, runtime: Runtime) -> LlmClient:
    return llama_endpoint.client(runtime, SAMPLING, request_timeout=REQUEST_TIMEOUT)


@pytest.fixture
def local_llm(local_llama: LocalLlamaServer, runtime: Runtime) -> LlmClient:
    """A client for the test model started here, even when LLAMA_SERVER_URL is set."""
    return LlmClient(
        local_llama.endpoint,
        "local",
        request_timeout=REQUEST_TIMEOUT,
        default_sampling=SAMPLING,
        runtime=runtime,
    )


def raw_chat(url: str, body: dict[str, Any], api_key: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return requests.post(
        f"{url}/v1/chat/completions",
        json={"temperature": 0, **body},
        headers=headers,
        timeout=120,
    )


def sse_data(body: str) -> list[Any]:
    """The JSON payloads of an SSE body, ``[DONE]`` as the string."""
    frames = []
    for line in body.splitlines():
        if line.startswith("data: "):
            data = line[len("data: ") :]
            frames.append(data if data == "[DONE]" else json.loads(data))
    return frames


# -- the scenarios of issue 7 item 1 (and item 2 with LLAMA_SERVER_URL) -------


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_plain_reply_with_usage(llm: LlmClient, stream: bool) -> None:
    request = LlmRequest((UserMessage("Say hello in one short sentence."),))
    if stream:
        events = list(llm.stream(request))
        response = events[-1].response  # type: ignore[union-attr]
        text = "".join(e.text for e in events if isinstance(e, TokenDelta))
        assert text == response.message.content
    else:
        response = llm.complete(request)

    assert response.finish_reason == "stop"
    assert response.message.content
    assert not response.message.tool_calls
    usage = response.usage
    assert usage is not None and usage.prompt > 0 and usage.completion > 0
    assert usage.total == usage.prompt + usage.completion


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_agent_calls_a_tool_and_uses_its_result_on_the_next_turn(
    llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    asked: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        asked.append(city)
        return WEATHER

    # Three rounds: the call; after its result a 0.5B model writes the call
    # again, which the agent answers with its note; then the answer. A model
    # that still does not answer ends the turn with a stop, not a loop.
    config = AgentConfig(max_iterations=3, stream=stream)
    agent = Agent(
        llm, "You are a weather assistant.", [get_weather], config=config, runtime=runtime
    )
    events: list[Any] = []
    with contextlib.suppress(AgentStopped):
        events.extend(agent.stream(ASK_WEATHER))

    (call, *_) = [e.call for e in events if isinstance(e, ToolCallRequested)]
    assert call.name == "get_weather" and "paris" in call.arguments["city"].lower()
    (result, *_) = [e.message for e in events if isinstance(e, ToolResultReady)]
    assert not result.is_error and result.content == WEATHER and result.tool_call_id == call.id
    turns = [e for e in events if isinstance(e, AssistantTurn)]
    assert turns[0].message.tool_calls[0] == call  # native, or recovered from the text
    if isinstance(events[-1], FinalAnswer) and events[-1].message.content:
        assert any(isinstance(e, TokenDelta) for e in events) is stream
    assert [m.role for m in agent.history[:3]] == ["user", "assistant", "tool"]
    first_usage = agent.usage
    assert first_usage.prompt > 0 and first_usage.completion > 0

    # The next turn: the server takes the whole history back (the call with
    # its id, generated here if it was recovered, and the result) and the
    # model answers from the result.
    second = agent.send(
        AgentRequest("Thanks. Answer in one short sentence: was it sunny?", stream=stream)
    )
    assert not second.tool_calls
    assert "sunny" in second.content.lower() or "yes" in second.content.lower()
    assert second.usage is not None and second.usage.prompt > 0 and second.usage.completion > 0
    calls = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert calls[0].tool_call_id == agent.history[1].tool_calls[0].id  # type: ignore[union-attr]


# -- llama-server specifics (DESIGN §7), pinned on the real server -----------


def test_streamed_usage_comes_in_a_final_frame_without_choices(
    local_llama: LocalLlamaServer, local_llm: LlmClient
) -> None:
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16,
    }
    frames = sse_data(raw_chat(local_llama.endpoint, body).text)
    assert frames[-1] == "[DONE]"
    usage_frame = frames[-2]
    assert usage_frame["choices"] == []
    assert usage_frame["usage"]["total_tokens"] > 0
    assert isinstance(usage_frame["timings"], dict)  # non-standard, must be ignored
    assert all("usage" not in f for f in frames[:-2])

    short = SamplingParams(temperature=0, max_tokens=16)
    request = LlmRequest((UserMessage("hi"),), sampling=short)
    events = list(local_llm.stream(request))
    finished = events[-1]
    assert finished.usage is not None  # type: ignore[union-attr]
    assert finished.usage.total == usage_frame["usage"]["total_tokens"]  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_context_overflow_is_an_http_400_api_error_even_when_streaming(
    small_context: LocalLlamaServer, runtime: Runtime, stream: bool
) -> None:
    raw = raw_chat(
        small_context.endpoint,
        {"messages": [{"role": "user", "content": "word " * 1000}], "stream": True},
    )
    assert raw.status_code == 400
    assert raw.headers["Content-Type"].startswith("application/json")

    llm = LlmClient(small_context.endpoint, runtime=runtime)
    request = LlmRequest((UserMessage("word " * 1000),))
    with pytest.raises(LlmApiError, match="exceeds the available context size") as caught:
        if stream:
            list(llm.stream(request))
        else:
            llm.complete(request)
    assert caught.value.http_status == 400
    assert "n_ctx" in caught.value.body_excerpt


@pytest.fixture(scope="module")
def small_context() -> Iterator[LocalLlamaServer]:
    # 256 tokens is llama.cpp's floor: asking for less gets 256.
    with LocalLlamaServer(require_local_llama(), ctx_size=256, threads=2) as server:
        yield server


def test_request_on_a_connection_the_server_closed_after_a_stream_is_retried(
    local_llama: LocalLlamaServer,
    local_llm: LlmClient,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """llama-server drops idle kept-alive connections (``Keep-Alive: timeout=5``).

    The race DESIGN §7 describes — the request goes out on a pooled socket the
    server has just closed, and fails before any byte of a reply — is made
    certain here: wait until the server really closed the pooled connection,
    and stop urllib3 from noticing before it reuses it.
    """
    request = LlmRequest((UserMessage("hi"),))
    assert [type(e).__name__ for e in local_llm.stream(request)][-1] == "Finished"

    sock = pooled_socket(runtime, local_llama.endpoint)
    readable, _, _ = select.select([sock], [], [], 30.0)
    assert readable, "the server did not close the idle connection within 30 s"
    assert sock.recv(1, socket.MSG_PEEK) == b""  # EOF: closed by the server

    monkeypatch.setattr(urllib3.connectionpool, "is_connection_dropped", lambda conn: False)
    response = local_llm.complete(request)
    assert response.message.content and response.finish_reason in ("stop", "length")


def pooled_socket(runtime: Runtime, url: str) -> socket.socket:
    """The one idle kept-alive socket in the runtime's connection pools for ``url``."""
    manager = runtime.session.get_adapter(url).poolmanager  # type: ignore[attr-defined]
    port = int(url.rsplit(":", 1)[1])
    idle = [
        conn.sock
        for key in list(manager.pools.keys())
        if key.key_port == port
        for conn in list(manager.pools[key].pool.queue)
        if conn is not None and conn.sock is not None
    ]
    assert len(idle) == 1, f"expected one pooled connection, found {len(idle)}"
    return idle[0]  # type: ignore[no-any-return]


# -- LocalLlamaServer ----------------------------------------------------------


def test_local_server_leaves_no_process_port_or_thread_behind() -> None:
    model = require_local_llama()
    with LocalLlamaServer(model, ctx_size=512, threads=1) as server:
        endpoint, port = server.endpoint, server.port
        assert endpoint == f"http://127.0.0.1:{port}"
        assert requests.get(f"{endpoint}/health", timeout=10).json() == {"status": "ok"}
        process = server._process
        assert process is not None
    assert process.returncode is not None
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{endpoint}/health", timeout=10)
    with socket.socket() as probe:  # the port is free for anyone again
        probe.bind(("127.0.0.1", port))
    with pytest.raises(ConfigError, match="not running"):
        _ = server.endpoint


def test_local_server_refusing_to_start_quotes_llama_cpp(tmp_path: Any) -> None:
    require_xllamacpp()  # llama.cpp itself refuses the file
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a GGUF file")
    with pytest.raises(TransportError, match=r"failed to start: .*model"):
        LocalLlamaServer(bogus).start()


def test_local_server_on_a_taken_port_says_so(local_llama: LocalLlamaServer) -> None:
    server = LocalLlamaServer(local_llama.model_path, port=local_llama.port, ctx_size=256)
    try:
        with pytest.raises(TransportError, match=f"couldn't bind 127.0.0.1:{local_llama.port}"):
            server.start()
    finally:
        server.close()


def test_local_server_stops_when_its_owner_dies_without_closing() -> None:
    """The child exits at the end of its stdin, so a crashed parent leaves no server."""
    model = require_local_llama()
    script = (
        "import os, sys\n"
        "from agent_smith.llm.local_server import LocalLlamaServer\n"
        f"s = LocalLlamaServer({str(model)!r}, ctx_size=256, threads=1).start()\n"
        "print(s.port, s._process.pid, flush=True)\n"
        "os._exit(3)\n"  # no close(), no atexit, no finally
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr
    port, pid = (int(x) for x in done.stdout.split())
    wait_for_exit(pid, timeout=30.0)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/health", timeout=10)


def wait_for_exit(pid: int, *, timeout: float) -> None:
    """Wait until ``pid`` (not our child, so no wait()) is gone."""
    if hasattr(os, "pidfd_open"):  # Linux: the fd turns readable when the process exits
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            return
        try:
            readable, _, _ = select.select([fd], [], [], timeout)
            assert readable, f"process {pid} still running after {timeout} s"
        finally:
            os.close(fd)
        return
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while _alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still running after {timeout} s"
        tick.wait(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
