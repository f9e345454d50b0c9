"""The REPL's working line: what the model does, elapsed time, tokens so far, tokens/s."""

from __future__ import annotations

from agent_smith import AssistantMessage, LlmResponse, TokenDelta, TokenUsage, ToolCall
from agent_smith.agent.events import TextHeld, ToolCallRequested
from agent_smith.cli.activity import Activity
from agent_smith.llm.events import Finished, ReasoningDelta


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _finished(completion: int) -> Finished:
    response = LlmResponse(AssistantMessage("x"), "stop")
    return Finished("stop", TokenUsage(completion=completion), response)


def test_before_any_token_it_says_the_model_reads_the_prompt_and_how_long() -> None:
    clock = Clock()
    activity = Activity(clock=clock)
    clock.now += 7.4
    assert activity.line() == "reading the prompt… 7 s (Ctrl-C cancels)"


def test_it_counts_streamed_tokens_and_their_rate() -> None:
    clock = Clock()
    activity = Activity(clock=clock)
    clock.now += 3.0  # reading the prompt: not part of the rate
    for _ in range(20):
        activity.see(TokenDelta("a"))
        clock.now += 0.1
    assert activity.tokens == 20
    assert activity.line() == "answering… 5 s, 20 tokens, 10.0 tokens/s (Ctrl-C cancels)"


def test_a_finished_reply_counts_the_servers_tokens_also_those_held_back() -> None:
    clock = Clock()
    activity = Activity(clock=clock)
    activity.see(TokenDelta("{"))
    clock.now += 2.0
    activity.see(_finished(30))  # 29 more were a tool call written as text, never shown
    assert activity.tokens == 30
    assert activity.rate() == 15.0
    activity.see(TokenDelta("It"))
    assert activity.tokens == 31


def test_text_held_back_as_a_call_counts_and_says_a_call_is_being_written() -> None:
    clock = Clock()
    activity = Activity(clock=clock)
    lines = []
    for _ in range(5):  # nothing shown, yet the line moves with every piece
        activity.see(TextHeld(3))
        clock.now += 1.0
        lines.append(activity.line())
    assert activity.tokens == 5
    assert len(set(lines)) == 5
    assert lines[-1] == "writing a tool call… 5 s, 5 tokens, 1.0 tokens/s (Ctrl-C cancels)"


def test_it_names_what_the_model_does_next() -> None:
    activity = Activity(clock=Clock())
    activity.see(ReasoningDelta("hmm"))
    assert activity.line().startswith("thinking… ")
    activity.see(ToolCallRequested(ToolCall("c1", "calculator", {"expression": "1+1"})))
    assert activity.line().startswith("calling calculator… ")
    activity.see(TokenDelta("2"))
    assert activity.line().startswith("answering… ")
