"""A small model's reply as a constrained choice: one offered tool's call, or an answer.

The request's shape and the reading of replies on their own, then a small
model's agent against the scripted server, streamed and not: the agent
sees native calls and words, the user never the JSON.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import jsonschema
import pytest

from agent_smith import Agent, AgentConfig, LlmClient, Runtime, tool
from agent_smith.agent.events import AssistantTurn, FinalAnswer, ToolCallRequested
from agent_smith.agent.small_chat import choice_events
from agent_smith.agent.text_tool_calls import CUT_NOTE
from agent_smith.agent.tool_choice import (
    ANSWER_TOOL,
    WORDS_GRAMMAR,
    answer_so_far,
    choice_request,
    choice_schema,
    chosen_name,
    may_be_choice,
    needed_only,
    read_choice,
    results_told,
    tools_prompt,
)
from agent_smith.llm.events import Finished, TokenDelta, ToolCallCompleted, ToolCallStarted
from agent_smith.llm.request import LlmRequest, LlmResponse, SamplingParams
from agent_smith.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.tools.base import ToolSchema
from tests.support.llm_server import ScriptedLlmServer, Text

CALC = ToolSchema(
    "calculator",
    "Evaluate an arithmetic expression.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)
NOW = ToolSchema("now", "The current date and time.", {"type": "object", "properties": {}})
CHOICE = '{"tool": "calculator", "arguments": {"expression": "17 * 23"}}'
ANSWER = '{"tool": "answer", "arguments": {"text": "It is \\"391\\".\\nDone \\u00e9"}}'


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return {"17 * 23": "391"}.get(expression, "?")


def request(*tools: ToolSchema, response_format: Any = None, **changes: Any) -> LlmRequest:
    messages = (SystemMessage("Be brief."), UserMessage("What is 17 times 23?"))
    sampling = SamplingParams(response_format=response_format)
    return LlmRequest(messages, tools, sampling, **changes)


def test_the_schema_admits_one_offered_tools_call_or_an_answer_and_nothing_else() -> None:
    schema = choice_schema((CALC, NOW))
    valid = [
        {"tool": "calculator", "arguments": {"expression": "1+1"}},
        {"tool": "now", "arguments": {}},
        {"tool": ANSWER_TOOL, "arguments": {"text": "Hi."}},
    ]
    for value in valid:
        jsonschema.validate(value, schema)
    invalid = [
        {"tool": "power", "arguments": {}},  # an invented tool
        {"tool": "calculator", "arguments": {}},  # its required argument missing
        {"tool": "calculator", "arguments": {"expression": "1"}, "extra": 1},
        {"name": "calculator", "arguments": {"expression": "1"}},
    ]
    for value in invalid:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, schema)


def test_a_request_with_tools_lists_them_in_the_prompt_and_asks_for_a_choice() -> None:
    sent = choice_request(request(CALC, NOW))
    assert sent is not None
    assert sent.tools == () and sent.tool_choice is None
    assert sent.messages[0].content == f"Be brief.\n\n{tools_prompt((CALC, NOW))}"
    assert "- calculator(expression): Evaluate an arithmetic expression." in tools_prompt((CALC,))
    listed = tools_prompt((CALC,))
    assert listed.index(f"- {ANSWER_TOOL}(text)") < listed.index("- calculator(")
    assert sent.sampling.response_format == {
        "type": "json_schema",
        "json_schema": {
            "name": "tool_choice",
            "schema": choice_schema((needed_only(CALC), needed_only(NOW))),
        },
    }


def test_a_tool_with_required_parameters_is_offered_without_its_optional_ones() -> None:
    read = ToolSchema(
        "read_file",
        "Read a file.",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}},
            "required": ["path"],
        },
    )
    listing = ToolSchema(
        "list_files", "List a folder.", {"type": "object", "properties": {"path": {}}}
    )
    sent = choice_request(request(read, listing))
    assert sent is not None
    assert "- read_file(path): Read a file." in sent.messages[0].content
    assert "- list_files(path): List a folder." in sent.messages[0].content
    schema = sent.sampling.response_format["json_schema"]["schema"]  # type: ignore[index]
    jsonschema.validate({"tool": "list_files", "arguments": {"path": "todo"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"tool": "read_file", "arguments": {"path": "a", "start_line": 1}}, schema
        )


def test_the_request_after_tool_results_tells_them_and_asks_for_words() -> None:
    call = ToolCall("c1", "calculator", {"expression": "17 * 23"})
    now = ToolCall("c2", "now", {})
    earlier = (UserMessage("Hi"), AssistantMessage("Hello."))
    round_ = (
        AssistantMessage("", tool_calls=(call, now)),
        ToolMessage("c1", "calculator", "391"),
        ToolMessage("c2", "now", "clock stopped", is_error=True),
        UserMessage("Answer: What is 17 times 23?"),
    )
    base = request(CALC, NOW, tool_choice="none")
    question = UserMessage("What is 17 times 23?\n\nRead notes.txt with read_file first.")
    messages = (base.messages[0], *earlier, question, *round_)
    words = choice_request(replace(base, messages=messages))
    assert words is not None
    assert words.tools == () and words.sampling.response_format is None
    assert words.sampling.extra == {"grammar": WORDS_GRAMMAR}
    assert words.messages == (
        SystemMessage("Be brief."),
        *earlier,
        UserMessage("What is 17 times 23?"),  # as the note quotes it
        UserMessage(
            'calculator(expression="17 * 23") returned:\n391\n\n'
            "now() failed:\nclock stopped\n\nAnswer: What is 17 times 23?"
        ),
    )


def test_messages_that_end_in_no_round_of_results_are_told_as_they_are() -> None:
    messages = request(CALC).messages
    assert results_told(messages) == messages
    assert results_told(()) == ()


def test_a_round_without_the_note_keeps_the_question() -> None:
    call = ToolCall("c1", "now", {})
    question = UserMessage("What time is it?")
    round_ = (AssistantMessage("", tool_calls=(call,)), ToolMessage("c1", "now", "12:00"))
    assert results_told((question, *round_)) == (question, UserMessage("now() returned:\n12:00"))


@pytest.mark.parametrize(
    "changes",
    [
        {"tools": ()},
        {"response_format": {"type": "json_object"}},
        {"tools": (ToolSchema(ANSWER_TOOL, "Answer."),)},
    ],
    ids=["no tools", "typed output", "a tool named answer"],
)
def test_a_request_that_cannot_be_a_choice_goes_as_it_is(changes: dict[str, Any]) -> None:
    tools = changes.pop("tools", (CALC,))
    assert choice_request(request(*tools, **changes)) is None


def test_a_reply_reads_as_a_call_an_answer_or_no_choice() -> None:
    choice = read_choice(CHOICE)
    assert choice is not None and choice.call is not None
    assert (choice.call.name, choice.call.arguments) == ("calculator", {"expression": "17 * 23"})
    assert choice.call.id.startswith("call_") and len(choice.call.id) == 29
    answer = read_choice(ANSWER)
    assert answer is not None and answer.call is None
    assert answer.answer == 'It is "391".\nDone é'
    for text in ('{"name": "calculator", "arguments": {}}', "391", '{"tool": "answer"', "[]"):
        assert read_choice(text) is None


def test_a_reply_being_written_shows_its_name_then_its_answer_decoded_so_far() -> None:
    assert may_be_choice(' { "to') and may_be_choice("")
    assert not may_be_choice('{"name": "calculator"') and not may_be_choice("Hello")
    assert chosen_name('{"tool": "calcu') is None
    assert chosen_name('{"tool": "calculator", "argu') == "calculator"
    assert answer_so_far(CHOICE) is None
    assert answer_so_far(ANSWER[:49]) == "It is "  # a cut escape waits for its end
    assert answer_so_far(ANSWER[:57]) == 'It is "391".'
    assert answer_so_far(ANSWER[:-5]) == 'It is "391".\nDone '  # and a cut \u escape
    assert answer_so_far(ANSWER) == 'It is "391".\nDone é'


def pieces(text: str, size: int = 3, finish: str = "stop") -> list[Any]:
    events: list[Any] = [TokenDelta(text[i : i + size]) for i in range(0, len(text), size)]
    response = LlmResponse(AssistantMessage(text), finish)
    return [*events, Finished(finish, None, response)]


def test_a_streamed_call_shows_no_text_only_the_call() -> None:
    out = list(choice_events(iter(pieces(CHOICE))))
    assert not [e for e in out if isinstance(e, TokenDelta)]
    started, completed, finished = out
    assert isinstance(started, ToolCallStarted) and started.name == "calculator"
    assert isinstance(completed, ToolCallCompleted)
    assert completed.arguments == {"expression": "17 * 23"}
    assert isinstance(finished, Finished) and finished.finish_reason == "tool_calls"
    (call,) = finished.response.message.tool_calls
    assert call.id == started.id and finished.response.message.content == ""


def test_a_streamed_answer_shows_its_words_as_they_are_decoded() -> None:
    out = list(choice_events(iter(pieces(ANSWER))))
    text = [e.text for e in out if isinstance(e, TokenDelta)]
    assert len(text) > 3  # as it comes, not all at the end
    assert "".join(text) == 'It is "391".\nDone é'
    assert out[-1].response.message.content == 'It is "391".\nDone é'


def test_an_answer_cut_off_by_the_cap_keeps_its_words_and_a_cut_call_says_so() -> None:
    out = list(choice_events(iter(pieces(ANSWER[:56], finish="length"))))
    assert out[-1].response.message.content == 'It is "391".'
    out = list(choice_events(iter(pieces(CHOICE[:40], finish="length"))))
    assert out[-1].response.message.content == CUT_NOTE
    assert [e.text for e in out if isinstance(e, TokenDelta)] == [CUT_NOTE]  # not the JSON


def test_a_reply_that_is_no_choice_streams_as_it_came() -> None:
    text = '{"name": "calculator", "arguments": {"expression": "1"}}'
    out = list(choice_events(iter(pieces(text))))
    assert "".join(e.text for e in out if isinstance(e, TokenDelta)) == text
    assert out[-1].response.message.content == text


def small_agent(llm: LlmClient, runtime: Runtime, *, stream: bool = True) -> Agent:
    config = AgentConfig(small_model=True, stream=stream)
    return Agent(llm, "Use tools.", [calculator], config=config, runtime=runtime)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not streamed"])
def test_a_small_models_chosen_call_runs_and_its_answer_follows_in_words(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text(CHOICE), Text("17 times 23 is 391."))
    agent = small_agent(llm, runtime, stream=stream)
    events = list(agent.stream("What is 17 times 23?"))
    (requested,) = [e for e in events if isinstance(e, ToolCallRequested)]
    assert requested.call.name == "calculator" and requested.call.arguments == {
        "expression": "17 * 23"
    }
    shown = "".join(e.text for e in events if isinstance(e, TokenDelta))
    assert shown == ("17 times 23 is 391." if stream else "")
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.message.content == "17 times 23 is 391."
    first_turn = next(e for e in events if isinstance(e, AssistantTurn))
    assert not first_turn.recovered_tool_calls  # a native call, not text read back
    assert agent.history[1].tool_calls == (requested.call,)  # type: ignore[union-attr]
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


def test_a_small_models_chosen_answer_is_its_words(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text(ANSWER))
    events = list(small_agent(llm, runtime).stream("Hi"))
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == ('It is "391".\nDone é')
    assert events[-1].message.content == 'It is "391".\nDone é'  # type: ignore[union-attr]
    assert len(llm_server.requests) == 1
