"""Tracing off: without the package, or unused, or without a provider, nothing changes.

Each case runs in a fresh interpreter (this process has a provider set).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_BLOCK_OPENTELEMETRY = """
import importlib.abc, sys

class _NoOpenTelemetry(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, _NoOpenTelemetry())
"""

_TURN = """
import json, sys
from agent_smith import Agent, AgentRequest, LlmClient, Runtime, tool
from agent_smith.tracing.otel import tracer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

@tool
def add(a: int, b: int) -> int:
    "Add."
    return a + b

answers = []
with Runtime() as runtime, ScriptedLlmServer() as server:
    for stream in (False, True):
        server.script(Calls(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), Text("3 and 7"))
        with Agent(LlmClient(server.url, "m", runtime=runtime), tools=[add]) as agent:
            answers.append(agent.send(AgentRequest("add", stream=stream)).content)
    headers = [k.lower() for h in server.headers for k in h]
print(json.dumps({
    "answers": answers,
    "otel": sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"),
    "tracer": tracer() is not None,
    "traceparent": "traceparent" in headers,
}))
"""


def _python(code: str) -> object:
    """Run ``code`` in a fresh interpreter at the repository root; what it printed, as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _run(prelude: str) -> dict[str, object]:
    result = _python(prelude + _TURN)
    assert isinstance(result, dict)
    assert result["answers"] == ["3 and 7", "3 and 7"]
    assert result["tracer"] is False
    assert result["traceparent"] is False
    return result


def test_without_the_package_a_turn_works_and_imports_nothing() -> None:
    assert _run(_BLOCK_OPENTELEMETRY)["otel"] == []


def test_with_the_package_unused_by_the_application_nothing_is_imported() -> None:
    pytest.importorskip("opentelemetry.trace")
    assert _run("")["otel"] == []


def test_with_the_api_imported_but_no_provider_set_nothing_is_traced() -> None:
    pytest.importorskip("opentelemetry.trace")
    result = _run("import opentelemetry.trace\n")
    assert "opentelemetry.trace" in result["otel"]  # type: ignore[operator]


_LATE_PROVIDER = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agent_smith import Agent, LlmClient, Runtime
from tests.support.llm_server import ScriptedLlmServer, Text

with Runtime() as runtime, ScriptedLlmServer() as server:
    server.script(Text("one"), Text("two"))
    agent = Agent(LlmClient(server.url, "m", runtime=runtime), name="late")
    agent.send("before")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    agent.send("after")
print(json.dumps(sorted(s.name for s in exporter.get_finished_spans())))
"""


def test_tracing_starts_when_the_application_sets_a_provider_later() -> None:
    assert _python(_LATE_PROVIDER) == ["chat m", "invoke_agent late"]
