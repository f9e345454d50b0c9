"""Tracing and a metrics collector installed at once: each sees the whole turn."""

from __future__ import annotations

from agent_smith import Agent, AgentRequest, LlmClient, MetricsCollector, Runtime, tool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_spans_and_counts_both_record_a_traced_turn(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    collector = MetricsCollector().install()
    try:
        with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add]) as agent:
            for stream in (False, True):
                llm_server.script(Calls(("add", {"a": 1, "b": 2})), Text("3"))
                assert agent.send(AgentRequest("add", stream=stream)).content == "3"
    finally:
        collector.uninstall()

    assert len(spans.named("chat m")) == 4
    assert len(spans.named("execute_tool add")) == 2
    assert len(spans.named("invoke_agent agent")) == 2
    assert collector.total("model_requests") == 4
    assert collector.total("tool_calls") == 2
    assert [len(turn["bars"]) for turn in collector.turns()] == [3, 3]
    # both watched the streamed calls' events: the span has its first chunk, the collector too
    assert spans.named("chat m")[2].attributes["gen_ai.response.time_to_first_chunk"] > 0
    assert len(collector.snapshot()["histograms"]["time_to_first_token"]) == 1
