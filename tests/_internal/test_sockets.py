"""sockets: find a streamed response's socket and wake a reader blocked on it."""

from __future__ import annotations

import threading

import requests

from agent_smith._internal.sockets import shutdown_socket, socket_of
from tests.support.llm_server import Chunks, ScriptedLlmServer

BOUND = 10.0  # generous: a reader that is not woken fails the test instead of hanging


def test_shutdown_wakes_a_reader_blocked_on_a_silent_stream(
    llm_server: ScriptedLlmServer,
) -> None:
    gate = threading.Event()  # the server holds the stream open until it is set
    llm_server.script(Chunks("data: first\n\n", gate))
    with requests.Session() as session:
        response = session.post(llm_server.url, json={"stream": True}, stream=True, timeout=BOUND)
        chunks = response.iter_content(chunk_size=None)
        assert next(chunks) == b"data: first\n\n"
        assert socket_of(response) is not None
        reading = threading.Event()
        woken = threading.Event()
        outcome: list[object] = []

        def read_on() -> None:
            reading.set()
            try:
                outcome.append(next(chunks, b""))
            except requests.RequestException as err:
                outcome.append(err)
            woken.set()

        reader = threading.Thread(target=read_on, name="test-blocked-reader")
        reader.start()
        assert reading.wait(BOUND)
        assert shutdown_socket(response) is True
        assert woken.wait(BOUND), "the blocked read did not return after shutdown"
        reader.join(BOUND)
        gate.set()
        response.close()
    assert not reader.is_alive()
    assert len(outcome) == 1  # end of stream or a connection error, never more data
    assert outcome[0] != b"data: first\n\n"


def test_shutdown_reports_a_response_without_a_socket() -> None:
    response = requests.Response()
    assert socket_of(response) is None
    assert shutdown_socket(response) is False
