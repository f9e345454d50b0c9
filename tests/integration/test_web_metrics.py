"""The web app's metrics: Prometheus text at /metrics and JSON at /api/metrics, over real HTTP."""

from __future__ import annotations

from pathlib import Path

import requests
from prometheus_client.parser import text_string_to_metric_families

from agent_smith import LlmClient, MetricsCollector, Runtime
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.web import chat_body, factory

TIMEOUT = 30


def test_a_turn_served_shows_in_the_scraped_metrics_and_the_json(
    collector: MetricsCollector, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> None:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(factory(llm), sessions=tmp_path / "c.db", metrics=collector)
    llm_server.script(Calls(("get_weather", {"city": "Oslo"})), Text("Sunny."))
    with WebServer(app).start() as server:
        answer = requests.post(
            f"{server.url}/api/chat", json=chat_body("c1", "weather?"), timeout=TIMEOUT
        )
        assert "Sunny." in answer.text  # the whole stream: the turn has ended
        scraped = requests.get(f"{server.url}/metrics", timeout=TIMEOUT)
        data = requests.get(f"{server.url}/api/metrics", timeout=TIMEOUT).json()

    assert scraped.status_code == 200
    assert scraped.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {
        (sample.name, sample.labels.get("tool")): sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        if not sample.name.endswith("_bucket")
    }
    assert samples[("agent_smith_model_requests_total", None)] == 2
    assert samples[("agent_smith_tool_calls_total", "get_weather")] == 1
    assert data["counters"]["tool_calls"] == collector.snapshot()["counters"]["tool_calls"]
    [turn] = data["turns"]
    assert [bar["kind"] for bar in turn["bars"]] == ["model", "tool", "model"]


def test_without_a_collector_there_is_no_metrics_page_and_the_dev_ui_is_told(
    llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> None:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    with WebServer(WebApp(factory(llm), sessions=tmp_path / "c.db")).start() as server:
        assert requests.get(f"{server.url}/metrics", timeout=TIMEOUT).status_code == 404
        assert requests.get(f"{server.url}/api/metrics", timeout=TIMEOUT).json() == {
            "enabled": False
        }
