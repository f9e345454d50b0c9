"""``agent-smith [web] --a2a URL``: the demo agent calls a remote A2A agent.

The remote agent is ours (``tests/a2a/conftest.py``), served on 127.0.0.1;
the CLI runs in a child process on a scripted model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from agent_smith import A2AClient
from agent_smith.a2a.wire import TaskView, text_message
from agent_smith.cli.main import main
from tests.a2a.conftest import NOTES
from tests.cli.test_web import _web
from tests.support.approvals import tool_contents
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

ROOT = Path(__file__).resolve().parents[2]


def test_the_repl_calls_the_remote_agent_and_answers_its_approvals(
    served: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    flags = ("--a2a", served, "--yes")
    with ScriptedLlmServer() as llm:
        llm.script(
            Calls(("notes", {"task": "hello"})),
            Text("It said hello."),
            Calls(("notes", {"task": "save milk"})),
            Text("Saved."),
        )
        done = subprocess.run(
            [sys.executable, "-m", "agent_smith", "-e", llm.url, "--no-default-mcp", *flags],
            input="greet the notes agent\nsave milk there\n",
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "; A2A: notes." in done.stdout + done.stderr  # the banner names it
    offered = {t["function"]["name"]: t for t in llm.requests[0]["tools"]}
    assert "save_note" in offered["notes"]["function"]["description"]  # the card's skills
    assert tool_contents(llm.requests[1]) == ["You said: hello"]
    assert tool_contents(llm.requests[3]) == ["Done: saved: milk"]  # approved by --yes
    assert NOTES == ["milk"]


def test_the_dev_ui_agent_calls_the_remote_agent_and_is_served_over_a2a(
    served: str, tmp_path: Path
) -> None:
    with ScriptedLlmServer() as llm:
        llm.script(Calls(("notes", {"task": "hi there"})), Text("It answered."), Text("Hello."))
        args = ("-e", llm.url, "--a2a", served, "--a2a-serve")
        with _web(*args, "--sessions", str(tmp_path / "w.db"), "--sandbox", str(tmp_path)) as (
            url,
            _,
        ):
            message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "ask"}]}
            body = requests.post(
                f"{url}/api/chat", json={"id": "c", "messages": [message]}, timeout=60
            ).text
            itself = A2AClient(url)
            assert "notes" in [name for name, _ in itself.card().skills]
            answer = itself.send(text_message("hi"))
    assert '"output":"You said: hi there"' in body
    assert tool_contents(llm.requests[1]) == ["You said: hi there"]
    assert isinstance(answer, TaskView) and answer.text == "Hello."


def test_a_url_without_an_agent_card_is_one_error_line(
    llm_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["-e", llm_server.url, "--no-default-mcp", "--a2a", llm_server.url])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith(f"agent-smith: error: --a2a {llm_server.url}: "), err
    assert llm_server.requests == []  # stopped before the model was asked anything
