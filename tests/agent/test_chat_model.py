"""An agent takes any ChatModel: the loop, typed output, approvals, sessions, sub-agents, batch.

Played against the in-process TestModel, so nothing here depends on the
OpenAI client; the HTTP providers' own agent tests are under tests/llm/.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    AgentSpec,
    ApprovalRequired,
    AssistantMessage,
    CancelledError,
    FinalAnswer,
    LlmRequest,
    ModelCapabilities,
    ProviderData,
    Runtime,
    SqliteSession,
    SubAgentSpec,
    TestModel,
    TokenDelta,
    ToolCallRequested,
    ToolMessage,
    tool,
)
from agent_smith.llm.testing import call
from tests.support.invoices import City

WAIT = 10.0


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def tool_results(request: LlmRequest) -> list[str]:
    return [m.content for m in request.messages if isinstance(m, ToolMessage)]


def test_a_tool_loop_with_parallel_calls_runs_on_any_chat_model(runtime: Runtime) -> None:
    model = TestModel([[call("get_weather", city="Paris"), call("get_weather", city="Oslo")], "ok"])
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        answer = agent.send("Weather?")
    assert answer.content == "ok"
    assert tool_results(model.requests[1]) == ["sunny in Paris", "sunny in Oslo"]
    assert answer.usage is not None and answer.usage.completion > 0


def test_streaming_gives_the_model_events_and_the_agent_events(runtime: Runtime) -> None:
    model = TestModel([call("get_weather", city="Paris"), "It is sunny."])
    with Agent(model, tools=[get_weather], runtime=runtime) as agent:
        events = list(agent.stream("Weather?"))
    assert [e.call.name for e in events if isinstance(e, ToolCallRequested)] == ["get_weather"]
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "It is sunny."
    assert isinstance(events[-1], FinalAnswer)


def test_typed_output_is_native_when_the_model_says_it_can(runtime: Runtime) -> None:
    model = TestModel(['{"name": "Paris", "country": "France"}'])
    with Agent(model, runtime=runtime) as agent:
        answer = agent.send("Where?", output_type=City)
    assert answer.output == City("Paris", "France")
    assert model.requests[0].sampling.response_format is not None


def test_typed_output_uses_the_final_result_tool_when_the_model_cannot(runtime: Runtime) -> None:
    plain = ModelCapabilities(provider="test", native_output=False)
    model = TestModel([call("final_result", name="Oslo", country="Norway")], capabilities=plain)
    with Agent(model, runtime=runtime) as agent:
        answer = agent.send("Where?", output_type=City)
    assert answer.output == City("Oslo", "Norway")
    assert model.requests[0].sampling.response_format is None
    assert [t.name for t in model.requests[0].tools] == ["final_result"]


def test_approvals_pause_and_resume_on_any_chat_model(runtime: Runtime) -> None:
    model = TestModel([call("delete_file", path="a.txt"), "Deleted."])
    with Agent(model, tools=[delete_file], runtime=runtime) as agent:
        with pytest.raises(ApprovalRequired) as paused:
            agent.send("Delete a.txt")
        (waiting,) = paused.value.requests
        answer = agent.resume(paused.value.state, {waiting.call.id: True})
    assert answer.content == "Deleted."
    assert tool_results(model.requests[1]) == ["deleted a.txt"]


def test_cancel_from_another_thread_stops_a_turn(runtime: Runtime) -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def slow() -> str:
        """Waits."""
        started.set()
        release.wait(WAIT)
        return "done"

    model = TestModel([call("slow"), "never read"])
    with Agent(model, tools=[slow], runtime=runtime) as agent:
        stopper = threading.Thread(target=lambda: (started.wait(WAIT), agent.cancel()))
        stopper.start()
        try:
            with pytest.raises(CancelledError):
                agent.send("Go")
        finally:
            release.set()
            stopper.join(WAIT)
    assert len(model.requests) == 1


def test_a_session_keeps_provider_data_for_the_next_turn(tmp_path: Path, runtime: Runtime) -> None:
    signed = ProviderData("test", {"signature": "abc"})
    model = TestModel([AssistantMessage("first", provider_data=signed), "second"])
    with (
        SqliteSession(tmp_path / "s.db", "s1") as session,
        Agent(model, runtime=runtime, session=session) as agent,
    ):
        agent.send("one")
    with (
        SqliteSession(tmp_path / "s.db", "s1") as session,
        Agent(model, runtime=runtime, session=session) as agent,
    ):
        agent.send("two")
    replayed = [m for m in model.requests[1].messages if isinstance(m, AssistantMessage)]
    assert replayed[0].provider_data == signed


def test_a_sub_agent_may_talk_to_another_model(runtime: Runtime) -> None:
    child_model = TestModel(["child says hi"])
    parent_model = TestModel([call("helper", task="greet"), "parent done"])
    with Agent(parent_model, runtime=runtime) as agent:
        agent.add_subagent(SubAgentSpec("helper", "Helps."), llm=child_model)
        assert agent.send("Go").content == "parent done"
    assert tool_results(parent_model.requests[1]) == ["child says hi"]


def test_a_batch_spec_names_its_provider() -> None:
    spec = AgentSpec.from_dict({"base_url": "http://127.0.0.1:9", "provider": "anthropic"})
    assert AgentSpec.from_dict(spec.to_dict()) == spec
    assert spec.make_llm().capabilities.provider == "anthropic"
    with pytest.raises(Exception, match="unknown provider 'nope'"):
        AgentSpec.from_dict({"base_url": "http://127.0.0.1:9", "provider": "nope"})


def test_a_models_known_context_size_is_the_window_the_turn_fits_into() -> None:
    from agent_smith.agent.context_fit import ContextFit

    sized = TestModel(capabilities=ModelCapabilities(provider="test", context_size=4096))
    assert ContextFit(None, sized).window(ask=True) == 4096
    assert ContextFit(2048, sized).window(ask=True) == 2048
    assert ContextFit(None, TestModel()).window(ask=True) is None
