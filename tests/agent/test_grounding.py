"""A small model's ungrounded call is taken back before it shows, and the model chooses again."""

from __future__ import annotations

import pytest

from agent_smith import Agent, AgentConfig, LlmClient, Runtime, tool
from agent_smith.agent.events import FinalAnswer, ToolCallRequested
from agent_smith.agent.grounding import said
from agent_smith.llm.events import TokenDelta, ToolCallCompleted, ToolCallStarted
from agent_smith.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from agent_smith.tools.base import JsonObject, Said, Tool, ToolContext, ToolResult, ToolSchema
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

MADE_UP = '{"tool": "lookup", "arguments": {"key": "B12"}}'
GROUNDED = '{"tool": "lookup", "arguments": {"key": "room"}}'


class Lookup(Tool):
    """``lookup(key)``: grounded when the user said the key."""

    def __init__(self) -> None:
        self.asked: list[tuple[JsonObject, Said]] = []

    @property
    def schema(self) -> ToolSchema:
        return ToolSchema(
            "lookup",
            "Look a key up.",
            {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        )

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"{args['key']}: B12")

    def ungrounded(self, args: JsonObject, said: Said) -> str | None:
        self.asked.append((args, said))
        return None if args["key"] in said.user else "the user never said it"


@tool
def clock() -> str:
    """The time."""
    return "12:00"


def small_agent(llm: LlmClient, runtime: Runtime, lookup: Tool, *, stream: bool) -> Agent:
    config = AgentConfig(small_model=True, stream=stream)
    return Agent(llm, "Use tools.", [lookup, clock], config=config, runtime=runtime)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not streamed"])
def test_an_ungrounded_call_is_never_shown_nor_run_and_the_model_is_asked_for_words(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text(MADE_UP, usage=(100, 7)), Text("Room B12.", usage=(90, 5)))
    agent = small_agent(llm, runtime, Lookup(), stream=stream)
    events = list(agent.stream("Which room is it in?"))
    assert not [e for e in events if isinstance(e, ToolCallRequested | ToolCallStarted)]
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.message.content == "Room B12."
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "Room B12."
    first, second = llm_server.requests
    assert "- lookup(key)" in first["messages"][0]["content"]
    assert second["messages"][0]["content"] == "Use tools."  # no tools listed
    assert "tools" not in second and "response_format" not in second
    assert [m.role for m in agent.history] == ["user", "assistant"]
    usage = agent.history[1].usage  # type: ignore[union-attr]
    assert usage is not None and (usage.prompt, usage.completion) == (190, 12)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not streamed"])
def test_a_grounded_call_runs_as_chosen(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text(GROUNDED), Text("Room B12."))
    lookup = Lookup()
    events = list(small_agent(llm, runtime, lookup, stream=stream).stream("Which room?"))
    (requested,) = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested.call.arguments == {"key": "room"}
    assert [type(e) for e in events].count(ToolCallStarted) == (1 if stream else 0)
    assert lookup.asked[0][1].user == "Which room?"


def test_a_bigger_model_is_not_checked(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("lookup", {"key": "B12"})), Text("Room B12."))
    lookup = Lookup()
    agent = Agent(llm, "Use tools.", [lookup], runtime=runtime)
    assert agent.send("Which one?").content == "Room B12."
    assert lookup.asked == []


def test_said_holds_the_users_words_apart_from_the_answers_and_results() -> None:
    messages = (
        SystemMessage("You are 7 years old."),
        UserMessage("Read notes.txt"),
        AssistantMessage("", tool_calls=()),
        ToolMessage("c1", "read_file", "Room B12"),
        AssistantMessage("It is in B12."),
        UserMessage("Which room?"),
    )
    told = said(messages)
    assert told.user == "Read notes.txt\nWhich room?"
    assert "B12" in told.text and "Room B12" in told.text and "7 years" not in told.text


class Lister(Tool):
    """``lister(path=".")``: grounded for the folders that exist."""

    @property
    def schema(self) -> ToolSchema:
        return ToolSchema(
            "lister", "List a folder.", {"type": "object", "properties": {"path": {}}}
        )

    def invoke(self, args: JsonObject, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"listed {args.get('path', '.')}")

    def ungrounded(self, args: JsonObject, said: Said) -> str | None:
        return None if args.get("path", ".") in (".", "todo") else "no such folder"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not streamed"])
def test_an_optional_argument_made_up_from_nothing_is_dropped(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    made_up = '{"tool": "lister", "arguments": {"path": "/home/user/documents"}}'
    llm_server.script(Text(made_up), Text("Listed."))
    config = AgentConfig(small_model=True, stream=stream)
    agent = Agent(llm, "Use tools.", [Lister()], config=config, runtime=runtime)
    events = list(agent.stream("List the files in this folder."))
    (requested,) = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested.call.arguments == {}
    assert agent.history[2].content == "listed ."  # type: ignore[union-attr]
    if stream:
        (completed,) = [e for e in events if isinstance(e, ToolCallCompleted)]
        assert completed.arguments == {}
    assert len(llm_server.requests) == 2


def test_an_optional_argument_copied_from_the_conversation_takes_the_call_back(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    copied = '{"tool": "lister", "arguments": {"path": "B12"}}'
    llm_server.script(Text("It is in room B12."), Text(copied), Text("Room B12."))
    config = AgentConfig(small_model=True)
    agent = Agent(llm, "Use tools.", [Lister()], config=config, runtime=runtime)
    agent.send("Where is the meeting?")
    events = list(agent.stream("Which room is it in?"))
    assert not [e for e in events if isinstance(e, ToolCallRequested)]
    assert agent.history[-1].content == "Room B12."
