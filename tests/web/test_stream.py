"""A turn as a response body: pauses and failures as events, closing cancels, tool outcomes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

from agent_smith import AgentBusyError, ApprovalRequired, LlmApiError
from agent_smith.agent.approvals import ApprovalRequest, ApprovalRequested
from agent_smith.agent.events import AgentEvent
from agent_smith.agent.paused import PausedTurn
from agent_smith.llm.events import TokenDelta
from agent_smith.messages import TokenUsage, ToolCall, ToolMessage
from agent_smith.tools.dispatch import error_content
from agent_smith.web.stream import (
    ToolOutcome,
    TurnFailed,
    TurnPaused,
    TurnStream,
    WebEvent,
    frames,
    tool_outcome,
    turn_events,
)

CALL = ToolCall("c1", "save_note", {"text": "x"})


def test_approval_requests_are_deferred_and_the_pause_becomes_an_event() -> None:
    request = ApprovalRequest(CALL)
    asked = ApprovalRequested(request)
    state = PausedTurn("agent", ("c1",), (request,), usage=TokenUsage(1, 1, 2))

    def turn() -> Iterator[AgentEvent]:
        yield asked
        assert asked.settle() is None  # deferred: the agent pauses the turn
        raise ApprovalRequired("paused", state=state)

    assert list(turn_events(turn)) == [asked, TurnPaused((request,), TokenUsage(1, 1, 2))]


def test_errors_become_a_failure_event() -> None:
    def failing() -> Iterator[AgentEvent]:
        yield TokenDelta("a")
        raise LlmApiError("the model said no", http_status=500, body_excerpt="")

    def busy() -> Iterator[AgentEvent]:
        raise AgentBusyError("taken")
        yield TokenDelta("never")

    assert list(turn_events(failing))[-1] == TurnFailed("the model said no", "LlmApiError")
    (failed,) = list(turn_events(busy))
    assert isinstance(failed, TurnFailed) and failed.code == "busy"


class _Mapper:
    def begin(self) -> list[bytes]:
        return [b"<"]

    def event(self, event: WebEvent) -> list[bytes]:
        return [b"e"]

    def end(self) -> list[bytes]:
        return [b">"]


def test_closing_the_body_closes_the_agents_events_and_the_resources() -> None:
    closed: list[str] = []

    def turn() -> Iterator[AgentEvent]:
        try:
            while True:
                yield TokenDelta("x")
        finally:
            closed.append("turn")

    stack = ExitStack()
    stack.callback(closed.append, "resources")
    body = TurnStream(frames(_Mapper(), turn_events(turn)), stack)
    assert [next(body), next(body)] == [b"<", b"e"]
    body.close()
    assert closed == ["turn", "resources"]


def test_a_body_closed_before_it_started_still_frees_its_resources() -> None:
    stack = ExitStack()
    freed: list[bool] = []
    stack.callback(freed.append, True)
    TurnStream(frames(_Mapper(), iter(())), stack).close()
    assert freed == [True]


def test_the_body_stops_when_the_client_is_gone() -> None:
    gone = [False]
    body = frames(_Mapper(), iter([TokenDelta("a"), TokenDelta("b")]), disconnected=lambda: gone[0])
    assert next(body) == b"<"
    gone[0] = True
    assert list(body) == []


def test_tool_outcomes_read_errors_and_denials() -> None:
    assert tool_outcome(ToolMessage("c", "t", "42")) == ToolOutcome("output", "42")
    failed = ToolMessage("c", "t", error_content("boom"), is_error=True)
    assert tool_outcome(failed) == ToolOutcome("error", "boom")
    denied = ToolMessage("c", "t", error_content("denied: no", denied=True), is_error=True)
    assert tool_outcome(denied) == ToolOutcome("denied", "denied: no")
    assert tool_outcome(ToolMessage("c", "t", "not json", is_error=True)) == ToolOutcome(
        "error", "not json"
    )
