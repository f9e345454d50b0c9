"""OllamaClient's context window, asked of a loopback Ollama wire fake (/api/ps, /api/show)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import OllamaClient, Runtime
from agent_smith.llm.ollama_window import DEFAULT_NUM_CTX
from agent_smith.llm.server_props import MAX_ASKS
from tests.support.fake_http import FakeHttpServer, QuietHandler, send_json

JsonObject = dict[str, Any]


def running(name: str, context_length: int) -> JsonObject:
    """One ``/api/ps`` entry as Ollama lists a loaded model."""
    return {
        "name": name,
        "model": name,
        "size": 5618579456,
        "digest": "dae161e27b0e",
        "details": {"family": "qwen2", "parameter_size": "7.6B"},
        "expires_at": "2026-01-01T00:05:00Z",
        "size_vram": 5618579456,
        "context_length": context_length,
    }


def shown(trained: int, parameters: str = "") -> JsonObject:
    """An ``/api/show`` answer: the Modelfile's parameters and the trained length."""
    return {
        "parameters": parameters,
        "details": {"family": "qwen2"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": trained},
    }


class FakeOllama(FakeHttpServer):
    """Answers ``GET /api/ps`` and ``POST /api/show`` as set; counts and records each ask."""

    def __init__(self) -> None:
        self.loaded: list[JsonObject] = []
        self.show: JsonObject | None = None  # None: 404 (no such model)
        self.drop = False  # close the connection without an answer
        self.asked: list[str] = []
        self.shown_for: list[JsonObject] = []
        self.lock = threading.Lock()
        super().__init__(_Handler, name="test-fake-ollama")


class _Handler(QuietHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOllama

    def _answer(self, payload: JsonObject | None) -> None:
        with self.fake.lock:
            self.fake.asked.append(self.path)
            drop = self.fake.drop
        if drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif payload is None:
            send_json(self, 404, {"error": "model 'qwen2.5-coder:7b' not found"})
        else:
            send_json(self, 200, payload)

    def do_GET(self) -> None:
        self._answer({"models": list(self.fake.loaded)} if self.path == "/api/ps" else None)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with self.fake.lock:
            self.fake.shown_for.append(body)
        self._answer(self.fake.show if self.path == "/api/show" else None)


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as fake:
        yield fake


def client(fake: FakeOllama, runtime: Runtime, **options: Any) -> OllamaClient:
    return OllamaClient(fake.base, "qwen2.5-coder:7b", runtime=runtime, **options)


def test_a_configured_num_ctx_is_the_window_and_nothing_is_asked(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    model = client(ollama, runtime, options={"num_ctx": 16384})
    assert model.context_window() == 16384
    assert model.capabilities.context_size == 16384
    assert ollama.asked == []


def test_a_loaded_model_has_the_window_its_runner_runs_at_asked_once(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    ollama.loaded = [running("llama3.2:latest", 2048), running("qwen2.5-coder:7b", 8192)]
    model = client(ollama, runtime)
    assert model.context_window(ask=False) is None  # nothing known, nothing asked
    assert ollama.asked == []
    assert model.context_window() == 8192
    assert model.context_window() == 8192
    assert ollama.asked == ["/api/ps"]
    assert model.capabilities.context_size == 8192


def test_an_endpoint_with_a_query_is_asked_at_its_api_root(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    ollama.loaded = [running("qwen2.5-coder:7b", 8192)]
    model = OllamaClient(f"{ollama.base}/api/chat?tenant=a", "qwen2.5-coder:7b", runtime=runtime)
    assert model.context_window() == 8192
    assert ollama.asked == ["/api/ps"]


def test_a_model_name_without_a_tag_matches_its_latest(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    ollama.loaded = [running("qwen3:latest", 40960)]
    model = OllamaClient(ollama.base, "qwen3", runtime=runtime)
    assert model.context_window() == 40960


def test_a_model_not_loaded_gets_the_default_under_its_trained_length_until_it_is(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    ollama.show = shown(trained=32768)
    model = client(ollama, runtime)
    # not the trained 32768: Ollama runs at its default unless told otherwise
    assert model.context_window() == DEFAULT_NUM_CTX
    assert ollama.shown_for == [{"model": "qwen2.5-coder:7b"}]
    assert model.context_window(ask=False) == DEFAULT_NUM_CTX  # provisional, but known
    # a request loaded it, at the server's own default (OLLAMA_CONTEXT_LENGTH, or a large GPU)
    ollama.loaded = [running("qwen2.5-coder:7b", 32768)]
    assert model.context_window() == 32768
    assert model.context_window() == 32768
    assert ollama.asked == ["/api/ps", "/api/show", "/api/ps"]


def test_a_modelfile_num_ctx_counts_and_the_trained_length_caps_it(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    parameters = 'num_ctx                        8192\nstop "<|im_end|>"'
    ollama.show = shown(trained=2048, parameters=parameters)
    assert client(ollama, runtime).context_window() == 2048
    ollama.show = shown(trained=131072, parameters="num_ctx 8192\nnum_keep 24")
    assert client(ollama, runtime).context_window() == 8192


def test_an_unknown_model_has_no_window(ollama: FakeOllama, runtime: Runtime) -> None:
    model = client(ollama, runtime)  # /api/show answers 404
    assert model.context_window() is None
    assert model.capabilities.context_size is None


def test_no_answer_is_asked_again_later_and_not_forever(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    ollama.drop = True
    model = client(ollama, runtime)
    assert model.context_window() is None
    ollama.drop = False
    ollama.loaded = [running("qwen2.5-coder:7b", 8192)]
    assert model.context_window() == 8192
    assert ollama.asked == ["/api/ps", "/api/ps"]
    ollama.drop = True
    stubborn = client(ollama, runtime)
    for _ in range(MAX_ASKS + 2):
        assert stubborn.context_window() is None
    assert len(ollama.asked) == 2 + MAX_ASKS


def test_an_agent_fits_its_requests_into_the_window_ollama_names(
    ollama: FakeOllama, runtime: Runtime
) -> None:
    from agent_smith.agent.context_fit import ContextFit

    ollama.loaded = [running("qwen2.5-coder:7b", 8192)]
    fit = ContextFit(None, client(ollama, runtime))  # as an agent with no context_window set
    assert fit.window(ask=False) is None
    assert fit.window(ask=True) == 8192
    assert ContextFit(4096, client(ollama, runtime)).window(ask=True) == 4096
    assert ollama.asked == ["/api/ps"]  # AgentConfig.context_window set: the server is not asked
