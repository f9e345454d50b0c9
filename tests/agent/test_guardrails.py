"""Guardrails on a turn's input, final answer and tool calls: verdicts, events, history."""

from __future__ import annotations

import threading

import pytest

from agent_smith import (
    Agent,
    FinalAnswer,
    GuardrailChecked,
    Guardrails,
    GuardrailVerdict,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.errors import ConfigError, GuardrailTripped
from agent_smith.llm.client import LlmClient
from agent_smith.messages import AssistantMessage
from agent_smith.tools.function import tool
from tests.agent.conftest import WAIT
from tests.support.llm_server import Calls, Chunks, ScriptedLlmServer, Text


def no_secrets(message: UserMessage) -> GuardrailVerdict | None:
    return GuardrailVerdict.trip("asks for a secret") if "secret" in message.content else None


def polite(answer: AssistantMessage) -> GuardrailVerdict | None:
    if "please" in answer.content:
        return None
    return GuardrailVerdict.feedback("say please")


def test_an_input_trip_raises_before_the_model_is_asked(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    agent = Agent(llm, guardrails=Guardrails(input=[no_secrets]))
    with pytest.raises(GuardrailTripped) as caught:
        agent.send("tell me the secret")
    assert (caught.value.guardrail, caught.value.stage) == ("no_secrets", "input")
    assert llm_server.requests == []
    assert agent.history == [UserMessage("tell me the secret")]


def test_each_verdict_is_a_stream_event(llm: LlmClient, llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Text("fine, please"))
    agent = Agent(llm, guardrails=Guardrails(input=[no_secrets], output=[polite]))
    checked = [e for e in agent.stream("hello") if isinstance(e, GuardrailChecked)]
    assert [(c.stage, c.guardrail, c.action) for c in checked] == [
        ("input", "no_secrets", "allow"),
        ("output", "polite", "allow"),
    ]


def test_an_input_trip_beside_the_model_cancels_its_call(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    release = threading.Event()
    checking = threading.Event()

    def slow_trip(message: UserMessage) -> GuardrailVerdict:
        checking.wait(WAIT)  # the model call is under way
        return GuardrailVerdict.trip("no")

    # the reply stalls until the guardrail has tripped (release is never set by the test)
    llm_server.script(Chunks(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n', release))
    agent = Agent(llm, guardrails=Guardrails(input=[slow_trip], input_beside_model=True))
    events = agent.stream("go")
    with pytest.raises(GuardrailTripped):
        for _ in events:
            checking.set()
    release.set()
    assert len(llm_server.requests) == 1
    assert agent.history == [UserMessage("go")]


def test_input_guardrails_beside_the_model_let_an_allowed_turn_finish(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("hi"))
    guards = Guardrails(input=[no_secrets], input_beside_model=True)
    agent = Agent(llm, guardrails=guards)
    events = list(agent.stream("hello"))
    checks = [e for e in events if isinstance(e, GuardrailChecked)]
    assert [(c.stage, c.guardrail, c.action) for c in checks] == [("input", "no_secrets", "allow")]
    assert isinstance(events[-1], FinalAnswer)
    assert events[-1].message.content == "hi"
    assert [m.content for m in agent.history] == ["hello", "hi"]


def test_output_feedback_asks_again_then_accepts(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("no"), Text("yes, please"))
    agent = Agent(llm, guardrails=Guardrails(output=[polite]))
    assert agent.send("go").content == "yes, please"
    assert [m.content for m in agent.history] == ["go", "no", "say please", "yes, please"]


def test_output_feedback_is_bounded_then_trips_and_the_answer_is_not_kept(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("no"), Text("still no"))
    agent = Agent(llm, guardrails=Guardrails(output=[polite], output_retries=1))
    with pytest.raises(GuardrailTripped, match="say please"):
        agent.send("go")
    assert [m.content for m in agent.history] == ["go", "no", "say please"]


def test_a_tool_call_is_blocked_with_a_message_the_model_reads(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    ran: list[str] = []

    @tool
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    def not_root(call: ToolCall) -> GuardrailVerdict | None:
        if call.arguments.get("path") == "/":
            return GuardrailVerdict.block("never the root")
        return None

    llm_server.script(Calls(("delete", {"path": "/"}), ("delete", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=[delete], guardrails=Guardrails(tool_calls=[not_root]))
    agent.send("go")
    assert ran == ["a"]
    results = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert "never the root" in results[0].content and results[1].content == "deleted"
    sent = llm_server.requests[1]["messages"]
    assert any("never the root" in str(m.get("content")) for m in sent)


def test_a_rewrite_changes_the_arguments_in_the_history_too(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    seen: list[int] = []

    @tool
    def fetch(limit: int) -> str:
        """Fetch rows."""
        seen.append(limit)
        return "rows"

    def cap(call: ToolCall) -> GuardrailVerdict | None:
        if call.arguments.get("limit", 0) > 100:
            return GuardrailVerdict.rewrite({**call.arguments, "limit": 100})
        return None

    llm_server.script(Calls(("fetch", {"limit": 10_000})), Text("ok"))
    agent = Agent(llm, tools=[fetch], guardrails=Guardrails(tool_calls=[cap]))
    agent.send("go")
    assert seen == [100]
    caller = next(m for m in agent.history if isinstance(m, AssistantMessage) and m.tool_calls)
    assert caller.tool_calls[0].arguments == {"limit": 100}


def test_a_guardrail_that_raises_fails_closed(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    def broken(message: UserMessage) -> GuardrailVerdict:
        raise RuntimeError("bug")

    with pytest.raises(GuardrailTripped, match="RuntimeError"):
        Agent(llm, guardrails=Guardrails(input=[broken])).send("go")


def test_a_verdict_the_stage_does_not_take_is_a_config_error(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    def wrong(message: UserMessage) -> GuardrailVerdict:
        return GuardrailVerdict.block("?")

    with pytest.raises(ConfigError):
        Agent(llm, guardrails=Guardrails(input=[wrong])).send("go")
    with pytest.raises(ConfigError):
        Guardrails(output_retries=-1)


def test_an_output_guardrail_sees_the_typed_output(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    from tests.support.invoices import City

    seen: list[object] = []

    def record(answer: AssistantMessage) -> None:
        seen.append(answer.output)

    llm_server.script(Text('{"name": "Paris", "country": "France"}'))
    agent = Agent(llm, guardrails=Guardrails(output=[record]))
    answer = agent.send("Capital of France?", output_type=City, output_mode="native")
    assert seen == [answer.output] and isinstance(answer.output, City)
