"""Tasks (SEP-1686) against a scripted server: the handle's status, wait, result and cancel."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import McpClient
from agent_smith.errors import AgentTimeoutError, McpProtocolError
from tests.mcp.scripted import ScriptedServer

Connect = Callable[..., McpClient]


def task(status: str, **extra: Any) -> dict[str, Any]:
    return {"taskId": "t1", "status": status, "pollInterval": 50, **extra}


class TaskServer(ScriptedServer):
    """Makes ``tools/call`` a task; ``tasks/get`` reports ``self.state``."""

    def __init__(self) -> None:
        super().__init__()
        self.state = "working"
        self.calls: list[dict[str, Any]] = []
        self.handlers.update(
            {
                "tools/call": self.call,
                "tasks/get": lambda p: task(self.state),
                "tasks/result": lambda p: {"content": [{"type": "text", "text": "report"}]},
                "tasks/cancel": lambda p: task("cancelled"),
            }
        )

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(params)
        return {"task": task("working", ttl=60_000)}


def test_a_task_handle_hears_status_notifications_and_fetches_the_result(
    scripted: Connect,
) -> None:
    server = TaskServer()
    client = scripted(server)
    handle = client.call_tool("echo", {"q": 1}, task=True, task_ttl=60)
    assert server.calls[0]["task"] == {"ttl": 60_000}
    assert handle.task_id == "t1" and handle.status.status == "working"
    waiter_done = threading.Event()
    seen: list[str] = []

    def waiter() -> None:
        seen.append(handle.wait(timeout=10).status)
        waiter_done.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    server.state = "completed"  # a poll may see it; the notification surely says it
    server.push(
        {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task("completed")}
    )
    assert waiter_done.wait(10)
    thread.join(5)
    assert seen == ["completed"]
    assert handle.result().content == "report"


def test_wait_times_out_while_the_task_works_and_cancel_ends_it(scripted: Connect) -> None:
    client = scripted(TaskServer())
    handle = client.call_tool("echo", {}, task=True)
    with pytest.raises(AgentTimeoutError, match="still working"):
        handle.wait(timeout=0.2)
    assert handle.cancel().status == "cancelled" and handle.status.done


def test_a_server_that_makes_no_task_is_a_protocol_error(scripted: Connect) -> None:
    client = scripted(ScriptedServer())
    with pytest.raises(McpProtocolError, match="task"):
        client.call_tool("echo", {}, task=True)
