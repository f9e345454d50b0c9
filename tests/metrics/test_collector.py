"""The metrics collector counts what a real turn does, on a scripted LLM server."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentRequest,
    ApprovalRequest,
    LlmClient,
    McpClient,
    MetricsCollector,
    ModelPrice,
    RetryPolicy,
    Runtime,
    ServerConfig,
    SubAgentSpec,
    ToolContext,
    UsageLimits,
    tool,
)
from agent_smith.errors import CancelledError
from agent_smith.messages import ToolCall
from agent_smith.observer import get_observer
from agent_smith.tracing.observer import OTEL_OBSERVER
from tests.support.fake_mcp_http import FakeMcpServer
from tests.support.llm_server import Calls, Raw, ScriptedLlmServer, Text


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def broken() -> str:
    """Always fails."""
    raise ValueError("no")


def value(snapshot: dict[str, Any], name: str, **labels: str) -> float:
    """Counter ``name`` summed over the series whose labels include ``labels``."""
    return sum(
        series["value"]
        for series in snapshot["counters"][name]
        if labels.items() <= series["labels"].items()
    )


def test_cached_and_reasoning_tokens_are_counted_by_type(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 9,
        "total_tokens": 49,
        "prompt_tokens_details": {"cached_tokens": 32},
        "completion_tokens_details": {"reasoning_tokens": 6},
    }
    message = {"role": "assistant", "content": "3"}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}
    llm_server.script(Raw(200, json.dumps(body), {"Content-Type": "application/json"}))
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), name="calc") as agent:
        agent.send(AgentRequest("add", stream=False))
    seen = collector.snapshot()
    kinds = ("input", "output", "cached", "reasoning")
    assert [value(seen, "tokens", type=kind) for kind in kinds] == [40, 9, 32, 6]


def test_a_turn_with_a_tool_call_is_counted(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add], name="calc") as agent:
        for stream in (False, True):
            llm_server.script(
                Calls(("add", {"a": 1, "b": 2}), usage=(10, 5)), Text("3", usage=(20, 1))
            )
            assert agent.send(AgentRequest("add", stream=stream)).content == "3"

    seen = collector.snapshot()
    assert value(seen, "model_requests", agent="calc", model="m") == 4
    assert value(seen, "tokens", agent="calc", type="input") == 60
    assert value(seen, "tokens", agent="calc", type="output") == 12
    assert value(seen, "tool_calls", agent="calc", tool="add") == 2
    assert value(seen, "tool_errors") == 0
    assert value(seen, "turns", agent="calc", outcome="ok") == 2
    [turns] = seen["histograms"]["turn_duration"]
    assert turns["count"] == 2 and sum(turns["counts"]) == 2
    [first_tokens] = seen["histograms"]["time_to_first_token"]
    assert first_tokens["count"] == 2  # only the streamed requests have a first chunk
    timelines = collector.turns()
    assert [bar["kind"] for bar in timelines[-1]["bars"]] == ["model", "tool", "model"]
    assert timelines[-1]["input_tokens"] == 30 and timelines[-1]["outcome"] == "ok"


def test_tool_errors_are_counted_by_kind(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("broken", {}), ("no_such_tool", {})), Text("sorry"))
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[broken]) as agent:
        agent.send("go")

    seen = collector.snapshot()
    assert value(seen, "tool_errors", tool="broken", kind="raised") == 1
    assert value(seen, "tool_errors", tool="no_such_tool", kind="rejected") == 1
    assert value(seen, "tool_calls") == 2


def test_a_cancelled_turn_counts_as_a_cancellation(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    started = threading.Event()

    @tool
    def wait_for_cancel(ctx: ToolContext) -> str:
        """Blocks until the turn is cancelled."""
        started.set()
        ctx.cancel.wait(10)
        return "late"

    llm_server.script(Calls(("wait_for_cancel", {})), Text("never"))
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[wait_for_cancel]) as agent:
        canceller = threading.Thread(
            target=lambda: started.wait(10) and agent.cancel(), name="test-cancel"
        )
        canceller.start()
        with pytest.raises(CancelledError):
            agent.send("go")
        canceller.join()

    seen = collector.snapshot()
    assert value(seen, "cancellations") == 1
    assert value(seen, "turns", outcome="cancelled") == 1
    assert value(seen, "tool_errors", kind="cancelled") == 1


def test_a_sub_agent_shows_as_a_bar_of_its_parents_turn_and_cost_counts_once(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    prices = UsageLimits(prices={"m": ModelPrice(input=2.0, output=10.0)})
    llm_server.script(Calls(("helper", {"task": "q"})), Text("inner"), Text("outer"))
    with Agent(
        LlmClient(llm_server.url, "m", runtime=runtime),
        name="lead",
        config=AgentConfig(usage_limits=prices),
    ) as agent:
        agent.add_subagent(SubAgentSpec("helper", "Helps."))
        assert agent.send("go").content == "outer"

    [timeline] = collector.turns()
    assert timeline["agent"] == "lead"
    kinds = [(bar["kind"], bar["name"], bar["depth"]) for bar in timeline["bars"]]
    assert kinds == [
        ("model", "m", 0),
        ("tool", "helper", 0),
        ("agent", "helper", 1),
        ("model", "m", 1),
        ("model", "m", 0),
    ]
    seen = collector.snapshot()
    assert value(seen, "model_requests", agent="helper") == 1
    assert value(seen, "cost") == pytest.approx(3 * (10 * 2.0 + 5 * 10.0) / 1e6)
    assert value(seen, "cost") == pytest.approx(timeline["cost"])


def test_approvals_guardrails_compactions_and_fallbacks_are_counted(
    collector: MetricsCollector,
) -> None:
    observer = get_observer()
    call = ToolCall("c1", "delete", {})
    observer.on_approval(call, "deferred", asked=True)
    observer.on_approval(call, "approved", asked=False)  # the resume brings the answer
    observer.on_approval(call, "denied", asked=True)
    observer.on_guardrail("input", "no_secrets", "trip", None)
    observer.on_guardrail("input", "no_secrets", "allow", None)
    observer.on_compaction(10, 4, 9000, 3000)
    observer.on_fallback("big", "openai", TimeoutError())

    seen = collector.snapshot()
    assert value(seen, "approvals", tool="delete", decision="asked") == 2
    assert value(seen, "approvals", decision="granted") == 1
    assert value(seen, "approvals", decision="denied") == 1
    assert value(seen, "guardrail_trips", guardrail="no_secrets") == 1
    assert value(seen, "compactions") == 1
    assert value(seen, "fallbacks", model="big", provider="openai") == 1


def test_uninstalled_it_counts_nothing_and_tracing_is_the_observer_again() -> None:
    collector = MetricsCollector().install()
    collector.uninstall()
    assert get_observer() is OTEL_OBSERVER
    get_observer().on_compaction(1, 1, 2, 1)
    assert value(collector.snapshot(), "compactions") == 0


def test_reset_forgets_everything(collector: MetricsCollector) -> None:
    get_observer().on_compaction(1, 1, 2, 1)
    collector.reset()
    seen = collector.snapshot()
    assert all(not series for series in seen["counters"].values())
    assert all(not series for series in seen["histograms"].values())
    assert collector.turns() == []


def test_counts_from_many_threads_add_up(collector: MetricsCollector) -> None:
    def record() -> None:
        for _ in range(1000):
            collector.add("compactions", ("a",))
            collector.observe("tool_duration", ("a", "t"), 0.05)

    threads = [threading.Thread(target=record, name=f"test-record-{i}") for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = collector.snapshot()
    assert value(seen, "compactions") == 8000
    [durations] = seen["histograms"]["tool_duration"]
    assert durations["count"] == 8000 and durations["counts"][3] == 8000  # 0.04 < 0.05 <= 0.08


def test_a_retried_request_counts_once_with_its_retry(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Raw(503, "busy"), Text("hi"))
    policy = RetryPolicy(max_retries=1, base=0.01, jitter=0.0)
    llm = LlmClient(llm_server.url, "m", runtime=runtime, retry_policy=policy)
    with Agent(llm) as agent:
        assert agent.send("hello").content == "hi"

    seen = collector.snapshot()
    assert value(seen, "model_requests") == 1
    assert value(seen, "retries", model="m") == 1
    assert value(seen, "model_errors") == 0


def test_an_approval_is_a_bar_as_long_as_the_turn_waited_for_it(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    def slow_person(request: ApprovalRequest) -> bool:
        threading.Event().wait(0.2)  # a person reading the request
        return True

    llm_server.script(Calls(("delete", {"path": "a.txt"})), Text("Deleted."))
    llm = LlmClient(llm_server.url, "m", runtime=runtime)
    with Agent(llm, tools=[delete], approver=slow_person) as agent:
        agent.send("delete a.txt")

    [turn] = collector.turns()
    [approval] = [bar for bar in turn["bars"] if bar["kind"] == "approval"]
    assert approval["name"] == "delete" and approval["decision"] == "approved"
    assert approval["duration"] >= 0.2
    seen = collector.snapshot()
    assert value(seen, "approvals", decision="asked") == 1
    assert value(seen, "approvals", decision="granted") == 1


def test_mcp_requests_are_counted_by_server_and_method(
    collector: MetricsCollector, runtime: Runtime
) -> None:
    with FakeMcpServer() as server:
        config = ServerConfig(alias="web", url=server.url)
        with McpClient.connect(config, runtime=runtime) as client:
            client.call_tool("echo", {"text": "hi"})

    seen = collector.snapshot()
    assert value(seen, "mcp_requests", server="web", method="tools/call") == 1
    assert value(seen, "mcp_requests", server="web") >= 2  # the handshake's requests too
    assert value(seen, "mcp_errors") == 0
