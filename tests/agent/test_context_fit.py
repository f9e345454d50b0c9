"""A tool result never breaks a session: results cut to the window, overflows trimmed, retried.

The agents here run without compaction (on by default, it summarises before
trimming is needed: tests/agent/test_compaction.py) to pin the trimming itself.
"""

from __future__ import annotations

import json

import pytest

from agent_smith import Agent, AgentConfig, ContextOverflowError, LlmClient, tool
from agent_smith.agent.context_fit import (
    CUT_FLOOR,
    MIN_RESULT_CHARS,
    ContextFit,
    _shares,
)
from agent_smith.agent.events import ToolResultReady
from agent_smith.llm.request import LlmRequest, SamplingParams
from agent_smith.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_smith.tools.base import ToolSchema
from tests.llm.test_context_window import LLAMA_OVERFLOW
from tests.support.llm_server import Calls, Raw, ScriptedLlmServer, Text

UNCOMPACTED = AgentConfig(compaction=None)
BIG = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(800))


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return BIG


def overflow(prompt: int, window: int) -> Raw:
    body = json.loads(json.dumps(LLAMA_OVERFLOW))
    body["error"].update(n_prompt_tokens=prompt, n_ctx=window)
    return Raw(400, json.dumps(body))


def sent_chars(body: dict[str, object]) -> int:
    return len(json.dumps(body["messages"]))


def tool_contents(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m["role"] == "tool"]


# -- the pieces ----------------------------------------------------------------


def test_small_results_are_whole_and_big_ones_share_the_rest() -> None:
    limits = _shares([100, 5000, 9000], 4100)
    assert limits[0] >= 100  # the small one is kept whole
    assert limits[1] == limits[2] == 2000  # the big ones split what is left
    assert _shares([9000], -50) == [MIN_RESULT_CHARS]  # never less than the floor


def test_results_are_cut_only_when_big_and_a_window_is_known() -> None:
    sent = [UserMessage("read it")]
    result = ToolMessage("c1", "read_file", BIG)
    small = ToolMessage("c1", "read_file", "x" * (CUT_FLOOR - 1))
    unknown = ContextFit(None, object())  # no window anywhere: nothing is cut
    assert unknown.cut_results([result], sent, ()) == [result]
    fit = ContextFit(1000, object())
    assert fit.cut_results([small], sent, ()) == [small]
    (cut,) = fit.cut_results([result], sent, ())
    assert cut.tool_call_id == "c1" and cut.name == "read_file"
    assert cut.content.startswith(BIG[:1000])
    assert len(cut.content) < 1000 * 4
    assert f"of {len(BIG)} characters" in cut.content
    assert "call the tool again for a smaller part" in cut.content


def test_an_overflow_trims_tool_results_then_the_oldest_messages() -> None:
    call = ToolCall("c1", "read_file", {"path": "README.md"})
    history = (
        SystemMessage("You help."),
        UserMessage("old question " * 400),
        AssistantMessage("old answer " * 400),
        UserMessage("Read README.md"),
        AssistantMessage("", (call,)),
        ToolMessage("c1", "read_file", BIG),
    )
    request = LlmRequest(history, sampling=SamplingParams(max_tokens=100))
    error = ContextOverflowError(
        "too long", http_status=400, prompt_tokens=12000, context_window=1000
    )
    smaller = ContextFit(None, object()).after_overflow(request, error)
    assert smaller is not None
    kept = smaller.messages
    assert kept[0] == history[0]  # the system prompt stays
    assert kept[-2:-1] == history[-2:-1]  # so does the newest group, its result cut
    assert isinstance(kept[-1], ToolMessage) and len(kept[-1].content) < len(BIG) // 4
    assert history[1] not in kept  # the oldest went
    # Nothing left to trim: no second try.
    tiny = LlmRequest((UserMessage("hi"),))
    assert ContextFit(None, object()).after_overflow(tiny, error) is None


# -- in an agent ---------------------------------------------------------------


def test_a_big_result_is_cut_to_the_configured_window(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    agent = Agent(llm, tools=[read_file], config=AgentConfig(context_window=2048, compaction=None))
    events = list(agent.stream("What is the first line of README.md?"))
    (ready,) = [e for e in events if isinstance(e, ToolResultReady)]
    result = agent.history[2]
    assert isinstance(result, ToolMessage) and result == ready.message
    assert len(result.content) < 2048 * 4 and "cut to fit" in result.content
    assert tool_contents(llm_server.requests[-1]) == [result.content]
    assert llm_server.props_asked == 0  # configured: the server is not asked


def test_the_window_is_asked_of_llama_server_when_a_result_is_big(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.props = {"default_generation_settings": {"n_ctx": 1024}}
    agent = Agent(llm, tools=[read_file], config=UNCOMPACTED)
    agent.send("What is the first line of README.md?")
    agent.send("And the second?")
    assert llm_server.props_asked == 1
    result = agent.history[2]
    assert isinstance(result, ToolMessage) and "cut to fit" in result.content
    assert len(result.content) < 1024 * 4


def test_an_overflow_is_trimmed_and_retried_once_and_later_turns_fit_at_once(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    agent = Agent(
        llm, tools=[read_file], config=UNCOMPACTED
    )  # no window known: the result goes in whole
    agent.send("Read README.md")
    assert agent.history[2].content == BIG
    before = len(llm_server.requests)
    llm_server.script(overflow(prompt=11000, window=2048), Text("It starts with line 0."))
    reply = agent.send("What is its first line?")
    assert reply.content == "It starts with line 0."
    refused, retried = llm_server.requests[before:]
    assert sent_chars(retried) < sent_chars(refused) // 3
    assert agent.history[2].content == BIG  # the history is never rewritten
    assert agent.history[-1] == AssistantMessage("It starts with line 0.", usage=reply.usage)
    # The window is known now: the next turn is trimmed before it is sent, no refusal first.
    before = len(llm_server.requests)
    agent.send("Thanks!")
    messages = llm_server.requests[before]["messages"]
    assert messages[-1] == {"role": "user", "content": "Thanks!"}
    assert sum(len(m.get("content") or "") for m in messages) < 2048 * 4


def test_a_second_overflow_is_raised_and_the_history_stays_whole(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    agent = Agent(llm, config=UNCOMPACTED)
    agent.send("old " * 300)
    before = len(llm_server.requests)
    llm_server.script(overflow(prompt=900, window=64), overflow(prompt=300, window=64))
    with pytest.raises(ContextOverflowError) as raised:
        agent.send("word " * 300)
    assert raised.value.context_window == 64
    assert len(llm_server.requests) == before + 2  # the request, and one trimmed retry
    assert agent.history[1:] == [
        AssistantMessage("Hello from the scripted server.", usage=agent.history[1].usage),
        UserMessage("word " * 300),
    ]
    assert agent.send("hi").content == "Hello from the scripted server."


def test_the_newest_message_alone_too_long_is_not_retried(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    agent = Agent(llm, config=AgentConfig(stream=False, compaction=None))
    llm_server.script(Raw(400, json.dumps({"error": {"message": "context length exceeded"}})))
    with pytest.raises(ContextOverflowError):
        agent.send("short")
    assert len(llm_server.requests) == 1  # nothing could be trimmed: no pointless retry


def test_results_of_a_call_round_reach_the_model_cut(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Calls(("read_file", {"path": "a"}), ("read_file", {"path": "b"})))
    agent = Agent(llm, tools=[read_file], config=AgentConfig(context_window=4096, compaction=None))
    agent.send("Compare a and b.")
    first, second = tool_contents(llm_server.requests[-1])
    assert first.endswith("if it takes one.]") and second.endswith("if it takes one.]")
    assert len(first) + len(second) < 4096 * 4


def test_a_window_the_server_named_wins_when_smaller_than_the_configured_one(
    llm_server: ScriptedLlmServer, llm: LlmClient
) -> None:
    llm_server.script(Raw(400, json.dumps(LLAMA_OVERFLOW)))  # n_ctx 256
    with pytest.raises(ContextOverflowError):
        list(llm.stream(LlmRequest((UserMessage("hi"),))))
    assert ContextFit(8192, llm).window(ask=True) == 256
    assert ContextFit(128, llm).window(ask=True) == 128
    assert llm_server.props_asked == 0


def test_the_offered_tools_take_their_share_of_the_window() -> None:
    sent = [UserMessage("read it")]
    result = ToolMessage("c1", "read_file", BIG)
    params = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(40)}}
    tools = [ToolSchema(f"tool_{n}", "A tool with many parameters.", params) for n in range(3)]
    fit = ContextFit(4096, object())
    (alone,) = fit.cut_results([result], sent, ())
    (beside,) = fit.cut_results([result], sent, (), tools=tools)
    assert len(beside.content) < len(alone.content) - 2000  # ~3 x 1,000 characters of schema


def test_a_server_count_above_the_estimate_trims_the_next_request_of_the_turn(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    @tool
    def look() -> str:
        """Look."""
        return "seen"

    config = AgentConfig(
        compaction=None, context_window=1000
    )  # ~600 tokens of request, by estimate
    history = [UserMessage(f"question {n}: " + "w" * 200) for n in range(6)]  # ~330 estimated
    agent = Agent(llm, tools=[look], config=config)
    for message in history:
        agent.memory.append(message)
    # the server counts the first request at twice the estimate: the next one must shrink
    llm_server.script(Calls(("look", {}), usage=(1400, 5)), Text("done"))
    assert agent.send("go").content == "done"
    first, second = (body["messages"] for body in llm_server.requests)
    assert len(first) == len(history) + 1  # fitted by the estimate: sent whole
    # by the estimate the call and its result fit too; by the server's count the oldest go
    assert len(second) < len(first) + 2
    assert [m["role"] for m in second[-3:]] == ["user", "assistant", "tool"]
    assert (second[-3]["content"], second[-1]["content"]) == ("go", "seen")
