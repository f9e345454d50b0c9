"""Each reply is bounded: a default max_tokens, and a stop for a reply that repeats itself."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from agent_smith import Agent, tool
from agent_smith.agent.config import AgentConfig
from agent_smith.agent.reply_bounds import (
    MIN_SPAN,
    RepetitionDetector,
    repeating_tail,
    reply_sampling,
)
from agent_smith.agent.text_tool_calls import ANSWER_NOTE, CUT_OFF_NOTE
from agent_smith.errors import AgentStopped, ConfigError
from agent_smith.llm.client import LlmClient
from agent_smith.llm.events import TokenDelta
from agent_smith.llm.request import SamplingParams
from agent_smith.messages import AssistantMessage, ToolMessage, UserMessage
from agent_smith.runtime import Runtime
from tests.support.llm_server import Calls, Chunks, ScriptedLlmServer, Text

PROSE = (
    "The calculator tool adds, subtracts, multiplies and divides. It reads the whole "
    "expression first, then applies the usual precedence: powers, then products, then "
    "sums. Brackets group terms. A division by zero is an error the model sees, so it "
    "can say so instead of guessing a number. Large results keep every digit."
)


def content_frame(text: str, key: str = "content") -> str:
    chunk = {"choices": [{"index": 0, "delta": {key: text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n"


def endless(*frames: str) -> tuple[Chunks, threading.Event]:
    """A streamed reply of ``frames`` that then waits on a gate nobody sets (for ever)."""
    never = threading.Event()
    return Chunks(*frames, never, "data: [DONE]\n\n"), never


@tool
def calculator(expression: str) -> str:
    """Evaluate arithmetic."""
    return "391"


# -- the default cap -------------------------------------------------------------


def test_the_cap_is_sent_only_when_nobody_chose_one() -> None:
    assert reply_sampling(None, 1024, None).max_tokens == 1024
    assert reply_sampling(SamplingParams(max_tokens=50), 1024, None).max_tokens == 50
    assert reply_sampling(None, 1024, SamplingParams(max_tokens=256)).max_tokens is None
    assert reply_sampling(None, None, None).max_tokens is None
    for key in ("max_completion_tokens", "n_predict", "max_tokens"):
        chosen = SamplingParams(extra={key: 99})
        assert reply_sampling(chosen, 1024, None) is chosen
        assert reply_sampling(None, 1024, chosen).max_tokens is None


def test_config_refuses_a_cap_or_window_that_is_not_positive() -> None:
    with pytest.raises(ConfigError, match="max_reply_tokens"):
        AgentConfig(max_reply_tokens=0)
    with pytest.raises(ConfigError, match="context_window"):
        AgentConfig(context_window=-5)


def test_agent_sends_the_default_cap(llm_server: ScriptedLlmServer, llm: LlmClient) -> None:
    Agent(llm).send("hi")
    Agent(llm, config=AgentConfig(max_reply_tokens=77)).send("hi")
    Agent(llm, config=AgentConfig(max_reply_tokens=None)).send("hi")
    sent = [body.get("max_tokens") for body in llm_server.requests]
    assert sent == [1024, 77, None]


def test_client_default_cap_wins_over_the_agent_default(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    client = LlmClient(
        llm_server.url, runtime=runtime, default_sampling=SamplingParams(max_tokens=256)
    )
    Agent(client).send("hi")
    assert llm_server.requests[-1]["max_tokens"] == 256


def test_a_reply_cut_by_the_cap_is_logged(
    llm_server: ScriptedLlmServer, llm: LlmClient, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script(Text("Hello from", finish_reason="length"))
    with caplog.at_level(logging.WARNING, "agent_smith"):
        reply = Agent(llm).send("hi")
    assert reply.content == "Hello from" + CUT_OFF_NOTE  # the user is told too
    assert "cut off by its token cap (max_tokens=1024)" in caplog.text
    assert "max_reply_tokens" in caplog.text


# -- repetition ------------------------------------------------------------------


def test_prose_is_not_repetition() -> None:
    detector = RepetitionDetector()
    for word in (PROSE + " " + PROSE.upper()).split(" "):
        assert detector.feed(word + " ") is None


def test_a_short_repeated_run_is_not_repetition() -> None:
    assert repeating_tail(PROSE + "ha" * ((MIN_SPAN - 2) // 2)) is None
    assert repeating_tail(PROSE + "-" * (MIN_SPAN - 1)) is None


@pytest.mark.parametrize("unit", ["\n", "391. ", "The answer is 391.\n", PROSE[:250]])
def test_a_repeating_tail_is_found_with_its_period(unit: str) -> None:
    text = PROSE + unit * (3 + 2 * MIN_SPAN // len(unit))
    found = repeating_tail(text)
    assert found is not None
    period, span = found
    assert period == len(unit)
    assert span >= len(text) - len(PROSE) - period  # the whole repeating run


def test_detector_keeps_the_reply_up_to_the_first_copy() -> None:
    detector = RepetitionDetector()
    found = None
    pieces = ["Sure. ", *["The answer is 391. "] * 40]
    for piece in pieces:
        found = detector.feed(piece)
        if found is not None:
            break
    assert found is not None
    assert detector.kept(*found) == "Sure. The answer is 391."


@pytest.mark.parametrize("piece_size", [1, 3, 7, 32])
def test_a_repeated_line_is_kept_whole_without_the_next_copys_first_word(
    piece_size: int,
) -> None:
    # Measured on the 0.5B model: after a tool result it writes the call again, line by line.
    line = '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    text = line * 10
    detector = RepetitionDetector()
    found = None
    for start in range(0, len(text), piece_size):
        found = detector.feed(text[start : start + piece_size])
        if found is not None:
            break
    assert found is not None
    assert detector.kept(*found) == line.strip()


def test_a_repeating_reply_is_cut_off_and_the_turn_says_why(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    # The server would go on for ever: after 200 repeats it waits on a gate nobody sets.
    repeats = [content_frame("I will check. ")] * 200
    reply, never = endless(content_frame("Let me think. "), *repeats)
    llm_server.script(reply)
    agent = Agent(llm)
    seen: list[str] = []
    with pytest.raises(AgentStopped) as stopped:
        for event in agent.stream("What is 17 * 23?"):
            if isinstance(event, TokenDelta):
                seen.append(event.text)
    assert stopped.value.condition == "repetition"
    assert "repeating a 14-character passage" in str(stopped.value)
    assert len(seen) < 60  # stopped within a few hundred characters, not after 200 repeats
    assert agent.history == [
        UserMessage("What is 17 * 23?"),
        AssistantMessage("Let me think. I will check."),
    ]
    # The session goes on: the next question gets its answer.
    assert agent.send("And 2 + 2?").content == "Hello from the scripted server."
    assert not never.is_set()


def test_the_repetition_guard_can_be_turned_off(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Text("again " * 100))
    agent = Agent(llm, config=AgentConfig(repetition_guard=False))
    assert agent.send("hi").content == "again " * 100


def test_a_call_written_again_and_again_after_a_result_gets_the_answer_note(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    # Measured on the 0.5B model: after a tool result it writes the call again, and again.
    again = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}\n'
    reply, never = endless(*[content_frame(again)] * 100)
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), reply, Text("It is 391."))
    agent = Agent(llm, tools=[calculator])
    assert agent.send("What is 17 * 23?").content == "It is 391."
    history = agent.history
    assert isinstance(history[2], ToolMessage)
    assert history[3] == UserMessage(ANSWER_NOTE.format("What is 17 * 23?"))
    assert not any(again.strip() in m.content for m in history)  # the loop left no trace
    assert not never.is_set()


def test_a_call_written_again_token_by_token_is_held_back_and_gets_the_answer_note(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    # Seen on the 0.5B model behind the Flask example: the same call, line after line,
    # in pieces of a few characters.
    line = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}\n'
    text = line * 40
    reply, never = endless(*(content_frame(text[i : i + 3]) for i in range(0, len(text), 3)))
    llm_server.script(Calls(("calculator", {"expression": "17 * 23"})), reply, Text("It is 391."))
    agent = Agent(llm, tools=[calculator])
    shown = "".join(e.text for e in agent.stream("What is 17 * 23?") if isinstance(e, TokenDelta))
    assert shown == "It is 391."  # the written calls never reached the user
    assert agent.history[3] == UserMessage(ANSWER_NOTE.format("What is 17 * 23?"))
    assert not never.is_set()


def test_reasoning_that_repeats_itself_stops_the_turn(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    frames = [content_frame("Wait, ", "reasoning_content")]
    frames += [content_frame("let me recount the letters. ", "reasoning_content")] * 100
    reply, never = endless(*frames)
    llm_server.script(reply)
    agent = Agent(llm)
    with pytest.raises(AgentStopped, match="the reasoning kept repeating") as stopped:
        agent.send("How many r in strawberry?")
    assert stopped.value.condition == "repetition"
    assert agent.history == [UserMessage("How many r in strawberry?")]  # nothing was said
    assert not never.is_set()
