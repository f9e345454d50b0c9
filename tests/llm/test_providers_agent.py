"""The agent-level behaviours that matter, against every HTTP provider's wire fake.

Each test runs once per dialect (OpenAI chat completions, Anthropic Messages,
OpenAI Responses, Gemini, Ollama, Bedrock): the scripted server answers in that dialect
(tests/support/provider_wire.py), so the agent loop, tools in parallel,
typed output, approvals, streaming, cancellation and sessions are proven on
each provider's own wire format.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import (
    TRACE,
    Agent,
    ApprovalRequired,
    CancelledError,
    ChatModel,
    FinalAnswer,
    Runtime,
    SqliteSession,
    TokenDelta,
    ToolCallRequested,
    make_model,
    tool,
)
from tests.support.invoices import City
from tests.support.llm_server import Calls, Hold, ScriptedLlmServer, Text
from tests.support.provider_wire import speak, tool_outputs

WAIT = 10.0
PROVIDERS = ["openai", "anthropic", "responses", "gemini", "ollama", "bedrock"]


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def model(
    provider: str, llm_server: ScriptedLlmServer, runtime: Runtime, aws_credentials: None
) -> ChatModel:
    return make_model(provider, llm_server.url, "wire", runtime=runtime)


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> Iterator[None]:
    yield


@pytest.mark.parametrize("streamed", [False, True])
def test_parallel_tool_calls_run_and_their_results_go_back_in_order(
    streamed: bool, provider: str, model: ChatModel, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    speak(
        llm_server,
        provider,
        Calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})),
        Text("Both sunny."),
    )
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        if streamed:
            events = list(agent.stream("Weather?"))
            final = events[-1]
            assert isinstance(final, FinalAnswer)
            answer = final.message
            assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "Both sunny."
            assert [e.call.arguments for e in events if isinstance(e, ToolCallRequested)] == [
                {"city": "Paris"},
                {"city": "Oslo"},
            ]
        else:
            answer = agent.send("Weather?")
    assert answer.content == "Both sunny."
    assert tool_outputs(provider, llm_server.requests[1]) == ["sunny in Paris", "sunny in Oslo"]


def test_typed_output_through_the_final_result_tool(
    provider: str, model: ChatModel, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    speak(llm_server, provider, Calls(("final_result", {"name": "Oslo", "country": "Norway"})))
    with Agent(model, runtime=runtime, output_mode="tool") as agent:
        assert agent.send("Where?", output_type=City).output == City("Oslo", "Norway")


def test_approvals_pause_and_resume(
    provider: str, model: ChatModel, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    speak(llm_server, provider, Calls(("delete_file", {"path": "a.txt"})), Text("Deleted."))
    with Agent(model, tools=[delete_file], runtime=runtime) as agent:
        with pytest.raises(ApprovalRequired) as paused:
            agent.send("Delete a.txt")
        (waiting,) = paused.value.requests
        assert agent.resume(paused.value.state, {waiting.call.id: True}).content == "Deleted."
    assert tool_outputs(provider, llm_server.requests[1]) == ["deleted a.txt"]


def test_cancel_from_another_thread_while_the_server_stalls(
    provider: str, model: ChatModel, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    gate = threading.Event()
    hold = Hold(gate, Text("too late"))
    speak(llm_server, provider, hold)
    with Agent(model, runtime=runtime) as agent:
        stopper = threading.Thread(target=lambda: (hold.reached.wait(WAIT), agent.cancel()))
        stopper.start()
        try:
            with pytest.raises(CancelledError):
                list(agent.stream("Go"))
        finally:
            gate.set()
            stopper.join(WAIT)


def test_a_session_carries_the_history_to_the_next_turn(
    provider: str,
    model: ChatModel,
    llm_server: ScriptedLlmServer,
    runtime: Runtime,
    tmp_path: Path,
) -> None:
    speak(
        llm_server, provider, Calls(("get_weather", {"city": "Oslo"})), Text("Snow."), Text("Yes.")
    )
    for question in ("Weather?", "Sure?"):
        with (
            SqliteSession(tmp_path / "s.db", "s1") as session,
            Agent(model, tools=[get_weather], runtime=runtime, session=session) as agent,
        ):
            agent.send(question)
    assert tool_outputs(provider, llm_server.requests[2]) == ["sunny in Oslo"]


def test_typed_output_in_auto_mode_uses_each_providers_own_mechanism(
    provider: str, model: ChatModel, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    if model.capabilities.native_output:
        speak(llm_server, provider, Text('{"name": "Oslo", "country": "Norway"}'))
    else:  # no native structured output: the final_result tool
        speak(llm_server, provider, Calls(("final_result", {"name": "Oslo", "country": "Norway"})))
    with Agent(model, runtime=runtime) as agent:
        assert agent.send("Where?", output_type=City).output == City("Oslo", "Norway")
    sent = json.dumps(llm_server.requests[0])
    assert ('"country"' in sent) and ("final_result" in sent) != model.capabilities.native_output


def test_no_provider_logs_its_key_even_at_trace_level(
    provider: str,
    llm_server: ScriptedLlmServer,
    runtime: Runtime,
    caplog: pytest.LogCaptureFixture,
    aws_credentials: None,
) -> None:
    key = "secret-key-4f2a9c"
    keyed = make_model(provider, llm_server.url, "wire", api_key=key, runtime=runtime)
    speak(llm_server, provider, Text("Hi."))
    caplog.set_level(TRACE, logger="agent_smith")
    with Agent(keyed, runtime=runtime) as agent:
        assert agent.send("Hello?").content == "Hi."
    assert "POST" in caplog.text and key not in caplog.text
