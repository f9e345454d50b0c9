"""The collector's figures as Prometheus text (read back by prometheus_client's parser)
and as OpenTelemetry metrics (read by the SDK's in-memory reader)."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from prometheus_client.parser import text_string_to_metric_families

from agent_smith import Agent, AgentRequest, LlmClient, MetricsCollector, Runtime, tool
from agent_smith.metrics.prometheus import ScrapePage, exposition
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def run_turns(llm_server: ScriptedLlmServer, runtime: Runtime) -> None:
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add], name="calc") as agent:
        for stream in (False, True):
            llm_server.script(
                Calls(("add", {"a": 1, "b": 2}), usage=(10, 5)), Text("3", usage=(20, 1))
            )
            agent.send(AgentRequest("add", stream=stream))


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_the_prometheus_text_parses_and_carries_the_snapshots_numbers(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    run_turns(llm_server, runtime)
    snapshot = collector.snapshot()

    parsed = samples(exposition(snapshot))
    model = {("agent", "calc"), ("provider", "openai"), ("model", "m")}
    assert parsed[("agent_smith_model_requests_total", frozenset(model))] == 4
    assert parsed[("agent_smith_tokens_total", frozenset({*model, ("type", "input")}))] == 60
    tool_labels = frozenset({("agent", "calc"), ("tool", "add")})
    [durations] = snapshot["histograms"]["tool_duration"]
    assert parsed[("agent_smith_tool_duration_seconds_count", tool_labels)] == 2
    assert parsed[("agent_smith_tool_duration_seconds_sum", tool_labels)] == durations["sum"]
    infinite = frozenset({*tool_labels, ("le", "+Inf")})
    assert parsed[("agent_smith_tool_duration_seconds_bucket", infinite)] == 2
    families = {
        family.name: family.type for family in text_string_to_metric_families(exposition(snapshot))
    }
    assert families["agent_smith_turns"] == "counter"
    assert families["agent_smith_turn_duration_seconds"] == "histogram"


def test_label_values_are_escaped_so_the_text_still_parses(collector: MetricsCollector) -> None:
    name = 'say "hi"\\\nnow'
    collector.add("tool_calls", ("a", collector.label("tool", name)))
    parsed = samples(exposition(collector.snapshot()))
    assert (
        parsed[("agent_smith_tool_calls_total", frozenset({("agent", "a"), ("tool", name)}))] == 1
    )


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    return {
        metric.name: list(metric.data.data_points)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def test_opentelemetry_gets_the_genai_metrics(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    reader = InMemoryMetricReader()
    collector = MetricsCollector()
    collector.export_to_opentelemetry(MeterProvider(metric_readers=[reader]))
    collector.install()
    try:
        run_turns(llm_server, runtime)
    finally:
        collector.uninstall()

    seen = points(reader)
    usage: list[HistogramDataPoint] = seen["gen_ai.client.token.usage"]
    by_type = {point.attributes["gen_ai.token.type"]: point for point in usage}
    assert by_type["input"].sum == 60 and by_type["input"].count == 4
    assert by_type["output"].sum == 12
    assert by_type["input"].attributes["gen_ai.request.model"] == "m"
    [chat] = seen["gen_ai.client.operation.duration"]
    assert chat.count == 4 and chat.attributes["gen_ai.operation.name"] == "chat"
    assert list(chat.explicit_bounds)[:3] == [0.01, 0.02, 0.04]
    [tool_point] = seen["gen_ai.execute_tool.duration"]
    assert tool_point.count == 2 and tool_point.attributes["gen_ai.tool.name"] == "add"
    [agent_point] = seen["gen_ai.invoke_agent.duration"]
    assert agent_point.attributes["gen_ai.agent.name"] == "calc"
    [first_chunk] = seen["gen_ai.client.operation.time_to_first_chunk"]
    assert first_chunk.count == 2
    [requests] = seen["agent_smith.model_requests"]
    assert requests.value == 4 and requests.attributes["gen_ai.provider.name"] == "openai"


def test_a_scrape_page_renders_at_most_once_per_interval(collector: MetricsCollector) -> None:
    collector.add("compactions", ("a",))
    cached = ScrapePage(collector.snapshot, interval=3600)
    fresh = ScrapePage(collector.snapshot, interval=0)
    first = cached.body()
    collector.add("compactions", ("a",))
    assert cached.body() is first  # scraped again within the hour: the same bytes
    assert b'agent_smith_compactions_total{agent="a"} 2' in fresh.body()
    assert b'agent_smith_compactions_total{agent="a"} 1' in first
