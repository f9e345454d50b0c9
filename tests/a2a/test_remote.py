"""A2AAgent: a remote A2A agent (ours, served on loopback) as a tool of a local agent."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

from agent_smith import (
    A2AAgent,
    A2AClient,
    Agent,
    AgentHooks,
    SubAgentEvent,
    TestModel,
    ToolMessage,
)
from agent_smith.a2a.wire import StatusUpdate
from agent_smith.base.paused_turn import ApprovalRequest
from agent_smith.llm.events import TokenDelta
from agent_smith.llm.testing import call
from tests.a2a.conftest import HOLDING, NOTES, TIMEOUT


def caller(remote: A2AAgent, task: str, **kwargs: Any) -> Agent:
    """A local agent whose model calls ``remote`` with ``task`` once, then repeats its result."""

    def respond(request: Any) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"remote said: {last.content}"
        return call(remote.name, task=task)

    return Agent(TestModel(respond=respond), tools=[remote], **kwargs)  # type: ignore[arg-type]


def test_the_card_names_the_tool_and_the_answer_is_its_result(served: str) -> None:
    remote = A2AAgent(served)
    assert remote.name == "notes"
    assert "save_note" in remote.schema.description
    events: list[SubAgentEvent] = []
    agent = caller(remote, "hello", hooks=AgentHooks(on_subagent_event=events.append))
    assert agent.send("go").content == "remote said: You said: hello"
    tokens = "".join(e.event.text for e in events if isinstance(e.event, TokenDelta))
    assert tokens == "You said: hello"
    states = [e.event.state for e in events if isinstance(e.event, StatusUpdate)]
    assert states[-1] == "TASK_STATE_COMPLETED"
    assert {(e.name, e.depth) for e in events} == {("notes", 1)}


def test_remote_input_required_goes_to_the_callers_approver(served: str) -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    remote = A2AAgent(served, name="notes", description="notes")
    agent = caller(remote, "save tea", approver=approver)
    assert agent.send("go").content == "remote said: Done: saved: tea"
    assert [(r.tool_name, r.arguments, r.agent) for r in asked] == [
        ("save_note", {"text": "tea"}, "notes")
    ]
    assert NOTES == ["tea"]


def test_a_denial_reaches_the_remote_agent(served: str) -> None:
    remote = A2AAgent(served, name="notes", description="notes")
    agent = caller(remote, "save jam", approver=lambda request: False)
    assert "denied" in agent.send("go").content
    assert NOTES == []


def test_without_an_approver_the_remote_task_is_cancelled(served: str) -> None:
    remote = A2AAgent(served, name="notes", description="notes")
    agent = caller(remote, "save salt")
    answer = agent.send("go").content
    assert "nobody can answer" in answer and "cancelled" in answer
    assert [t["status"]["state"] for t in listed_tasks(served)] == ["TASK_STATE_CANCELED"]


def test_a_cancelled_call_cancels_the_remote_task(served: str) -> None:
    remote = A2AAgent(served, name="notes", description="notes")
    agent = caller(remote, "wait")
    failure: list[BaseException] = []

    def run() -> None:
        try:
            agent.send("go")
        except BaseException as err:  # CancelledError is what the test expects
            failure.append(err)

    runner = threading.Thread(target=run, name="test-a2a-caller")
    runner.start()
    assert HOLDING.wait(TIMEOUT)
    agent.cancel()
    runner.join(TIMEOUT)
    assert [type(e).__name__ for e in failure] == ["CancelledError"]
    assert remote_task_cancelled(served)


def test_a_timed_out_call_cancels_the_remote_task(served: str) -> None:
    remote = A2AAgent(served, name="notes", description="notes", timeout=1.0)
    agent = caller(remote, "wait")
    assert "timed out" in agent.send("go").content
    assert remote_task_cancelled(served)


def remote_task_cancelled(url: str) -> bool:
    """Whether the one remote task ends cancelled (waited for with a bound).

    The abandoned call cancels the remote task on its own thread, just after
    the caller's turn (or the call's timeout) gave up on it.
    """
    client = A2AClient(url)
    task_id = listed_tasks(url)[0]["id"]
    settled = threading.Event()
    for _ in range(300):
        if client.get_task(task_id).state != "TASK_STATE_WORKING":
            settled.set()
            break
        settled.wait(0.1)
    return client.get_task(task_id).state == "TASK_STATE_CANCELED"


def test_an_unreachable_agent_is_an_error_result() -> None:
    remote = A2AAgent("http://127.0.0.1:9", name="gone", description="gone")
    agent = caller(remote, "hi")
    assert "failed" in agent.send("go").content


@pytest.mark.parametrize("timeout", [0, -1])
def test_the_timeout_must_be_positive(timeout: float) -> None:
    from agent_smith import ConfigError

    with pytest.raises(ConfigError):
        A2AAgent("http://127.0.0.1:9", timeout=timeout)


def listed_tasks(url: str) -> list[dict[str, Any]]:
    """The served agent's tasks (JSON-RPC ``ListTasks``), newest first."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    tasks: list[dict[str, Any]] = requests.post(f"{url}/a2a", json=body, timeout=TIMEOUT).json()[
        "result"
    ]["tasks"]
    return tasks
