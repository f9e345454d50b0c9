"""Interop with the official ``a2a-sdk``, each side a real process, over both HTTP bindings.

The SDK's client (``tests/a2a/sdk_client.py``, a child process) against our
served agent; our client and :class:`A2AAgent` against an SDK server
(``tests/a2a/sdk_server.py``, Starlette on uvicorn, a child process).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import A2AAgent, A2AClient, A2AError, Agent, TestModel, ToolMessage
from agent_smith.a2a.wire import ArtifactUpdate, StatusUpdate, TaskView, text_message
from agent_smith.base.cancellation import CancellationSource
from agent_smith.base.paused_turn import ApprovalRequest
from agent_smith.errors import CancelledError, TransportError
from agent_smith.llm.testing import call
from tests.a2a.conftest import NOTES, TIMEOUT

pytest.importorskip("a2a", reason="the a2a-sdk peer is a test dependency")
pytest.importorskip("uvicorn", reason="the a2a-sdk server runs on uvicorn")

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_sdk_client_talks_to_our_server(served: str, binding: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.a2a.sdk_client", served, binding],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["card"] == {"name": "notes", "skills": ["save_note", "hold"]}
    assert seen["send"] == {"state": "TASK_STATE_COMPLETED", "text": "You said: hello"}
    stream = seen["stream"]
    assert stream["kinds"][:2] == ["task", "status_update"]
    assert stream["kinds"].count("artifact_update") > 2
    assert (stream["text"], stream["last"]) == ("You said: stream me", "TASK_STATE_COMPLETED")
    assert seen["get"] == {"state": "TASK_STATE_COMPLETED", "history": 1, "context": True}
    assert seen["input_required"] == {
        "asked": "TASK_STATE_INPUT_REQUIRED",
        "data": True,
        "then": "TASK_STATE_COMPLETED",
        "text": "Done: saved: milk",
    }
    assert NOTES == ["milk"]
    assert seen["cancel"] == {"state": "TASK_STATE_CANCELED", "stream_last": "TASK_STATE_CANCELED"}
    assert seen["unknown"] == "TaskNotFoundError"


# -- our client against the SDK's server -------------------------------------------


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.a2a.sdk_server", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(TIMEOUT)
        assert process.stderr is not None
        process.stderr.close()


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    pause = threading.Event()
    for _ in range(300):
        if process.poll() is not None:
            raise AssertionError("the a2a-sdk server exited at start")
        try:
            A2AClient(url, timeout=2).card()
            return
        except TransportError:
            pause.wait(0.1)
    raise AssertionError("the a2a-sdk server did not start in 30 s")


@pytest.mark.parametrize("binding", BINDINGS)
def test_our_client_talks_to_the_sdk_server(sdk_server: str, binding: str) -> None:
    client = A2AClient(sdk_server, binding=binding)
    card = client.card()
    assert (card.name, card.binding, card.streaming) == ("sdk echo", binding, True)
    task = client.send(text_message("hello you"))
    assert isinstance(task, TaskView)
    assert (task.state, task.text) == ("TASK_STATE_COMPLETED", "echo: hello you")
    assert client.get_task(task.id).state == "TASK_STATE_COMPLETED"
    items = list(client.stream(text_message("one two three")))
    chunks = [i.text for i in items if isinstance(i, ArtifactUpdate)]
    assert len(chunks) == 4 and "".join(chunks) == "echo: one two three"
    assert [i.state for i in items if isinstance(i, StatusUpdate)][-1] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", BINDINGS)
def test_input_required_and_cancel_with_the_sdk_server(sdk_server: str, binding: str) -> None:
    client = A2AClient(sdk_server, binding=binding)
    asked = client.send(text_message("save milk"))
    assert isinstance(asked, TaskView) and asked.state == "TASK_STATE_INPUT_REQUIRED"
    assert asked.status_text == "Save 'milk'? yes or no"
    done = client.send(text_message("yes", task_id=asked.id, context_id=asked.context_id))
    assert isinstance(done, TaskView)
    assert (done.state, done.status_text) == ("TASK_STATE_COMPLETED", "saved milk")

    source = CancellationSource()
    stream = client.stream(text_message("wait"), cancel=source.token)
    first = next(stream)
    task_id = first.id if isinstance(first, TaskView) else first.task_id  # type: ignore[union-attr]
    source.cancel()
    with pytest.raises(CancelledError):
        list(stream)
    assert client.cancel_task(task_id).state == "TASK_STATE_CANCELED"
    with pytest.raises(A2AError) as caught:
        client.get_task("no-such-task")
    assert caught.value.rpc_code == -32001
    failed = client.send(text_message("fail"))
    assert isinstance(failed, TaskView) and failed.state == "TASK_STATE_FAILED"


def test_an_sdk_agent_as_a_tool_asks_our_approver(sdk_server: str) -> None:
    remote = A2AAgent(sdk_server)
    assert remote.name == "sdk_echo"
    questions: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        questions.append(request)
        return True

    def respond(request: Any) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"remote said: {last.content}"
        return call("sdk_echo", task="save tea")

    agent = Agent(TestModel(respond=respond), tools=[remote], approver=approver)  # type: ignore[arg-type]
    assert agent.send("go").content == "remote said: saved tea"
    assert [q.arguments for q in questions] == [{"question": "Save 'tea'? yes or no"}]
