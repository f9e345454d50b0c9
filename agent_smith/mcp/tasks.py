"""MCP tasks (SEP-1686): a ``tools/call`` that runs on the server while the client goes on.

``McpClient.call_tool(name, args, task=True)`` sends the call with a
``task`` field; the server answers at once with the task it created, and
the client returns a :class:`McpTask` handle. Its status comes from the
server's ``notifications/tasks/status`` and from ``tasks/get`` (polled at
the server's ``pollInterval`` while someone waits); ``result()`` asks
``tasks/result`` (which the server answers once the task ended, relaying
any elicitation it needs meanwhile); ``cancel()`` sends ``tasks/cancel``.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import AgentTimeoutError, McpProtocolError
from ..tools.base import ToolResult

TERMINAL = frozenset({"completed", "failed", "cancelled"})
_DEFAULT_POLL = 1.0
_MAX_POLL = 10.0


@dataclass(frozen=True)
class TaskStatus:
    """What the server last said of a task (``status``: working, input_required, completed, ...)."""

    task_id: str
    status: str
    message: str | None = None
    poll_interval: float | None = None  # seconds
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        """Whether the task ended (completed, failed or cancelled)."""
        return self.status in TERMINAL


def parse_task(task: Any, *, server: str) -> TaskStatus:
    """A task object of the spec as a TaskStatus; McpProtocolError if it has no id or status."""
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        raise McpProtocolError(f"MCP server {server!r} sent a task without a taskId", server=server)
    status = task.get("status")
    message = task.get("statusMessage")
    poll = task.get("pollInterval")
    return TaskStatus(
        task_id=task["taskId"],
        status=status if isinstance(status, str) else "working",
        message=message if isinstance(message, str) else None,
        poll_interval=poll / 1000.0 if isinstance(poll, (int, float)) and poll > 0 else None,
        raw=task,
    )


class TaskRequest(Protocol):
    """The client's request path: ``method`` with ``params``, waiting up to ``timeout``."""

    def __call__(
        self, method: str, params: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]: ...


class McpTask:
    """A handle on one task: ``status``, ``wait(timeout)``, ``result()``, ``cancel()``.

    ``request`` sends the task requests; ``to_result`` turns the tool's
    result into a ToolResult (checked as a direct call's would be).
    """

    def __init__(
        self,
        tool: str,
        first: TaskStatus,
        *,
        request: TaskRequest,
        to_result: Callable[[dict[str, Any]], ToolResult],
        server: str,
    ) -> None:
        self.tool = tool
        self.task_id = first.task_id
        self._request = request
        self._to_result = to_result
        self._server = server
        self._status = first
        self._changed = threading.Condition()

    @property
    def status(self) -> TaskStatus:
        """The latest status heard (notifications, polls); :meth:`refresh` asks the server."""
        with self._changed:
            return self._status

    def refresh(self, *, timeout: float | None = None) -> TaskStatus:
        """Ask the server for the task's status now (``tasks/get``)."""
        result = self._request("tasks/get", {"taskId": self.task_id}, timeout=timeout)
        self.update(parse_task(result, server=self._server))
        return self.status

    def wait(self, timeout: float | None = None) -> TaskStatus:
        """Block until the task ended (or ``timeout`` seconds passed); its status then.

        Raises AgentTimeoutError when ``timeout`` passes first (the task goes on).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status
            if status.done:
                return status
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise AgentTimeoutError(
                    f"MCP task {self.task_id} ({self.tool}) still {status.status} "
                    f"after {timeout:g}s",
                    operation="tasks/get",
                    budget=timeout or 0.0,
                )
            pause = min(status.poll_interval or _DEFAULT_POLL, _MAX_POLL)
            with self._changed:  # a status notification wakes us early
                self._changed.wait(pause if left is None else min(pause, left))
            if not self.status.done:
                self.refresh()

    def result(self, *, timeout: float | None = None) -> ToolResult:
        """The tool's result once the task ended (``tasks/result`` waits for it on the server)."""
        raw = self._request("tasks/result", {"taskId": self.task_id}, timeout=timeout)
        return self._to_result(raw)

    def cancel(self, *, timeout: float | None = None) -> TaskStatus:
        """Ask the server to cancel the task (``tasks/cancel``); its status after."""
        result = self._request("tasks/cancel", {"taskId": self.task_id}, timeout=timeout)
        self.update(parse_task(result, server=self._server))
        return self.status

    def update(self, status: TaskStatus) -> None:
        """Take a newer status (from a notification or a poll) and wake waiters."""
        with self._changed:
            if not self._status.done:  # an ended task stays ended
                self._status = status
            self._changed.notify_all()

    def __repr__(self) -> str:
        return f"McpTask({self.tool!r}, id={self.task_id!r}, status={self.status.status!r})"


class TaskTable:
    """The tasks one client started, by id, so their status notifications find them.

    Weak: a handle nobody keeps is forgotten with its notifications.
    """

    def __init__(self, server: str) -> None:
        self._server = server
        self._tasks: weakref.WeakValueDictionary[str, McpTask] = weakref.WeakValueDictionary()

    def start(
        self,
        name: str,
        result: dict[str, Any],
        *,
        request: TaskRequest,
        to_result: Callable[[dict[str, Any]], ToolResult],
    ) -> McpTask:
        """The handle of the task a ``tools/call`` of ``name`` answered with."""
        if "task" not in result:
            raise McpProtocolError(
                f"MCP server {self._server!r} ran {name} without making it a task",
                server=self._server,
            )
        handle = McpTask(
            name,
            parse_task(result["task"], server=self._server),
            request=request,
            to_result=to_result,
            server=self._server,
        )
        self._tasks[handle.task_id] = handle
        return handle

    def on_status(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks/status``: update the task it names, if it is still kept."""
        handle = self._tasks.get(str(params.get("taskId")))
        if handle is not None:
            handle.update(parse_task(params, server=self._server))
