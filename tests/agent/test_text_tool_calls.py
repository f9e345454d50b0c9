"""Tool calls written as text: recovered, never shown, and answered from their results.

The shapes are the ones Qwen2.5-Coder-0.5B writes under llama.cpp (bare
JSON, a ```json fence, ``<tool_call>`` tags the server did not parse; which
text is a call is tested in test_call_text.py). The policy is tested on its
own, then in an agent against the scripted server, streamed and not, and
with ``AgentConfig(text_tool_calls=False)``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from agent_smith import Agent, AgentConfig, AgentRequest, LlmClient, Runtime, tool
from agent_smith.agent.events import AssistantTurn, FinalAnswer, TextHeld, ToolCallRequested
from agent_smith.agent.reply_bounds import REPETITION
from agent_smith.agent.text_tool_calls import (
    ANSWER_NOTE,
    CUT_NOTE,
    FAILED_NOTE,
    RESULT_CHARS,
    WrittenCalls,
    recover_tool_calls,
    results_answer,
    visible_events,
)
from agent_smith.llm.events import Finished, TokenDelta
from agent_smith.llm.request import LlmRequest, LlmResponse
from agent_smith.messages import AssistantMessage, TokenUsage, ToolCall, ToolMessage, UserMessage
from agent_smith.tools.base import ToolSchema
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

CALC = ToolSchema("calculator", "Evaluate arithmetic.", {"type": "object", "properties": {}})
READ = ToolSchema("read_local_file", "Read a file.", {"type": "object", "properties": {}})
TOOLS = (CALC, READ)
CALL = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}'
PRETTY = '{\n  "name": "calculator",\n  "arguments": {\n    "expression": "17 * 23"\n  }\n}'
READ_CALL = '{"name": "read_local_file", "arguments": {"path": "notes.txt"}}'
SEVENTEEN = [("calculator", {"expression": "17 * 23"})]
RESULT = ToolMessage("call_1", "calculator", "391")


def reply(content: str, *, calls: tuple[ToolCall, ...] = (), finish: str = "stop") -> LlmResponse:
    return LlmResponse(AssistantMessage(content, calls, usage=TokenUsage(9, 4, 13)), finish)


def recovered(content: str, tools: tuple[ToolSchema, ...] = TOOLS) -> list[tuple[str, Any]] | None:
    """The (name, arguments) pairs recovered from ``content``, or None."""
    response = recover_tool_calls(reply(content), tools)
    if response is None:
        return None
    assert response.message.content == ""
    assert response.finish_reason == "tool_calls"
    assert response.message.usage == TokenUsage(9, 4, 13)
    return [(call.name, call.arguments) for call in response.message.tool_calls]


def request_with(tools: tuple[ToolSchema, ...] = TOOLS) -> LlmRequest:
    return LlmRequest((UserMessage("hi"),), tools)


AFTER_TOOLS = LlmRequest((UserMessage("hi"), RESULT), TOOLS)


@pytest.mark.parametrize(
    "content",
    [
        CALL,
        f"  \n{PRETTY}\n",
        f"```json\n{PRETTY}\n```",
        f"```\n{CALL}\n```",
        f"<tool_call>\n{CALL}\n</tool_call>",
        f"{CALL}\n{CALL}\n{CALL}",  # repeated: one call
        f"{CALL}\nThat gives 391.",  # the result it imagines: dropped with the call
        f"Let me compute it.\n{CALL}",
    ],
    ids=["bare", "bare-pretty", "fence", "fence-plain", "tags", "repeated", "after", "before"],
)
def test_a_written_call_is_recovered_in_each_shape(content: str) -> None:
    assert recovered(content) == SEVENTEEN


def test_several_written_calls_are_recovered_in_order_with_distinct_ids() -> None:
    response = recover_tool_calls(reply(f"{CALL}\n{READ_CALL}"), TOOLS)
    assert response is not None
    calls = response.message.tool_calls
    assert [c.name for c in calls] == ["calculator", "read_local_file"]
    assert len({c.id for c in calls}) == 2
    assert all(c.id.startswith("call_") and len(c.id) == 29 for c in calls)


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "calculator", "arguments": "{\\"expression\\": \\"1\\"}"}',
        '{"name": "calculator", "arguments": ["1 + 1"]}',
        '{"name": "calculator"}',
        '{"name": "calculator", "arguments": {}, "id": "x"}',
        f"Sure! {CALL}",  # mid-line
        f"[{CALL}]",
        CALL[:-1],  # cut off
        "17 * 23 = 391",
        "",
    ],
)
def test_near_misses_are_not_run(content: str) -> None:
    assert recovered(content) is None


def test_real_tool_calls_are_never_touched() -> None:
    native = (ToolCall("abc", "read_local_file", {"path": "x"}),)
    assert recover_tool_calls(reply(CALL, calls=native), TOOLS) is None
    response = reply(CALL, calls=native)
    assert WrittenCalls(True, "hi").read(response, request_with()) is response


def test_nothing_is_recovered_without_tools_or_when_disabled() -> None:
    assert recover_tool_calls(reply(CALL), ()) is None
    response = reply(CALL)
    assert WrittenCalls(False, "hi").read(response, request_with()) is response


def test_a_reply_that_is_only_a_cut_off_call_says_so_in_one_line() -> None:
    read = WrittenCalls(True, "hi").read(reply(CALL[:30], finish="length"), request_with())
    assert read is not None and read.message.content == CUT_NOTE


def test_a_written_call_after_tool_results_gets_the_note_once_then_the_results() -> None:
    written = WrittenCalls(True, "hi")
    response = reply(CALL)
    assert written.read(response, AFTER_TOOLS) is None  # the loop adds written.note
    assert written.note.content == ANSWER_NOTE.format("hi")
    noted = LlmRequest((*AFTER_TOOLS.messages, written.note), TOOLS)
    answer = written.read(response, noted)
    assert answer is not None and answer.message.content == "391"
    assert answer.finish_reason == "stop"


@pytest.mark.parametrize(
    "response",
    [reply(CALL), reply(CALL[:25], finish="length"), reply("It is", finish=REPETITION), reply("")],
    ids=["call", "cut", "repetition", "empty"],
)
def test_a_small_models_turn_answers_a_failed_reply_to_results_from_the_results(
    response: LlmResponse,
) -> None:
    read = WrittenCalls(True, "hi", small=True).read(response, AFTER_TOOLS)
    assert read is not None and read.message.content == "391"


def test_after_tool_results_words_before_a_written_call_are_the_answer() -> None:
    read = WrittenCalls(True, "hi").read(reply(f"It is 391.\n{CALL}"), AFTER_TOOLS)
    assert read is not None and read.message.content == "It is 391."
    assert read.message.tool_calls == ()


def test_an_answer_from_results_names_each_result_and_cuts_long_ones() -> None:
    long = ToolMessage("c2", "read_file", "x" * (RESULT_CHARS + 50))
    text = results_answer((UserMessage("hi"), RESULT, long, UserMessage("note")))
    first, second = text.split("\n")
    assert first == "calculator: 391"
    assert second == "read_file: " + "x" * RESULT_CHARS + "…"


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("What is 17 times 23?", "What is 17 times 23?"),
        ("Which port?\n\nRead config.ini with read_local_file.", "Which port?"),
        ("  Two\nlines  ", "Two lines"),
        ("", "my question above"),  # a resumed turn has no new message
        ("x" * 600, "x" * 499 + "…"),
    ],
)
def test_the_answer_note_quotes_the_first_paragraph_of_the_question(
    question: str, quoted: str
) -> None:
    assert WrittenCalls(True, question).note.content == ANSWER_NOTE.format(quoted)


def test_a_recovery_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_smith.agent.text_tool_calls"):
        recovered(f"{CALL}\n{READ_CALL}")
    assert "recovered 2 tool call(s) the model wrote as text: calculator, read_local_file" in (
        caplog.text
    )


# -- the stream ------------------------------------------------------------------


def stream_of(*pieces: str) -> list[Any]:
    response = reply("".join(pieces))
    return [*(TokenDelta(p) for p in pieces), Finished("stop", response.usage, response)]


def test_held_text_becomes_text_held_events_and_prose_streams() -> None:
    events = stream_of("Sure.\n", '{"name": ', '"calculator", "arguments": {}}', "\nDone")
    out = list(visible_events(iter(events)))
    assert out == [TokenDelta("Sure.\n"), TextHeld(9), TextHeld(30), TokenDelta("Done"), events[-1]]


def test_a_cut_call_is_never_released_at_the_end() -> None:
    out = list(visible_events(iter(stream_of('{"name": "calculator", "argu'))))
    assert [type(e) for e in out] == [TextHeld, Finished]


def test_closing_the_filter_closes_the_source() -> None:
    closed = []

    def source() -> Any:
        try:
            yield TokenDelta("The")
            yield TokenDelta(" rest")
        finally:
            closed.append(True)

    out = visible_events(source())
    assert next(out) == TokenDelta("The")
    out.close()
    assert closed == [True]


# -- in an agent ---------------------------------------------------------------


@tool
def calculator(expression: str) -> str:
    """Evaluate arithmetic."""
    return {"17 * 23": "391"}.get(expression, "?")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "complete"])
def test_an_agent_runs_a_call_the_model_wrote_as_text(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text(f"```json\n{PRETTY}\n```"), Text("17 times 23 is 391."))
    agent = Agent(llm, "Use tools.", [calculator], runtime=runtime)

    events = list(agent.stream(AgentRequest("What is 17 times 23?", stream=stream)))

    turns = [e for e in events if isinstance(e, AssistantTurn)]
    assert [t.recovered_tool_calls for t in turns] == [True, False]
    (requested,) = [e.call for e in events if isinstance(e, ToolCallRequested)]
    assert requested.name == "calculator" and requested.arguments == {"expression": "17 * 23"}
    streamed = "".join(e.text for e in events if isinstance(e, TokenDelta))
    assert streamed == ("17 times 23 is 391." if stream else "")  # never the call's JSON
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.message.content == "17 times 23 is 391."
    assistant, result = agent.history[1], agent.history[2]
    assert assistant.content == "" and assistant.tool_calls == (requested,)  # type: ignore[union-attr]
    assert result.content == "391" and result.tool_call_id == requested.id  # type: ignore[union-attr]
    # What the server got back: a real tool call, with the id we generated.
    sent = llm_server.requests[1]["messages"][2]
    assert sent["tool_calls"][0]["id"] == requested.id
    assert json.loads(sent["tool_calls"][0]["function"]["arguments"]) == requested.arguments


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "complete"])
def test_text_tool_calls_false_leaves_the_json_as_the_answer(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text(CALL))
    config = AgentConfig(text_tool_calls=False, stream=stream)
    agent = Agent(llm, "Use tools.", [calculator], config=config, runtime=runtime)
    events = list(agent.stream("What is 17 times 23?"))
    assert not [e for e in events if isinstance(e, ToolCallRequested)]
    assert events[-1].message.content == CALL  # type: ignore[union-attr]
    assert [e.recovered_tool_calls for e in events if isinstance(e, AssistantTurn)] == [False]
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == CALL


def test_native_calls_still_run_and_are_not_flagged(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), Text("391."))
    agent = Agent(llm, "Use tools.", [calculator], runtime=runtime)
    events = list(agent.stream("What is 17 times 23?"))
    assert [e.recovered_tool_calls for e in events if isinstance(e, AssistantTurn)] == [
        False,
        False,
    ]
    assert events[-1].message.content == "391."  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "complete"])
def test_a_call_written_again_after_tool_results_gets_the_answer_note_once(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    """What a small model writes after a tool result rehashes the call: not run, but steered."""
    again = '{"name": "calculator", "arguments": {"expression": "391"}}'
    llm_server.script(Text(CALL), Text(again, usage=(20, 9)), Text("17 times 23 is 391."))
    agent = Agent(
        llm, "Use tools.", [calculator], config=AgentConfig(stream=stream), runtime=runtime
    )
    events = list(agent.stream("What is 17 times 23?"))

    assert len([e for e in events if isinstance(e, ToolCallRequested)]) == 1
    flags = [e.recovered_tool_calls for e in events if isinstance(e, AssistantTurn)]
    assert flags == [True, False]  # the rewritten call never became a turn
    assert events[-1].message.content == "17 times 23 is 391."  # type: ignore[union-attr]
    if stream:  # the dropped reply's JSON was never streamed
        assert (
            "".join(e.text for e in events if isinstance(e, TokenDelta))
            == events[-1].message.content
        )  # type: ignore[union-attr]
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "user", "assistant"]
    note = ANSWER_NOTE.format("What is 17 times 23?")  # the user's question, quoted
    assert agent.history[3].content == note  # type: ignore[union-attr]
    assert llm_server.requests[2]["messages"][-1] == {"role": "user", "content": note}
    assert agent.usage.prompt == 10 + 20 + 10  # the dropped reply's usage counts


def test_a_second_rewritten_call_in_a_turn_is_answered_from_the_tool_result(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    again = '{"name": "calculator", "arguments": {"expression": "391"}}'
    llm_server.script(Text(CALL), Text(again), Text(again))
    agent = Agent(llm, "Use tools.", [calculator], runtime=runtime)
    events = list(agent.stream("What is 17 times 23?"))
    assert events[-1].message.content == "391"  # type: ignore[union-attr]
    assert not [e for e in events if isinstance(e, TokenDelta)]  # no call text, ever
    assert sum(isinstance(e, TextHeld) for e in events) >= 3
    assert len(llm_server.requests) == 3
    assert [m.role for m in agent.history].count("user") == 2  # the question and one note


def test_without_text_tool_calls_no_note_is_given(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), Text(CALL))
    config = AgentConfig(text_tool_calls=False)
    agent = Agent(llm, "Use tools.", [calculator], config=config, runtime=runtime)
    assert agent.send("What is 17 times 23?").content == CALL
    assert len(llm_server.requests) == 2


def test_a_small_models_reply_ends_once_its_first_written_call_is_whole() -> None:
    closed = []

    def source() -> Any:
        try:
            yield TokenDelta(CALL[:20])
            yield TokenDelta(CALL[20:] + "\n")
            yield TokenDelta(CALL)  # the copies a small model goes on with: never asked for
            raise AssertionError("read past the first call")
        finally:
            closed.append(True)

    out = list(visible_events(source(), first_call_only=True))
    assert [type(e) for e in out] == [TextHeld, TextHeld, Finished]
    assert out[-1].response.message.content == CALL + "\n"
    assert closed == [True]


def test_a_small_model_in_an_agent_runs_the_first_written_call_once(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text(f"{CALL}\n{READ_CALL}\nline of text"), Text("It is 391."))
    config = AgentConfig(small_model=True)
    agent = Agent(llm, "Use tools.", [calculator], config=config, runtime=runtime)
    events = list(agent.stream("What is 17 times 23?"))
    assert [e.call.name for e in events if isinstance(e, ToolCallRequested)] == ["calculator"]
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == "It is 391."
    assert events[-1].message.content == "It is 391."  # type: ignore[union-attr]


def test_an_answer_from_results_leaves_failed_calls_out_and_names_them_if_all_failed() -> None:
    failed = ToolMessage("c2", "Added", '{"error": true, "message": "unknown tool"}', is_error=True)
    assert results_answer((UserMessage("hi"), RESULT, failed)) == "391"
    assert results_answer((UserMessage("hi"), failed)) == FAILED_NOTE.format("Added")
