"""The web app against the scripted LLM server: tools, a factory, SSE reading, a worker process.

``python -m tests.support.web LLM_URL DB`` serves a WebApp on the SQLite
store DB in a child process (another "worker" of the same application),
prints ``URL <url>`` and serves until its stdin closes.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import requests

from agent_smith import Agent, AgentHooks, ImagePart, LlmClient, Session, Tool, ToolResult, tool
from agent_smith.web.app import WebApp
from tests.support.media import png

NOTES: list[str] = []
#: The image :func:`draw_chart` returns: a blue one, told apart from the user's red ones.
CHART = png(120, 60, rgb=(20, 60, 220))


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}"


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for the user (needs approval)."""
    NOTES.append(text)
    return f"saved: {text}"


@tool
def draw_chart(title: str) -> ToolResult:
    """Draw a chart and return it as an image."""
    return ToolResult(f"the chart {title!r}", parts=(ImagePart("image/png", data=CHART),))


def factory(llm: LlmClient, hooks: AgentHooks | None = None, *, tools: Sequence[Tool] = ()) -> Any:
    """An agent factory for WebApp: the demo tools (and ``tools``), on the request's session."""

    def build(session: Session) -> Agent:
        offered = [get_weather, save_note, *tools]
        return Agent(llm, "You help.", offered, session=session, hooks=hooks)

    return build


def closing_watched(llm: LlmClient, closed: threading.Event) -> Callable[[Session], Agent]:
    """A :func:`factory` whose agents set ``closed`` once the app has closed them."""
    build = factory(llm)

    def watched(session: Session) -> Agent:
        agent = build(session)
        real_close = agent.close

        def close() -> None:
            real_close()
            closed.set()

        agent.close = close  # type: ignore[method-assign]
        return agent

    return watched


def chat_body(conversation: str, text: str) -> dict[str, Any]:
    """What useChat posts for a new user message."""
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": conversation, "messages": [message], "trigger": "submit-message"}


def decision_body(conversation: str, call_id: str, approved: bool) -> dict[str, Any]:
    """What useChat posts after addToolApprovalResponse."""
    part = {
        "type": "dynamic-tool",
        "toolName": "save_note",
        "toolCallId": call_id,
        "state": "approval-responded",
        "input": {},
        "approval": {"id": call_id, "approved": approved},
    }
    return {"id": conversation, "messages": [{"id": "a1", "role": "assistant", "parts": [part]}]}


def sse_data(response: requests.Response) -> list[Any]:
    """Every ``data:`` payload of an SSE response, JSON-decoded (``[DONE]`` kept as a string)."""
    out: list[Any] = []
    for line in response.iter_lines():
        if line.startswith(b"data: "):
            data = line[6:].decode()
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def _worker(llm_url: str, db: str) -> None:
    from agent_smith.web.serve import WebServer

    llm = LlmClient(llm_url, "test")
    with WebServer(WebApp(factory(llm), sessions=db)).start() as server:
        print(f"URL {server.url}", flush=True)
        sys.stdin.read()  # until the parent closes our stdin


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
