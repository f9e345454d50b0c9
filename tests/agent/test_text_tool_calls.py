"""Tool calls written as text: each shape recovered, every near miss left as text.

The shapes are the ones Qwen2.5-Coder-0.5B writes under llama.cpp (bare
JSON, a ```json fence, ``<tool_call>`` tags the server did not parse). The
recovery is tested on its own, then in an agent against the scripted server,
streamed and not, and with ``AgentConfig(text_tool_calls=False)``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import Agent, AgentConfig, AgentRequest, LlmClient, Runtime, tool
from agent_smith.agent.events import AssistantTurn, FinalAnswer, ToolCallRequested
from agent_smith.agent.text_tool_calls import (
    ANSWER_NOTE,
    HOLD_LIMIT,
    WrittenCalls,
    could_be_written_call,
    hold_back_call_text,
    recover_tool_calls,
    starts_like_a_call,
)
from agent_smith.llm.events import Finished, ReasoningDelta, StreamEvent, TokenDelta
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


SEVENTEEN = [("calculator", {"expression": "17 * 23"})]


@pytest.mark.parametrize(
    "content",
    [
        CALL,
        f"  \n{PRETTY}\n",
        f"```json\n{PRETTY}\n```",
        f"```JSON\n{CALL}```",
        f"```\n{CALL}\n```",
        f"<tool_call>\n{CALL}\n</tool_call>",
        f"<tool_call>{PRETTY}</tool_call>\n",
    ],
    ids=["bare", "bare-pretty", "fence", "fence-upper", "fence-plain", "tags", "tags-pretty"],
)
def test_one_written_call_in_each_shape_is_recovered(content: str) -> None:
    assert recovered(content) == SEVENTEEN


@pytest.mark.parametrize(
    "content",
    [
        f"{CALL}\n{READ_CALL}",
        f"```json\n{CALL}\n```\n\n```json\n{READ_CALL}\n```",
        f"<tool_call>\n{CALL}\n</tool_call>\n<tool_call>\n{READ_CALL}\n</tool_call>",
        f"<tool_call>{CALL}</tool_call>\n```json\n{READ_CALL}\n```",
    ],
    ids=["bare", "fences", "tags", "mixed-units"],
)
def test_several_written_calls_are_recovered_in_order(content: str) -> None:
    assert recovered(content) == [*SEVENTEEN, ("read_local_file", {"path": "notes.txt"})]


def test_recovered_calls_get_distinct_generated_ids() -> None:
    response = recover_tool_calls(reply(f"{CALL}\n{CALL}"), TOOLS)
    assert response is not None
    ids = [call.id for call in response.message.tool_calls]
    assert len(set(ids)) == 2
    assert all(i.startswith("call_") and len(i) == 29 for i in ids)


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "weather", "arguments": {"city": "Paris"}}',  # not offered
        '{"name": "calculator", "arguments": "{\\"expression\\": \\"1\\"}"}',  # a string
        '{"name": "calculator", "arguments": ["1 + 1"]}',
        '{"name": "calculator"}',
        '{"name": "calculator", "parameters": {"expression": "1"}}',
        '{"name": "calculator", "arguments": {}, "id": "x"}',  # an extra key
        '{"name": ["calculator"], "arguments": {}}',
        f"Sure! {CALL}",  # prose before
        f"{CALL}\nThat gives the answer.",  # prose after
        f"Here is the call:\n```json\n{CALL}\n```",
        f"[{CALL}]",  # a JSON array
        f"{CALL}\n{{}}",  # one valid, one invalid object
        f"{CALL}\n" + '{"name": "weather", "arguments": {}}',
        f"<tool_call>\n{CALL}",  # tag not closed
        f"```json\n{CALL}",  # fence not closed
        f"<tool_call>{CALL}{READ_CALL}</tool_call>",  # two objects in one unit
        f"```python\n{CALL}\n```",
        '{"name": "calculator", "arguments": {"expression": "1"}',  # cut off
        "17 * 23 = 391",
        "",
    ],
    ids=[
        "unoffered-name",
        "string-arguments",
        "array-arguments",
        "no-arguments",
        "parameters-key",
        "extra-key",
        "non-string-name",
        "prose-before",
        "prose-after",
        "prose-before-fence",
        "json-array",
        "valid-and-empty",
        "valid-and-unoffered",
        "unclosed-tag",
        "unclosed-fence",
        "two-in-one-tag",
        "python-fence",
        "truncated",
        "prose",
        "empty",
    ],
)
def test_near_misses_stay_text(content: str) -> None:
    assert recovered(content) is None


def test_real_tool_calls_are_never_touched() -> None:
    native = (ToolCall("abc", "read_local_file", {"path": "x"}),)
    assert recover_tool_calls(reply(CALL, calls=native), TOOLS) is None


def test_nothing_is_recovered_without_tools_or_when_disabled() -> None:
    assert recover_tool_calls(reply(CALL), ()) is None
    response = reply(CALL)
    assert WrittenCalls(False, "hi").read(response, request_with()) is response


def test_a_written_call_after_tool_results_is_dropped_once_then_stays_text() -> None:
    written = WrittenCalls(True, "hi")
    after_tools = LlmRequest((UserMessage("hi"), ToolMessage("call_1", "calculator", "391")), TOOLS)
    response = reply(CALL)
    assert written.read(response, after_tools) is None  # the loop adds written.note
    assert written.note.content == ANSWER_NOTE.format("hi")
    assert written.read(response, after_tools) is response
    assert written.read(response, request_with()) is response  # no recovery after the note


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


def test_a_written_call_to_the_user_is_recovered_until_the_note() -> None:
    read = WrittenCalls(True, "hi").read(reply(CALL), request_with())
    assert read is not None and [call.name for call in read.message.tool_calls] == ["calculator"]


def test_absurd_nesting_is_text_not_a_crash() -> None:
    deep = '{"name": "calculator", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert recovered(deep) is None


def test_a_recovery_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_smith.agent.text_tool_calls"):
        recovered(f"{CALL}\n{READ_CALL}")
    assert "recovered 2 tool call(s) the model wrote as text: calculator, read_local_file" in (
        caplog.text
    )


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("", None),
        ("  \n", None),
        ("<tool", None),
        ("`", None),
        ("{", True),
        (" ```j", True),
        ("<tool_call>", True),
        ("<b>", False),
        ("The", False),
        ("[{", False),
    ],
)
def test_starts_like_a_call_decides_as_early_as_it_can(text: str, verdict: bool | None) -> None:
    assert starts_like_a_call(text) is verdict


NAMES = frozenset(schema.name for schema in TOOLS)
RECOVERABLE = [
    CALL,
    f"  \n{PRETTY}\n",
    f"```json\n{PRETTY}\n```",
    f"```JSON\n{CALL}```",
    f"```\n{CALL}\n```",
    f"<tool_call>\n{CALL}\n</tool_call>",
    f"{READ_CALL}\n{CALL}",
    '{"arguments": {"expression": "1"}, "name": "calculator"}',
]


@pytest.mark.parametrize("content", RECOVERABLE)
def test_every_prefix_of_a_recoverable_call_could_be_one(content: str) -> None:
    assert recovered(content)  # the shapes the recovery takes...
    for end in range(len(content) + 1):  # ...are never released early while they arrive
        assert could_be_written_call(content[:end], NAMES), content[:end]


@pytest.mark.parametrize(
    "text",
    [
        '{"city": "Paris"}',
        '{"na": 1',
        '{"name": "weather", "arguments": {}}',
        '{"name": "read_local_file", "country": "France"}',
        '{"name": "calculator"}',
        '{"name": "calculator" "arguments"',
        '{"name": "calc_x"',
        '{"name" 1',
        '{"name": 1',
        "{}",
        "```python\nprint(1)",
        "```js\n{",
        "<b>",
        "The answer is 391.",
        '[{"name": "calculator"}]',
    ],
)
def test_text_that_cannot_become_a_call_is_said_to_be_none(text: str) -> None:
    assert not could_be_written_call(text, NAMES)


# -- the stream filter ----------------------------------------------------------


def stream_of(*pieces: str | ReasoningDelta, calls: tuple[ToolCall, ...] = ()) -> list[Any]:
    text = "".join(p for p in pieces if isinstance(p, str))
    events: list[Any] = [TokenDelta(p) if isinstance(p, str) else p for p in pieces]
    response = reply(text, calls=calls)
    return [*events, Finished(response.finish_reason, response.usage, response)]


def request_with(tools: tuple[ToolSchema, ...] = TOOLS) -> LlmRequest:
    return LlmRequest((UserMessage("hi"),), tools)


def filtered(
    events: list[Any], tools: tuple[ToolSchema, ...] = TOOLS, *, after_tools: bool = False
) -> list[Any]:
    return list(hold_back_call_text(iter(events), request_with(tools), after_tools=after_tools))


def test_the_text_of_a_recovered_call_is_never_streamed() -> None:
    events = stream_of("```json\n", '{"name": "calculator", ', '"arguments": {}}', "\n```")
    out = filtered([*events[:-1], ReasoningDelta("hm"), events[-1]])
    assert out == [ReasoningDelta("hm"), events[-1]]


def test_call_shaped_text_that_is_no_call_is_released_before_finished() -> None:
    events = stream_of("{", '"answer": 42', "}")
    assert filtered(events) == events


def test_after_tool_results_call_shaped_text_is_dropped_and_prose_released() -> None:
    again = stream_of('{"name": "calculator", ', '"arguments": {"expression": "391"}}')
    assert filtered(again, after_tools=True) == again[-1:]  # the note follows it
    prose = stream_of("17 times 23", " is 391.")
    assert filtered(prose, after_tools=True) == prose


def test_prose_streams_at_once_after_its_first_characters() -> None:
    events = stream_of(" ", "<", "b>bold", " text", " more")
    source = iter(events)
    out = hold_back_call_text(source, request_with(), after_tools=False)
    assert next(out) == events[0] and next(out) == events[1] and next(out) == events[2]
    assert next(out) == events[3]  # nothing waits for the end of the stream
    assert list(out) == events[4:]


def test_json_that_stops_looking_like_a_call_is_released_at_once() -> None:
    events = stream_of("{", '"ci', 'ty": ', '"Paris"', "}")
    out = hold_back_call_text(iter(events), request_with(), after_tools=False)
    # "{" is held; '"ci' is no key of a call, so both come out before "ty" is read.
    assert next(out) == events[0]
    assert next(out) == events[1]
    assert next(out) == events[2]  # before the rest of the reply was even read
    assert list(out) == events[3:]


def test_a_call_to_an_unknown_tool_is_released_once_its_name_says_so() -> None:
    events = stream_of('{"name": "wea', 'ther", ', '"arguments": {}}')
    out = hold_back_call_text(iter(events), request_with(), after_tools=False)
    assert next(out) == events[0] and next(out) == events[1]
    assert list(out) == events[2:]


def test_held_text_is_released_once_it_passes_the_bound() -> None:
    long_call = '{"name": "calculator", "arguments": {"expression": "' + "1+" * HOLD_LIMIT + '1"}}'
    pieces = [long_call[i : i + 16] for i in range(0, len(long_call), 16)]
    events = stream_of(*pieces)
    out = hold_back_call_text(iter(events), request_with(), after_tools=False)
    first = [next(out) for _ in range(HOLD_LIMIT // 16 + 1)]
    assert first == events[: len(first)]  # released before the stream ended
    assert list(out) == events[len(first) :]
    # After tool results too: a reply that starts like a call streams past the bound.
    after = hold_back_call_text(iter(events), request_with(), after_tools=True)
    assert [next(after) for _ in range(HOLD_LIMIT // 16 + 1)] == first


def test_nothing_is_held_without_tools() -> None:
    events = stream_of(CALL)
    out = hold_back_call_text(iter(events), request_with(()), after_tools=False)
    assert next(out) == events[0]


def test_closing_the_filter_closes_the_stream() -> None:
    closed: list[bool] = []

    def source() -> Iterator[StreamEvent]:
        try:
            yield TokenDelta("The")
            yield TokenDelta(" rest")
        finally:
            closed.append(True)

    out = hold_back_call_text(source(), request_with(), after_tools=False)
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


def test_a_second_rewritten_call_in_a_turn_stays_text(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    again = '{"name": "calculator", "arguments": {"expression": "391"}}'
    llm_server.script(Text(CALL), Text(again), Text(again))
    agent = Agent(llm, "Use tools.", [calculator], runtime=runtime)
    final = agent.send("What is 17 times 23?")
    assert final.content == again
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
