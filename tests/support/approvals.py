"""Helpers for approval tests: tools that need approval, a recording approver, result shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

from agent_smith import ApprovalRequest, FullMemory, Message, Tool, tool


class Ledger:
    """What the test tools did, from whichever thread ran them."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self._lock = threading.Lock()

    def add(self, what: str) -> None:
        with self._lock:
            self.ran.append(what)


class RecordingApprover:
    """Records every request it is asked about and gives one answer."""

    def __init__(self, answer: Any = True) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return self.answer


def marked_tools(ledger: Ledger) -> list[Tool]:
    """``delete_file`` (always asks), ``pay`` (asks over 100), ``look`` (never asks)."""

    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        ledger.add(f"delete {path}")
        return f"deleted {path}"

    @tool(requires_approval=lambda args: args["amount"] > 100)
    def pay(amount: int) -> str:
        """Pay an amount."""
        ledger.add(f"pay {amount}")
        return f"paid {amount}"

    @tool
    def look(path: str) -> str:
        """Look at a file."""
        ledger.add(f"look {path}")
        return f"saw {path}"

    return [delete_file, pay, look]


def tool_contents(body: dict[str, Any]) -> list[str]:
    """The tool messages a request sent after its last assistant tool-call turn."""
    messages = body["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return [m["content"] for m in messages[last + 1 :] if m["role"] == "tool"]


def denied(reason: str) -> str:
    """The exact content of a denied call's result."""
    return json.dumps(
        {"error": True, "denied": True, "message": f"denied: {reason}"}, separators=(",", ":")
    )


def restored(history: Iterable[Message]) -> FullMemory:
    """A memory holding ``history`` (as one restored from messages_from_json)."""
    memory = FullMemory()
    for message in history:
        memory.append(message)
    return memory
