"""An agent_smith agent served over A2A on 127.0.0.1, driven by the in-process TestModel.

The model's script is a function of the request (so any number of tasks
may run): ``save <text>`` asks to call ``save_note`` (which needs approval),
``wait`` calls ``hold`` (which blocks until the test releases it or the call
is cancelled), anything else is answered ``You said: <text>`` word by word.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import Agent, Session, TestModel, ToolContext, WebApp, tool
from agent_smith.llm.request import LlmRequest
from agent_smith.llm.testing import call
from agent_smith.messages import ToolMessage, UserMessage
from agent_smith.web.serve import WebServer

RELEASE = threading.Event()
HOLDING = threading.Event()
NOTES: list[str] = []
TIMEOUT = 30.0


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for the user (needs approval)."""
    NOTES.append(text)
    return f"saved: {text}"


@tool
def hold(ctx: ToolContext) -> str:
    """Wait until released (tests of cancellation)."""
    HOLDING.set()
    while not RELEASE.is_set() and not ctx.cancel.cancelled:
        ctx.cancel.wait(0.05)
    return "released"


def respond(request: LlmRequest) -> object:
    last = request.messages[-1]
    if isinstance(last, ToolMessage):
        return f"Done: {last.content}"
    text = last.content if isinstance(last, UserMessage) else ""
    if text.startswith("save "):
        return call("save_note", text=text.removeprefix("save "))
    if text == "wait":
        return call("hold")
    return f"You said: {text}"


def build(session: Session) -> Agent:
    return Agent(
        TestModel(respond=respond),  # type: ignore[arg-type]
        "You help.",
        [save_note, hold],
        session=session,
        name="notes",
    )


@pytest.fixture
def app(tmp_path: Path) -> WebApp:
    return WebApp(build, sessions=tmp_path / "a2a.db", a2a=True)


@pytest.fixture
def served(app: WebApp) -> Iterator[str]:
    """The base URL of the served app (its card at ``/.well-known/agent-card.json``)."""
    NOTES.clear()
    RELEASE.clear()
    HOLDING.clear()
    with WebServer(app, threads=64).start() as server:
        yield server.url
    RELEASE.set()
