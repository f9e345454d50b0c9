"""The CLI's start-up check: one GET to the models route, one line when nothing answers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
import requests

from agent_smith.cli import endpoint_check
from agent_smith.cli.endpoint_check import check_endpoint, models_url
from agent_smith.cli.repl import Fatal
from tests.support.llm_server import ScriptedLlmServer
from tests.support.ports import free_port


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/models"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/models"),
        ("http://localhost:11434/v1", "http://localhost:11434/v1/models"),
        ("https://api.example.com/v1/", "https://api.example.com/v1/models"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/models"),
        ("http://proxy/llm?team=a", "http://proxy/llm/models?team=a"),
    ],
)
def test_the_models_route_sits_beside_chat_completions(endpoint: str, url: str) -> None:
    assert models_url(endpoint) == url


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as s:
        yield s


def test_any_http_answer_passes_even_an_error_status(session: requests.Session) -> None:
    with ScriptedLlmServer() as server:  # it answers GET with 501: still a server
        check_endpoint(session, server.url, api_key="sk-1")


def test_nothing_listening_is_one_fatal_line_naming_the_url_and_what_to_do(
    session: requests.Session,
) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Fatal) as caught:
        check_endpoint(session, endpoint, api_key=None)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"nothing answers at {endpoint} (")
    assert "refused" in message.lower()
    assert "--endpoint URL" in message and "--local" in message


def test_the_key_is_sent_and_never_named(session: requests.Session) -> None:
    seen: list[str] = []
    ready = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def answer() -> None:
        ready.set()
        conn, _ = listener.accept()
        with conn:
            seen.append(conn.recv(65536).decode())
            conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, name="test-endpoint-401")
    thread.start()
    try:
        assert ready.wait(10)
        check_endpoint(session, f"http://127.0.0.1:{listener.getsockname()[1]}", api_key="sk-9")
    finally:
        thread.join(10)
        listener.close()
    assert seen[0].startswith("GET /v1/models HTTP/1.1")
    assert "Authorization: Bearer sk-9" in seen[0]


def test_a_server_that_accepts_but_is_slow_to_answer_passes(
    session: requests.Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(endpoint_check, "READ_TIMEOUT", 0.2)
    with socket.socket() as listener:  # the kernel accepts; nobody ever answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        check_endpoint(session, f"http://127.0.0.1:{listener.getsockname()[1]}", api_key=None)
