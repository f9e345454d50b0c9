"""The spans of one agent turn: names, kinds, parents and the GenAI attributes."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from agent_smith import (
    Agent,
    AgentRequest,
    LlmClient,
    LlmRequest,
    Runtime,
    SamplingParams,
    SqliteSession,
    UserMessage,
    tool,
)
from agent_smith.tracing.otel import tracer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
def test_a_turn_is_an_invoke_agent_span_over_its_chat_and_tool_spans(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Calls(("get_weather", {"city": "Oslo"}), usage=(12, 3)), Text("Sunny."))
    llm = LlmClient(llm_server.url, "test-model", runtime=runtime)
    sampling = SamplingParams(temperature=0.25, top_p=0.5, max_tokens=64, stop=("END",))
    with Agent(llm, "Be brief.", [get_weather], name="weatherbot") as agent:
        agent.send(AgentRequest("Weather in Oslo?", sampling=sampling, stream=stream))

    turn = spans.one("invoke_agent weatherbot")
    assert turn.kind is SpanKind.INTERNAL
    assert turn.parent is None
    assert dict(turn.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.agent.name": "weatherbot",
        "gen_ai.request.model": "test-model",
        "agent_smith.agent.depth": 0,
        "gen_ai.usage.input_tokens": 22,
        "gen_ai.usage.output_tokens": 8,
    }
    chats = spans.named("chat test-model")
    tools = spans.named("execute_tool get_weather")
    assert len(chats) == 2 and len(tools) == 1
    assert {s.name for s in spans.children(turn)} == {"chat test-model", "execute_tool get_weather"}
    assert len(spans.children(turn)) == 3

    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.kind is SpanKind.CLIENT
    attributes = dict(first.attributes or {})
    ttft = attributes.pop("gen_ai.response.time_to_first_chunk", None)
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "test-model",
        "server.address": "127.0.0.1",
        "server.port": int(llm_server.url.rsplit(":", 1)[1]),
        "gen_ai.request.temperature": 0.25,
        "gen_ai.request.top_p": 0.5,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.request.stop_sequences": ("END",),
        "gen_ai.response.model": "test-model",
        "gen_ai.response.id": "chatcmpl-test",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
    }
    if stream:
        assert first.start_time is not None and first.end_time is not None
        assert 0 < ttft <= (first.end_time - first.start_time) / 1e9
    else:
        assert ttft is None
    assert (second.attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)

    (call,) = tools
    assert call.kind is SpanKind.INTERNAL
    assert dict(call.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_0",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Today's weather in a city.",
    }
    # The tool ran between the two LLM calls.
    assert first.end_time is not None and call.start_time is not None
    assert first.end_time <= call.start_time
    assert call.end_time is not None and second.start_time is not None
    assert call.end_time <= second.start_time
    for span in spans.ours():
        assert span.status.status_code is StatusCode.UNSET, span.name
        assert span.context is not None and turn.context is not None
        assert span.context.trace_id == turn.context.trace_id


def test_an_llm_client_call_outside_an_agent_is_a_root_chat_span(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text("hi"))
    llm = LlmClient(llm_server.url, runtime=runtime)  # no model: llama-server serves its one

    llm.complete(LlmRequest((UserMessage("hello"),)))

    span = spans.one("chat")
    assert span.parent is None
    assert "gen_ai.request.model" not in (span.attributes or {})
    assert (span.attributes or {})["gen_ai.response.model"] == "test"


def test_a_response_format_marks_the_output_type_json(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Text('{"a": 1}'))
    llm = LlmClient(llm_server.url, "m", runtime=runtime)
    sampling = SamplingParams(response_format={"type": "json_object"}, extra={"seed": 7})

    llm.complete(LlmRequest((UserMessage("json"),), sampling=sampling))

    attributes = spans.one("chat m").attributes or {}
    assert attributes["gen_ai.output.type"] == "json"
    assert attributes["gen_ai.request.seed"] == 7


def test_nothing_is_recorded_when_the_sampler_drops_the_trace(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    from tests.tracing import conftest

    llm_server.script(Calls(("get_weather", {"city": "Oslo"})), Text("Sunny."))
    conftest._SWITCH.sample = False  # the application samples this request out
    with Agent(LlmClient(llm_server.url, runtime=runtime), tools=[get_weather]) as agent:
        assert agent.send("Weather?").content == "Sunny."
    assert tracer() is not None
    assert spans.all() == []


def test_a_turn_on_a_session_names_its_conversation(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime, tmp_path: Path
) -> None:
    llm_server.script(Text("hi"))
    llm = LlmClient(llm_server.url, runtime=runtime)
    with SqliteSession(tmp_path / "chats.db", "user-42") as session:
        Agent(llm, session=session, name="remembering").send("hello")

    turn = spans.one("invoke_agent remembering")
    assert (turn.attributes or {})["gen_ai.conversation.id"] == "user-42"
