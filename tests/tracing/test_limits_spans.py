"""Cost and guardrail verdicts on the turn's ``invoke_agent`` span."""

from __future__ import annotations

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    Guardrails,
    GuardrailVerdict,
    LlmClient,
    ModelPrice,
    Runtime,
    UsageLimits,
    UserMessage,
)
from tests.support.llm_server import ScriptedLlmServer, Text
from tests.tracing.conftest import Spans


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """No thread left behind."""


def shout(message: UserMessage) -> GuardrailVerdict | None:
    return None


def test_the_turn_span_carries_cost_and_each_guardrail_verdict(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("hi", usage=(1000, 100)))
    client = LlmClient(llm_server.url, "m", runtime=runtime, max_retries=0)
    config = AgentConfig(usage_limits=UsageLimits(prices={"m": ModelPrice(1.0, 10.0)}))
    with Agent(client, config=config, guardrails=Guardrails(input=[shout]), name="a") as agent:
        agent.send("go")
    span = spans.one("invoke_agent a")
    assert span.attributes is not None
    assert span.attributes["agent_smith.usage.cost"] == pytest.approx(2000e-6)
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [
        (
            "agent_smith.guardrail",
            {
                "agent_smith.guardrail.stage": "input",
                "agent_smith.guardrail.name": "shout",
                "agent_smith.guardrail.action": "allow",
            },
        )
    ]
