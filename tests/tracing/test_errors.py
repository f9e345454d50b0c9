"""Failures on spans: status and error.type; retries and approvals as span events."""

from __future__ import annotations

import logging
import threading

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from agent_smith import (
    Agent,
    AgentConfig,
    AgentHooks,
    AgentStopped,
    ApprovalRequest,
    ApprovalRequired,
    LlmApiError,
    LlmClient,
    RetryPolicy,
    Runtime,
    TokenDelta,
    ToolCall,
    ToolContext,
    ToolResult,
    tool,
)
from agent_smith.tracing.agent_span import approval
from agent_smith.tracing.otel import add_event
from tests.support.llm_server import Calls, Raw, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans

WAIT = 10.0


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


def _client(server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(
        server.url, "m", runtime=runtime, retry_policy=RetryPolicy(sleep=lambda _: None)
    )


def test_a_retried_call_is_one_chat_span_with_a_retry_event(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(503, '{"error": {"message": "loading"}}'), Text("hi"))
    with Agent(_client(llm_server, runtime)) as agent:
        assert agent.send("hello").content == "hi"

    chat = spans.one("chat m")
    assert chat.status.status_code is StatusCode.UNSET
    (event,) = chat.events
    assert event.name == "agent_smith.retry"
    attributes = dict(event.attributes or {})
    assert attributes.pop("agent_smith.retry.delay") >= 0
    assert attributes == {"agent_smith.retry.attempt": 1, "error.type": "503"}


def test_an_llm_error_fails_the_chat_and_the_turn_spans(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(400, '{"error": {"message": "context too long"}}'))
    with Agent(_client(llm_server, runtime), name="a") as agent, pytest.raises(LlmApiError):
        agent.send("hello")

    for span in (spans.one("chat m"), spans.one("invoke_agent a")):
        assert span.status.status_code is StatusCode.ERROR, span.name
        assert "context too long" in (span.status.description or "")
        assert (span.attributes or {})["error.type"] == "400"


def test_a_stop_condition_names_itself_on_the_turn_span(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("ok", {})), Calls(("ok", {})))
    config = AgentConfig(max_iterations=1)
    agent = Agent(_client(llm_server, runtime), tools=[ok], config=config, name="a")
    with agent, pytest.raises(AgentStopped):
        agent.send("loop")

    turn = spans.one("invoke_agent a")
    assert turn.status.status_code is StatusCode.ERROR
    assert (turn.attributes or {})["error.type"] == "AgentStopped"
    assert (turn.attributes or {})["agent_smith.agent.stop_condition"] == "max_iterations"
    assert (turn.attributes or {})["gen_ai.usage.input_tokens"] == 10


@tool
def ok() -> str:
    """Fine."""
    return "ok"


@tool
def explode(secret: str) -> str:
    """Raise."""
    raise ValueError(f"cannot use {secret}")


@tool
def refuse() -> ToolResult:
    """Return an error result."""
    return ToolResult("not today", is_error=True)


@tool(timeout=0.2)
def hang(ctx: ToolContext) -> str:
    """Wait until cancelled."""
    ctx.cancel.wait(WAIT)
    return "late"


@pytest.mark.parametrize("content", [False, True], ids=["default", "trace_content"])
def test_failed_tool_calls_say_how_they_failed(
    spans: Spans, llm_server: ScriptedLlmServer, content: bool, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script(
        Calls(
            ("explode", {"secret": "s3"}),
            ("refuse", {}),
            ("hang", {}),
            ("missing", {}),
            ("explode", {"wrong": 1}),
        ),
        Text("Tried."),
    )
    caplog.set_level(logging.WARNING, logger="opentelemetry")
    with (
        Runtime(trace_content=content) as runtime,
        Agent(_client(llm_server, runtime), tools=[explode, refuse, hang]) as agent,
    ):
        assert agent.send("try").content == "Tried."

    def failure(name: str, call_id: str) -> tuple[str, str | None]:
        (span,) = [
            s for s in spans.named(name) if (s.attributes or {})["gen_ai.tool.call.id"] == call_id
        ]
        assert span.status.status_code is StatusCode.ERROR
        return (span.attributes or {})["error.type"], span.status.description

    raised = failure("execute_tool explode", "call_0")
    assert raised == ("ValueError", "cannot use s3" if content else None)
    assert failure("execute_tool refuse", "call_1") == (
        "tool_error",
        "not today" if content else None,
    )
    assert failure("execute_tool hang", "call_2") == ("timeout", None)
    assert failure("execute_tool missing", "call_3")[0] == "invalid_tool_call"
    invalid = failure("execute_tool explode", "call_4")
    assert invalid[0] == "invalid_tool_call"
    assert (invalid[1] is not None) is content  # the model's message names the arguments
    # Ending a timed-out call's span early leaves nothing for its late return to trip on.
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]


def test_a_stream_closed_early_ends_its_spans_without_an_error(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("one two three four"))
    with Agent(_client(llm_server, runtime), name="a") as agent:
        for event in agent.stream("count"):
            if isinstance(event, TokenDelta):
                break

    for name in ("invoke_agent a", "chat m"):
        assert spans.one(name).status.status_code is StatusCode.UNSET, name


def test_approvals_and_other_events_land_on_the_running_turns_span(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    """The seam for approvals: decisions are taken on the loop thread, inside the turn."""
    llm_server.script(Calls(("ok", {})), Text("done"))
    loop_threads: set[str] = set()

    def decide(call: ToolCall) -> None:
        loop_threads.add(threading.current_thread().name)
        approval(call, "approved")
        add_event("custom", {"n": 1})

    hooks = AgentHooks(on_tool_call=decide)
    with Agent(_client(llm_server, runtime), tools=[ok], hooks=hooks, name="a") as agent:
        agent.send("go")

    assert loop_threads == {threading.current_thread().name}
    events = [(e.name, dict(e.attributes or {})) for e in spans.one("invoke_agent a").events]
    assert events == [
        (
            "agent_smith.approval",
            {
                "gen_ai.tool.name": "ok",
                "gen_ai.tool.call.id": "call_0",
                "agent_smith.approval.decision": "approved",
            },
        ),
        ("custom", {"n": 1}),
    ]


@tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay someone."""
    return f"paid {amount}"


def _approvals(span: ReadableSpan) -> list[tuple[object, object]]:
    """(call id, decision) of each approval event on ``span``."""
    return [
        (attributes["gen_ai.tool.call.id"], attributes["agent_smith.approval.decision"])
        for event in span.events
        if event.name == "agent_smith.approval" and (attributes := event.attributes) is not None
    ]


def test_an_approvers_decisions_are_events_and_only_approved_calls_run(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("pay", {"amount": 5}), ("pay", {"amount": 500})), Text("done"))

    def approver(request: ApprovalRequest) -> bool:
        return int(request.arguments["amount"]) < 100

    agent = Agent(_client(llm_server, runtime), tools=[pay], approver=approver, name="a")
    with agent:
        agent.send("pay twice")

    turn = spans.one("invoke_agent a")
    assert _approvals(turn) == [("call_0", "approved"), ("call_1", "denied")]
    (ran,) = spans.named("execute_tool pay")
    assert (ran.attributes or {})["gen_ai.tool.call.id"] == "call_0"
    assert spans.parent_of(ran) is turn


def test_a_paused_turn_is_no_error_and_its_resumption_is_a_span_of_its_own(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("pay", {"amount": 5})), Text("paid"))
    agent = Agent(_client(llm_server, runtime), tools=[pay], name="a")
    with agent:
        with pytest.raises(ApprovalRequired) as paused:
            agent.send("pay")
        assert agent.resume(paused.value.state, {"call_0": True}).content == "paid"

    first, second = sorted(spans.named("invoke_agent a"), key=lambda s: s.start_time or 0)
    assert first.status.status_code is StatusCode.UNSET
    assert (first.attributes or {})["agent_smith.agent.paused"] is True
    assert "agent_smith.agent.resumed" not in (first.attributes or {})
    assert _approvals(first) == [("call_0", "deferred")]
    assert (second.attributes or {})["agent_smith.agent.resumed"] is True
    assert _approvals(second) == [("call_0", "approved")]
    assert spans.parent_of(spans.one("execute_tool pay")) is second
