"""Parenting across threads: parallel tool calls, nested sub-agents, and the caller's own span."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan

from agent_smith import (
    Agent,
    LlmClient,
    Runtime,
    SubAgentSpec,
    SubAgentTool,
    TokenDelta,
    ToolContext,
    make_tool,
)
from tests.support.llm_server import Calls, Reply, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans

WAIT = 10.0  # generous bound for every barrier

JsonObject = dict[str, Any]


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


def _responder(body: JsonObject) -> Reply:
    """Who asks is in the system prompt; each agent calls its tools once, then answers."""
    messages = body["messages"]
    if messages[-1]["role"] != "user":
        return Text("done")
    who = messages[0]["content"]
    if who == "root":
        return Calls(
            ("researcher", {"task": "a"}),
            ("researcher", {"task": "b"}),
            ("researcher", {"task": "c"}),
            ("where", {}),
            ("where", {}),
        )
    if who == "researcher":
        return Calls(("where", {}), ("leaf", {"task": "x"}))
    return Calls(("where", {}))


class _Where:
    """A tool that meets its siblings at a barrier, so they provably run at once.

    Two calls at depth 0, three at depth 1 (one per researcher), three at depth
    2 (one per leaf). It records its thread and the span current inside it.
    """

    def __init__(self) -> None:
        self.barriers = {0: threading.Barrier(2), 1: threading.Barrier(3), 2: threading.Barrier(3)}
        self.seen: list[tuple[int, str, int]] = []
        self._lock = threading.Lock()

    def __call__(self, ctx: ToolContext) -> str:
        """Say which thread runs this call."""
        self.barriers[ctx.depth].wait(WAIT)
        span_id = trace.get_current_span().get_span_context().span_id
        with self._lock:
            self.seen.append((ctx.depth, threading.current_thread().name, span_id))
        return threading.current_thread().name


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_tool_and_sub_agent_spans_keep_their_parents_across_pool_threads(
    spans: Spans, runtime: Runtime
) -> None:
    where = _Where()
    where_tool = make_tool(where, name="where")
    leaf = SubAgentSpec("leaf", "A leaf agent.", "leaf", tool_factories=(lambda: where_tool,))
    researcher = SubAgentSpec(
        "researcher",
        "Researches a task.",
        "researcher",
        tool_factories=(lambda: where_tool, lambda: SubAgentTool(leaf)),
    )
    with ScriptedLlmServer(_responder) as server:
        llm = LlmClient(server.url, "m", runtime=runtime)
        with Agent(llm, "root", [where_tool, SubAgentTool(researcher)], name="root") as agent:
            assert agent.send("go").content == "done"

    # The tools really ran side by side, on several pool threads.
    threads = {depth: {t for d, t, _ in where.seen if d == depth} for depth in (0, 1, 2)}
    assert [len(threads[d]) for d in (0, 1, 2)] == [2, 3, 3], threads

    root = spans.one("invoke_agent root")
    assert root.parent is None
    researchers = spans.named("invoke_agent researcher")
    leaves = spans.named("invoke_agent leaf")
    assert len(researchers) == 3 and len(leaves) == 3
    turns = {_id(s): s for s in [root, *researchers, *leaves]}

    # Every tool span is a child of the turn that made the call, at that turn's depth.
    tool_spans = [s for s in spans.ours() if s.name.startswith("execute_tool ")]
    assert len(tool_spans) == 5 + 3 * 2 + 3
    for span in tool_spans:
        assert span.parent is not None and span.parent.span_id in turns, span.name
    assert sorted(s.name for s in spans.children(root)) == [
        "chat m",
        "chat m",
        "execute_tool researcher",
        "execute_tool researcher",
        "execute_tool researcher",
        "execute_tool where",
        "execute_tool where",
    ]
    # Each sub-agent's turn is a child of the execute_tool span that started it.
    starters = {_id(s) for s in spans.children(root) if s.name == "execute_tool researcher"}
    assert {s.parent.span_id for s in researchers if s.parent} == starters
    for turn in researchers:
        children = spans.children(turn)
        assert sorted(s.name for s in children) == [
            "chat m",
            "chat m",
            "execute_tool leaf",
            "execute_tool where",
        ]
        (starter,) = [s for s in children if s.name == "execute_tool leaf"]
        (leaf_turn,) = [s for s in leaves if s.parent and s.parent.span_id == _id(starter)]
        assert sorted(s.name for s in spans.children(leaf_turn)) == [
            "chat m",
            "chat m",
            "execute_tool where",
        ]
        assert (leaf_turn.attributes or {})["agent_smith.agent.depth"] == 2
        assert (leaf_turn.attributes or {})["gen_ai.agent.id"].startswith("leaf#")
    # Inside each call, its own execute_tool span is the current span.
    assert {span_id for _, _, span_id in where.seen} == {
        _id(s) for s in tool_spans if s.name == "execute_tool where"
    }
    # One trace for the whole tree.
    assert root.context is not None
    assert {s.context.trace_id for s in spans.ours() if s.context} == {root.context.trace_id}


def test_the_callers_active_span_is_the_parent_of_the_turn(
    spans: Spans, tracer: trace.Tracer, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    """A Flask view inside its request span (as Flask instrumentation would make it)."""
    app = Flask(__name__)
    agent = Agent(LlmClient(llm_server.url, runtime=runtime), name="helper")

    @app.post("/ask")
    def ask() -> str:
        with tracer.start_as_current_span("POST /ask"):
            return agent.send("hello").content

    response = app.test_client().post("/ask")

    assert response.status_code == 200
    request_span = next(s for s in spans.all() if s.name == "POST /ask")
    turn = spans.one("invoke_agent helper")
    assert turn.parent is not None and turn.parent.span_id == _id(request_span)
    assert spans.parent_of(spans.one("chat")) is turn


def test_a_streamed_turn_runs_under_its_span_and_the_caller_keeps_its_own(
    spans: Spans, tracer: trace.Tracer, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    agent = Agent(LlmClient(llm_server.url, runtime=runtime), name="streamer")
    current_between_events: set[int] = set()
    with tracer.start_as_current_span("request") as request:
        events: Iterator[Any] = agent.stream("hello")
        for event in events:
            if isinstance(event, TokenDelta):
                current_between_events.add(trace.get_current_span().get_span_context().span_id)

    turn = spans.one("invoke_agent streamer")
    assert turn.parent is not None
    assert turn.parent.span_id == request.get_span_context().span_id
    # Between events the caller's code sees its own span, not the turn's.
    assert current_between_events == {request.get_span_context().span_id}
    assert spans.parent_of(spans.one("chat")) is turn
