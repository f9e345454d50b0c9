"""``agent-smith web``: serves the dev UI and the protocol endpoints until Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from agent_smith.cli.main import main
from tests.support.llm_server import ScriptedLlmServer, Text
from tests.support.provider_wire import speak
from tests.support.signals import default_sigint

ROOT = Path(__file__).resolve().parents[2]
#: How long the child may take to start or to stop (seconds).
STARTUP_BOUND = 240


@contextlib.contextmanager
def _web(*args: str, cwd: Path = ROOT, data_home: Path | None = None) -> Iterator[tuple[str, str]]:
    """``agent-smith web ARGS --port 0`` in a child process (``$XDG_DATA_HOME``:
    ``data_home``); yields its URL and startup line, then Ctrl-C."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    if data_home is not None:
        env["XDG_DATA_HOME"] = str(data_home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_smith", "web", *args, "--port", "0"],
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        preexec_fn=default_sigint,  # Ctrl-C reaches it also from a background job
    )
    try:
        assert proc.stderr is not None
        # Generous: the demo agent starts its MCP server first, slow on a loaded machine.
        ready, _, _ = select.select([proc.stderr], [], [], STARTUP_BOUND)
        assert ready, "agent-smith web did not start"
        line = proc.stderr.readline().decode()
        assert line.startswith("agent-smith web: open http://127.0.0.1:"), line
        yield line.split("open ", 1)[1].split("/ ", 1)[0], line
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(STARTUP_BOUND) in (0, 130)
        if proc.stderr is not None:
            proc.stderr.close()


def _say_hi(url: str) -> str:
    message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    return requests.post(
        f"{url}/api/chat", json={"id": "c", "messages": [message]}, timeout=STARTUP_BOUND
    ).text


def test_agent_smith_web_serves_the_demo_agent_until_interrupted(
    llm_server: ScriptedLlmServer, tmp_path: Path
) -> None:
    store = tmp_path / "web.db"
    with _web("-e", llm_server.url, "--sessions", str(store), "--sandbox", str(tmp_path)) as (
        url,
        _,
    ):
        assert "<title>agent_smith dev UI</title>" in requests.get(url + "/", timeout=30).text
        llm_server.script(Text("Hello from the model."))
        assert '"delta":" model."' in _say_hi(url)
        tools = {t["function"]["name"] for t in llm_server.requests[-1]["tools"]}
        assert {"calculator", "read_file", "write_file", "run_command"} <= tools
    assert store.exists()  # the conversation was kept


def test_agent_smith_web_keeps_conversations_in_the_users_data_directory(
    llm_server: ScriptedLlmServer, tmp_path: Path
) -> None:
    checkout, data_home = tmp_path / "checkout", tmp_path / "data"
    checkout.mkdir()
    args = ("-e", llm_server.url, "--sandbox", str(checkout))
    with _web(*args, cwd=checkout, data_home=data_home) as (url, started):
        store = data_home / "agent_smith" / "web.db"
        assert f"conversations in {store});" in started  # the startup line says where
        llm_server.script(Text("Hello from the model."))
        _say_hi(url)
    assert store.is_file()  # its folder created on first use
    assert list(checkout.iterdir()) == []  # nothing left in the working directory


def test_agent_smith_web_speaks_the_provider_it_is_given(tmp_path: Path) -> None:
    with ScriptedLlmServer() as server:
        speak(server, "anthropic", Text("Hello from Claude."))
        args = ("--provider", "anthropic", "-e", server.url, "-m", "wire-model", "-k", "key-1")
        with _web(*args, "--sessions", str(tmp_path / "w.db"), "--sandbox", str(tmp_path)) as (
            url,
            _,
        ):
            assert '"delta":" Claude."' in _say_hi(url)
    assert server.paths == ["/v1/messages"]


def test_a_taken_port_is_one_error_line(
    llm_server: ScriptedLlmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status = main(["web", "-e", llm_server.url, "--port", str(port),
                       "--sessions", str(tmp_path / "w.db")])  # fmt: skip
    assert status == 1
    assert capsys.readouterr().err.startswith("agent-smith: error: ")
