"""Label values are bounded: unbounded distinct names fold into "other" and memory stays put."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from agent_smith import MetricsCollector, Runtime
from agent_smith.errors import AgentSmithError
from agent_smith.messages import ToolCall
from agent_smith.metrics.labels import MAX_LENGTH, OTHER, LabelValues
from agent_smith.metrics.prometheus import exposition
from tests.support.fuzz import QUICK


def reject(collector: MetricsCollector, names: range, runtime: Runtime) -> None:
    for i in names:
        collector.on_tool_rejected(ToolCall(f"c{i}", f"tool_{i}", {}), "unknown tool", runtime)


def test_past_the_bound_new_values_fold_into_other() -> None:
    values = LabelValues(bound=2)
    assert [values.fold(v) for v in ("a", "b", "c", "a", "d")] == ["a", "b", OTHER, "a", OTHER]
    assert values.fold("x" * 1000) == OTHER
    assert LabelValues().fold("y" * 1000) == "y" * MAX_LENGTH
    assert LabelValues().fold("") == "unknown"
    assert LabelValues().fold("a\ud800") == "a\\ud800"  # a lone surrogate, shown escaped


def test_unbounded_tool_names_do_not_grow_memory(runtime: Runtime) -> None:
    collector = MetricsCollector(label_bound=16)
    reject(collector, range(1000), runtime)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        reject(collector, range(1000, 51000), runtime)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 16_000  # 50,000 new names: no new series, no kept names
    series = collector.snapshot()["counters"]["tool_calls"]
    assert len(series) == 17  # 16 kept names and "other"
    assert sum(one["value"] for one in series) == 51000


label_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)


@QUICK
@given(tool=label_text, model=label_text, agent=label_text)
def test_any_name_is_a_label_the_prometheus_parser_reads_back(
    tool: str, model: str, agent: str
) -> None:
    collector = MetricsCollector(label_bound=4)
    try:
        labels = (collector.label("agent", agent), collector.label("tool", tool))
        collector.add("tool_calls", labels)
        collector.observe("tool_duration", labels, 0.5)
        collector.add("model_requests", (labels[0], "openai", collector.label("model", model)))
    except AgentSmithError:
        return  # a typed refusal is fine; anything else fails the test
    [family] = [
        f
        for f in text_string_to_metric_families(exposition(collector.snapshot()))
        if f.name == "agent_smith_tool_calls"
    ]
    [sample] = family.samples
    assert sample.labels == {"agent": labels[0], "tool": labels[1]}
