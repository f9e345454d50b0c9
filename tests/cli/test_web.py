"""``agent-smith web``: serves the dev UI and the protocol endpoints until Ctrl-C."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from agent_smith.cli.main import main
from tests.support.llm_server import ScriptedLlmServer, Text

ROOT = Path(__file__).resolve().parents[2]


def test_agent_smith_web_serves_the_demo_agent_until_interrupted(
    llm_server: ScriptedLlmServer, tmp_path: Path
) -> None:
    store = tmp_path / "web.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_smith", "web", "-e", llm_server.url, "--port", "0",
         "--sessions", str(store), "--sandbox", str(tmp_path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready, "agent-smith web did not start"
        line = proc.stderr.readline().decode()
        assert line.startswith("agent-smith web: open http://127.0.0.1:"), line
        url = line.split("open ", 1)[1].split("/ ", 1)[0]
        assert "<title>agent_smith dev UI</title>" in requests.get(url + "/", timeout=30).text
        llm_server.script(Text("Hello from the model."))
        message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        reply = requests.post(
            f"{url}/api/chat", json={"id": "c", "messages": [message]}, timeout=30
        )
        assert '"delta":" model."' in reply.text
        tools = {t["function"]["name"] for t in llm_server.requests[-1]["tools"]}
        assert {"calculator", "read_file", "write_file", "run_command"} <= tools
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) in (0, 130)
        if proc.stderr is not None:
            proc.stderr.close()
    assert store.exists()  # the conversation was kept


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
