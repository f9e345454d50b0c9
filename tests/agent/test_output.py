"""Typed output through the agent, against the scripted server: modes, retries, streaming.

Each test scripts the model's replies and checks what went over the wire
(``response_format``, the ``final_result`` tool, the system prompt), what the
caller gets (``.output`` an instance, ``.content`` the raw text), and what the
history and events hold when replies do not fit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pydantic
import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentHooks,
    AgentRequest,
    ApprovalRequired,
    AssistantMessage,
    ConfigError,
    FinalAnswer,
    LlmClient,
    Message,
    OutputRetry,
    OutputValidationError,
    Runtime,
    SqliteSession,
    SubAgentSpec,
    SubAgentTool,
    TokenDelta,
    ToolMessage,
    ToolResult,
    UserMessage,
    messages_from_json,
    messages_to_json,
    parse_output,
    tool,
)
from tests.agent.test_stops import assert_consistent
from tests.support.invoices import INVOICE, INVOICE_DATA, INVOICE_JSON, City, Contact, Invoice
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.tools import tool_context

OSLO = {"name": "Oslo", "country": "NO"}


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city} is in Norway"


@tool
def finish(answer: str) -> ToolResult:
    """End the turn with this answer."""
    return ToolResult("ok", structured={"_done": True, "final_message": answer})


def turn(agent: Agent, text: str, *, stream: bool = False, **options: Any) -> list[Any]:
    """Every event of one streamed or drained turn (``send`` is the same loop drained)."""
    return list(agent.stream(AgentRequest(text, stream=stream, **options)))


def final(events: list[Any]) -> AssistantMessage:
    answers = [e.message for e in events if isinstance(e, FinalAnswer)]
    assert len(answers) == 1
    return answers[0]


def round_trip(history: list[Message]) -> list[Message]:
    return messages_from_json(messages_to_json(history))


# -- native ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_native_mode_sends_the_json_schema_and_returns_an_instance(
    llm_server: ScriptedLlmServer, llm: LlmClient, stream: bool
) -> None:
    llm_server.script(Text(INVOICE_JSON))
    agent = Agent(llm, "Read invoices.")
    reply = final(turn(agent, "Read this.", stream=stream, output_type=Invoice))
    assert reply.output == INVOICE
    assert reply.content == INVOICE_JSON
    body = llm_server.requests[0]
    assert "tools" not in body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Invoice",
            "schema": agent_schema(Invoice),
            "strict": False,
            "description": "An invoice read from a document.",
        },
    }
    assert agent.history[-1].output == INVOICE  # the recorded reply carries it too


def agent_schema(output_type: Any) -> dict[str, Any]:
    from agent_smith.agent.output_type import output_schema

    return output_schema(output_type).schema


def test_native_mode_is_strict_when_the_schema_allows_it(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(json.dumps(OSLO)), Text('{"response": 7}'))
    agent = Agent(llm)
    assert agent.send("Where?", output_type=City).output == City("Oslo", "NO")
    assert agent.send("How many?", output_type=int).output == 7
    formats = [r["response_format"]["json_schema"] for r in llm_server.requests]
    assert [f["strict"] for f in formats] == [True, True]
    assert formats[1]["schema"]["properties"] == {"response": {"type": "integer"}}


def test_native_retry_tells_the_model_what_was_wrong_in_a_user_message(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    bad = json.dumps({**INVOICE_DATA, "total": "lots", "status": "lost"})
    llm_server.script(Text(bad), Text(INVOICE_JSON))
    seen: list[Message] = []
    agent = Agent(llm, hooks=AgentHooks(on_message=seen.append))
    events = turn(agent, "Read this.", output_type=Invoice)
    retries = [e for e in events if isinstance(e, OutputRetry)]
    assert len(retries) == 1
    retry = retries[0]
    assert retry.attempt == 1 and retry.raw == bad
    assert any("at 'total': 'lots' is not of type 'number'" in e for e in retry.errors)
    assert any("at 'status': 'lost' is not one of" in e for e in retry.errors)
    assert isinstance(retry.feedback, UserMessage)
    assert "'lots' is not of type 'number'" in retry.feedback.content
    assert final(events).output == INVOICE
    # The invalid reply and the feedback are in the history and were sent back.
    assert [m.content for m in agent.history[1:3]] == [bad, retry.feedback.content]
    assert seen == agent.history
    second = llm_server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": bad}
    assert second[-1] == {"role": "user", "content": retry.feedback.content}


@pytest.mark.parametrize("stream", [False, True])
def test_exhausted_retries_raise_output_validation_error_with_raw_and_errors(
    llm_server: ScriptedLlmServer, llm: LlmClient, stream: bool
) -> None:
    llm_server.script(Text("Oslo!"), Text('{"name": "Oslo"}'), Text('{"name": 3, "country": "NO"}'))
    agent = Agent(llm, config=AgentConfig(output_retries=2, stream=stream))
    with pytest.raises(OutputValidationError) as caught:
        agent.send("Where?", output_type=City)
    err = caught.value
    assert err.attempts == 3
    assert err.raw == '{"name": 3, "country": "NO"}'
    assert err.errors == ("at 'name': 3 is not of type 'string'",)
    assert "City" in str(err) and "3 attempt(s)" in str(err)
    assert len(llm_server.requests) == 3
    history = agent.history
    assert [type(m).__name__ for m in history] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]
    assert history[-1].content == err.raw
    assert round_trip(history) == history


def test_no_retries_means_the_first_bad_reply_raises(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text("not json"))
    agent = Agent(llm, config=AgentConfig(output_retries=0))
    with pytest.raises(OutputValidationError, match="not valid JSON"):
        agent.send("Where?", output_type=City)
    assert len(llm_server.requests) == 1


# -- tool --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_tool_mode_offers_final_result_and_its_call_ends_the_turn(
    llm_server: ScriptedLlmServer, llm: LlmClient, stream: bool
) -> None:
    llm_server.script(Calls(("lookup", {"city": "Oslo"})), Calls(("final_result", OSLO)))
    agent = Agent(llm, "Find cities.", [lookup])
    reply = final(turn(agent, "Where is Oslo?", stream=stream, output_type=City))
    assert reply.output == City("Oslo", "NO")
    assert json.loads(reply.content) == OSLO
    assert len(llm_server.requests) == 2
    body = llm_server.requests[0]
    assert "response_format" not in body
    assert body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup", "final_result"]
    final_tool = body["tools"][1]["function"]
    assert final_tool["parameters"] == agent_schema(City)
    assert "the call ends the conversation turn. A city" in final_tool["description"]
    history = agent.history
    assert isinstance(history[-2], ToolMessage) and history[-2].name == "final_result"
    assert not history[-2].is_error
    assert (history[-1].content, history[-1].output) == (reply.content, reply.output)
    assert agent.tools == ["lookup"]  # final_result is the turn's, not the agent's
    assert_consistent(history)
    assert round_trip(history) == history


def test_tool_mode_bad_arguments_come_back_as_the_tool_error_result(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Calls(("final_result", {"name": "Oslo"})), Calls(("final_result", OSLO)))
    agent = Agent(llm, tools=[lookup])
    events = turn(agent, "Where?", output_type=City)
    retry = next(e for e in events if isinstance(e, OutputRetry))
    assert retry.errors == ("'country' is a required property",)
    assert isinstance(retry.feedback, ToolMessage) and retry.feedback.is_error
    assert "'country' is a required property" in retry.feedback.content
    assert retry.feedback in agent.history
    assert final(events).output == City("Oslo", "NO")
    sent_back = llm_server.requests[1]["messages"][-1]
    assert (
        sent_back["role"] == "tool" and "'country' is a required property" in sent_back["content"]
    )


def test_tool_mode_exhaustion_leaves_every_call_with_its_result(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    # The same bad call three times: the output retries decide, not the loop guard.
    llm_server.script(*[Calls(("final_result", {"name": "Oslo"}))] * 3)
    agent = Agent(llm, tools=[lookup])
    with pytest.raises(OutputValidationError) as caught:
        agent.send("Where?", output_type=City)
    assert caught.value.attempts == 3
    assert json.loads(caught.value.raw) == {"name": "Oslo"}
    history = agent.history
    assert isinstance(history[-1], ToolMessage) and history[-1].is_error
    assert_consistent(history)
    assert round_trip(history) == history


def test_tool_mode_text_reply_is_told_to_call_final_result(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text("It is in Norway."), Calls(("final_result", OSLO)))
    agent = Agent(llm, tools=[lookup])
    events = turn(agent, "Where?", output_type=City)
    retry = next(e for e in events if isinstance(e, OutputRetry))
    assert isinstance(retry.feedback, UserMessage)
    assert "`final_result` tool" in retry.feedback.content
    assert retry.errors[0] == "the reply is not a call to the final_result tool"
    assert final(events).output == City("Oslo", "NO")


def test_tool_mode_accepts_a_text_reply_that_is_valid_json_for_the_type(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(json.dumps(OSLO)))
    agent = Agent(llm, tools=[lookup])
    assert agent.send("Where?", output_type=City).output == City("Oslo", "NO")


def test_a_tool_ending_the_turn_must_end_it_with_the_output(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(
        Calls(("finish", {"answer": json.dumps(OSLO)})), Calls(("finish", {"answer": "Oslo"}))
    )
    agent = Agent(llm, tools=[finish], output_type=City)
    assert agent.send("Where?").output == City("Oslo", "NO")
    with pytest.raises(OutputValidationError, match="a tool ended the turn"):
        agent.send("Again?")
    assert_consistent(agent.history)


def test_a_tool_named_final_result_is_refused_in_tool_mode_before_any_request(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    @tool
    def final_result(text: str) -> str:
        """Mine."""
        return text

    agent = Agent(llm, tools=[final_result])
    with pytest.raises(ConfigError, match="final_result"):
        agent.send("Hi", output_type=City)
    assert llm_server.requests == [] and agent.history == []
    llm_server.script(Text(json.dumps(OSLO)))
    assert agent.send("Hi", output_type=City, output_mode="native").output == City("Oslo", "NO")


# -- prompted and auto -------------------------------------------------------------


def test_prompted_mode_puts_the_schema_in_the_system_prompt_and_asks_for_json(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text('```json\n{"response": 42}\n```'), Text('{"response": 1}'))
    agent = Agent(llm, "Count things.")
    assert agent.send("How many?", output_type=int, output_mode="prompted").output == 42
    body = llm_server.requests[0]
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Count things.\n\n")
    assert json.dumps(agent_schema(int)) in system["content"]
    assert agent.history[0] == UserMessage("How many?")  # the prompt note is not in history
    bare = Agent(llm)
    assert bare.send("How many?", output_type=int, output_mode="prompted").output == 1
    assert llm_server.requests[1]["messages"][0]["role"] == "system"


def test_auto_mode_is_native_without_tools_and_tool_mode_with_them(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(json.dumps(OSLO)), Calls(("final_result", OSLO)))
    Agent(llm).send("Where?", output_type=City)
    Agent(llm, tools=[lookup]).send("Where?", output_type=City)
    native, tools = llm_server.requests
    assert native["response_format"]["type"] == "json_schema" and "tools" not in native
    assert (
        "response_format" not in tools and tools["tools"][-1]["function"]["name"] == "final_result"
    )


# -- API ---------------------------------------------------------------------------


def test_agent_default_output_type_request_override_and_text_mode(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(json.dumps(OSLO)), Text('{"response": 3}'), Text("Just text."))
    agent = Agent(llm, output_type=City)
    assert agent.send("Where?").output == City("Oslo", "NO")
    assert agent.send(AgentRequest("How many?", output_type=int)).output == 3
    plain = agent.send("Chat.", output_mode="text")
    assert plain.output is None and plain.content == "Just text."
    assert "response_format" not in llm_server.requests[2]
    llm_server.script(Text("Chat."), Text('{"response": 5}'))
    chatty = Agent(llm, output_type=City, output_mode="text")
    assert chatty.send("Hi").output is None
    assert chatty.send("How many?", output_type=int).output == 5


def test_typeddict_and_pydantic_outputs_through_the_agent(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    class Person(pydantic.BaseModel):
        name: str
        age: int

    llm_server.script(Text('{"name": "Ann"}'), Text('{"name": "Bo", "age": 4}'))
    agent = Agent(llm)
    assert agent.send("Who?", output_type=Contact).output == {"name": "Ann"}
    person = agent.send("Who else?", output_type=Person).output
    assert isinstance(person, Person) and person.age == 4


def test_streamed_json_arrives_as_token_deltas_and_the_final_answer_carries_output(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(INVOICE_JSON))
    events = turn(Agent(llm), "Read this.", stream=True, output_type=Invoice)
    deltas = [e.text for e in events if isinstance(e, TokenDelta)]
    assert len(deltas) > 10 and "".join(deltas) == INVOICE_JSON
    assert final(events).output == INVOICE


def test_history_round_trips_through_json_and_output_is_rebuilt_from_content(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text(INVOICE_JSON))
    agent = Agent(llm)
    agent.send("Read this.", output_type=Invoice)
    loaded = round_trip(agent.history)
    assert loaded == agent.history
    assert loaded[-1].output is None  # type: ignore[union-attr]
    assert "output" not in messages_to_json(agent.history)
    assert parse_output(Invoice, loaded[-1].content) == INVOICE


def test_bad_output_options_are_config_errors_before_any_request(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    with pytest.raises(ConfigError, match="output_mode"):
        Agent(llm, output_mode="json")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="object"):
        Agent(llm, output_type=object)
    with pytest.raises(ConfigError, match="output_mode"):
        AgentRequest("Hi", output_mode="xml")  # type: ignore[arg-type]
    agent = Agent(llm)
    with pytest.raises(ConfigError, match="needs an output_type"):
        agent.send("Hi", output_mode="native")
    assert llm_server.requests == [] and agent.history == []


# -- sub-agents --------------------------------------------------------------------


def test_a_typed_sub_agent_returns_json_text_and_structured_data(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec(
        name="geo", description="Finds a city.", system_prompt="Geo.", output_type=City
    )
    llm_server.script(
        Calls(("geo", {"task": "Where is Oslo?"})), Text(json.dumps(OSLO)), Text("Oslo, NO.")
    )
    parent = Agent(llm, "Boss.")
    parent.add_subagent(spec)
    assert parent.send("Find Oslo.").content == "Oslo, NO."
    child_body = llm_server.requests[1]
    assert child_body["messages"][0] == {"role": "system", "content": "Geo."}
    assert child_body["response_format"]["json_schema"]["name"] == "City"
    result = next(m for m in parent.history if isinstance(m, ToolMessage))
    assert not result.is_error and json.loads(result.content) == OSLO
    # The tool's own result keeps the value as structured data too.
    llm_server.script(Text(json.dumps(OSLO)))
    direct = SubAgentTool(spec, llm).invoke(
        {"task": "Again"}, replace(tool_context(runtime), agent=parent)
    )
    assert direct.structured == OSLO and json.loads(direct.content) == OSLO


def test_a_typed_sub_agent_that_never_fits_is_an_error_result(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec(
        name="geo",
        description="Finds a city.",
        output_type=City,
        config=AgentConfig(output_retries=0),
    )
    llm_server.script(Text("no idea"))
    result = SubAgentTool(spec, llm).invoke(
        {"task": "?"}, replace(tool_context(runtime), agent=Agent(llm))
    )
    assert result.is_error and "sub-agent 'geo' failed" in result.content
    with pytest.raises(ConfigError):
        SubAgentSpec(name="geo", description="x", output_type=object)


def test_a_session_stores_the_raw_reply_and_a_reload_rebuilds_the_output(
    llm_server: ScriptedLlmServer, llm: LlmClient, tmp_path: Path
) -> None:
    llm_server.script(Text(INVOICE_JSON))
    with SqliteSession(tmp_path / "chats.db", "user-1") as session:
        Agent(llm, session=session).send("Read this.", output_type=Invoice)
    with SqliteSession(tmp_path / "chats.db", "user-1") as session:
        stored = Agent(llm, session=session).history
    assert stored[-1].content == INVOICE_JSON and stored[-1].output is None  # type: ignore[union-attr]
    assert parse_output(Invoice, stored[-1].content) == INVOICE


# -- approvals -----------------------------------------------------------------------


def test_a_resume_takes_the_output_type_its_paused_send_had(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    @tool(requires_approval=True)
    def book(city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    llm_server.script(Calls(("book", {"city": "Oslo"})), Calls(("final_result", OSLO)))
    agent = Agent(llm, tools=[book])  # no agent-wide type: this send has its own
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("Book Oslo and tell me where it is.", output_type=City)
    call_id = caught.value.requests[0].call_id
    reply = agent.resume(caught.value.state, {call_id: True}, output_type=City)
    assert reply.output == City("Oslo", "NO")
    assert llm_server.requests[1]["tools"][-1]["function"]["name"] == "final_result"


def test_a_typed_turn_paused_for_approval_resumes_to_its_output(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    @tool(requires_approval=True)
    def book(city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    # The paused round holds final_result too: on resume it must still be found.
    llm_server.script(Calls(("book", {"city": "Oslo"}), ("final_result", OSLO)))
    agent = Agent(llm, tools=[book], output_type=City)
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("Book Oslo and tell me where it is.")
    assert llm_server.requests[0]["tools"][-1]["function"]["name"] == "final_result"
    reply = agent.resume(caught.value.state, {caught.value.requests[0].call_id: True})
    assert reply.output == City("Oslo", "NO")
    assert len(llm_server.requests) == 1  # the resumed round ended the turn
    assert [m.content for m in agent.history if isinstance(m, ToolMessage)] == [
        "booked Oslo",
        "Final result accepted.",
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_a_bare_enum_answer_is_accepted_where_the_wrapper_was_asked_for(
    llm_server: ScriptedLlmServer, llm: LlmClient, stream: bool
) -> None:
    from tests.agent.test_output_type import Mood

    llm_server.script(Text('"sad"'))
    agent = Agent(llm, "Say how the user feels.")
    reply = final(turn(agent, "I lost my keys.", stream=stream, output_type=Mood))
    assert reply.output is Mood.SAD
    assert len(llm_server.requests) == 1  # no retry was needed
