"""Compaction: older turns summarised before a request would fill the window, only on success."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentHooks,
    AssistantMessage,
    ContextCompacted,
    SqliteSession,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.agent.compaction import Compaction
from agent_smith.agent.context_gate import ContextGate
from agent_smith.errors import ConfigError, ContextOverflowError
from agent_smith.llm.client import LlmClient
from agent_smith.llm.request import LlmRequest
from agent_smith.memory import SUMMARY_HEADER, SUMMARY_PROMPT, FullMemory, estimate_tokens
from agent_smith.messages import Message
from tests.support.llm_server import Raw, ScriptedLlmServer, Text

WINDOW = 1000
LONG = "x" * 400  # ~100 tokens


def long_history(rounds: int = 10) -> list[Message]:
    """``rounds`` exchanges of ~200 tokens each, with a tool call group in each."""
    history: list[Message] = []
    for n in range(rounds):
        call = ToolCall(f"call_{n}", "look", {"n": n})
        history += [
            UserMessage(f"question {n} {LONG}"),
            AssistantMessage("", (call,)),
            ToolMessage(call.id, "look", f"result {n}"),
            AssistantMessage(f"answer {n} {LONG}"),
        ]
    return history


def filled(messages: list[Message]) -> FullMemory:
    memory = FullMemory()
    for message in messages:
        memory.append(message)
    return memory


def config(**settings: Any) -> AgentConfig:
    return AgentConfig(context_window=WINDOW, compaction=Compaction(**settings))


def is_summary_request(body: dict[str, Any]) -> bool:
    return body["messages"][0]["content"] == SUMMARY_PROMPT


def test_a_request_over_the_threshold_compacts_older_turns_first(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("They asked ten questions."), Text("Eleven."))
    seen: list[ContextCompacted] = []
    hooks = AgentHooks(on_context_compacted=seen.append)
    agent = Agent(llm, "Be brief.", memory=filled(long_history()), config=config(), hooks=hooks)
    events = list(agent.stream("How many questions?"))

    compacted = [e for e in events if isinstance(e, ContextCompacted)]
    assert len(compacted) == 1 and seen == compacted
    event = compacted[0]
    assert event.summary == "They asked ten questions."
    assert event.tokens_before > 0.8 * WINDOW > event.tokens_after
    assert not event.exact  # the scripted server does not count tokens
    summary_call, main_call = llm_server.requests
    assert is_summary_request(summary_call) and "tools" not in summary_call
    assert "question 0" in summary_call["messages"][1]["content"]
    history = agent.history
    assert history[0] == SystemMessage(SUMMARY_HEADER + "They asked ten questions.")
    assert len(history) == 1 + event.kept + 1  # summary, kept, the answer
    assert history[-2] == UserMessage("How many questions?")
    # one system message, first, holding the prompt and the summary
    sent = main_call["messages"]
    assert [m["role"] for m in sent].count("system") == 1
    assert sent[0]["content"].startswith("Be brief.") and "ten questions" in sent[0]["content"]


def test_tool_calls_and_their_results_are_never_split() -> None:
    from agent_smith.agent.compaction import compact
    from agent_smith.llm.request import LlmResponse

    def summarise(request: Any) -> LlmResponse:
        return LlmResponse(AssistantMessage("S"), "stop")

    for keep in (0.05, 0.1, 0.2, 0.3, 0.5):
        memory = filled(long_history())
        done = compact(summarise, memory, Compaction(keep_recent=keep, threshold=0.9), WINDOW)
        assert done is not None
        kept = memory.messages()[1:]
        assert not isinstance(kept[0], ToolMessage)
        for i, message in enumerate(kept):
            if isinstance(message, ToolMessage):
                caller = kept[i - 1]
                assert isinstance(caller, AssistantMessage) and caller.tool_calls


def test_a_failed_compaction_leaves_the_history_and_trims_what_is_sent(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Raw(500, "broken"), Text("Still here."))
    before = long_history()
    agent = Agent(llm, memory=filled(before), config=config())
    answer = agent.send("Go on.")
    assert answer.content == "Still here."
    assert agent.history == [*before, UserMessage("Go on."), answer]
    sent = llm_server.requests[1]["messages"]
    assert len(sent) < len(before) + 1  # trimmed to fit the window
    # not tried again on the next round of the same size
    llm_server.script(Text("Again."))
    agent.send("More.")
    assert not is_summary_request(llm_server.requests[2])


def test_a_session_keeps_everything_and_records_the_compaction(
    llm: LlmClient, llm_server: ScriptedLlmServer, tmp_path: Path
) -> None:
    llm_server.script(Text("SUMMARY"), Text("ok"))
    with SqliteSession(tmp_path / "s.db", "c1") as session:
        session.replace(long_history())
        agent = Agent(llm, session=session, config=config())
        agent.send("Next.")
        stored = session.messages()
        assert stored[: len(long_history())] == long_history()  # everything said stays
        assert any(isinstance(m, SystemMessage) and m.content.endswith("SUMMARY") for m in stored)
        again = Agent(llm, session=session, config=config())
        assert again.history == agent.history  # a later load sees the compacted history


def test_a_request_that_cannot_fit_even_after_compaction_is_refused_before_sending(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    agent = Agent(llm, "p" * 8000, config=config())  # a ~2,000-token system prompt
    with pytest.raises(ContextOverflowError) as caught:
        agent.send("hi")
    assert caught.value.http_status == 0 and caught.value.context_window == WINDOW
    assert llm_server.requests == []


def test_the_gate_counts_incrementally_from_the_servers_count() -> None:
    gate = ContextGate(Compaction())
    memory = filled([UserMessage("a" * 400)])
    assert gate.tokens(memory, "", ()) == 104  # estimated: 100 + 4 per message
    request = LlmRequest(tuple(memory.messages()))
    gate.observed(500, request, request)  # the server counted it: 500 (the estimate ran low)
    reply = AssistantMessage("b" * 40)
    memory.append(reply)
    gate.note(reply)
    assert gate.tokens(memory, "", ()) == 500 + 14
    memory.clear()  # changed behind the gate's back: counted again
    assert gate.tokens(memory, "", ()) == 0


def test_the_servers_count_of_a_trimmed_request_counts_and_only_the_left_out_is_estimated() -> None:
    gate = ContextGate(Compaction())
    history = long_history(3)
    memory = filled(history)
    built = LlmRequest(tuple(history))
    sent = LlmRequest(tuple(history[4:]))  # the oldest exchange trimmed off
    estimated = sum(estimate_tokens(m) for m in history)
    assert gate.tokens(memory, "", ()) == estimated  # before the request: all estimated
    left_out = sum(estimate_tokens(m) for m in history[:4])
    gate.observed(900, built, sent)  # the server counted what was sent: 900
    assert gate.tokens(memory, "", ()) == 900 + left_out
    gate.observed(None, built, sent)  # no usage: the whole history estimated
    assert gate.tokens(memory, "", ()) == estimated


def test_nonsense_settings_are_refused() -> None:
    with pytest.raises(ConfigError):
        Compaction(threshold=1.5)
    with pytest.raises(ConfigError):
        Compaction(threshold=0.5, keep_recent=0.6)


def test_the_servers_exact_count_confirms_the_estimate_before_compacting(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.counts_tokens = True
    llm_server.script(Text("S"), Text("ok"))
    agent = Agent(llm, memory=filled(long_history()), config=config())
    events = list(agent.stream("Next."))
    (event,) = [e for e in events if isinstance(e, ContextCompacted)]
    assert event.exact and llm_server.tokens_counted == 1


def test_a_sub_agent_compacts_its_own_history(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    from agent_smith import SubAgentEvent, SubAgentSpec
    from tests.support.llm_server import Calls

    llm_server.script(
        Calls(("helper", {"task": "sum up"})),
        Text("CHILD SUMMARY"),  # the child's compaction
        Text("child answer"),
        Text("root answer"),
    )
    seen: list[object] = []
    spec = SubAgentSpec("helper", "Helps.", memory_factory=lambda: filled(long_history()))
    agent = Agent(llm, config=config(), hooks=AgentHooks(on_subagent_event=seen.append))
    agent.add_subagent(spec)
    assert agent.send("go").content == "root answer"
    assert is_summary_request(llm_server.requests[1])
    child = [e.event for e in seen if isinstance(e, SubAgentEvent)]
    assert any(isinstance(e, ContextCompacted) for e in child)
    assert not any(isinstance(m, SystemMessage) for m in agent.history)  # the root's untouched


def test_a_count_that_fails_falls_back_to_the_estimate() -> None:
    from agent_smith.errors import LlmApiError
    from agent_smith.llm.request import LlmRequest, LlmResponse

    def count(request: LlmRequest) -> int:
        raise LlmApiError("count_tokens is down", http_status=503)

    def summarise(request: LlmRequest) -> LlmResponse:
        return LlmResponse(AssistantMessage("S"), "stop")

    gate = ContextGate(Compaction())
    memory = filled(long_history())
    request = LlmRequest(tuple(memory.messages()))
    tokens = gate.tokens(memory, "", ())
    event = gate.compact(summarise, count, memory, request, "", tokens, WINDOW, WINDOW)
    assert event is not None and not event.exact


# -- on by default -------------------------------------------------------------


def test_compaction_is_on_by_default_and_none_turns_it_off(llm: LlmClient) -> None:
    assert AgentConfig().compaction == Compaction()
    assert Agent(llm)._context_gate is not None
    assert Agent(llm, config=AgentConfig(compaction=None))._context_gate is None


def test_by_default_a_window_the_server_names_is_compacted_into(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.props = {"default_generation_settings": {"n_ctx": WINDOW}}
    llm_server.script(Text("They asked ten questions."), Text("Eleven."))
    agent = Agent(llm, memory=filled(long_history()))  # nothing configured
    events = list(agent.stream("How many questions?"))
    assert [type(e) for e in events if isinstance(e, ContextCompacted)] == [ContextCompacted]
    assert llm_server.props_asked == 1
    assert is_summary_request(llm_server.requests[0])


def test_by_default_a_short_conversation_asks_nothing_and_sends_no_summary(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.props = {"default_generation_settings": {"n_ctx": 64}}  # would be due at once
    agent = Agent(llm)
    for n in range(3):
        agent.send(f"Hello {n}.")
    assert llm_server.props_asked == 0  # under ~300 tokens nothing could be due: not asked
    assert not any(is_summary_request(body) for body in llm_server.requests)
    assert len(llm_server.requests) == 3


def test_by_default_an_unknown_window_is_asked_once_and_then_costs_nothing(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    agent = Agent(llm, memory=filled(long_history()))  # the server has no /props (404)
    for n in range(4):
        agent.send(f"Question {n}?")
    assert llm_server.props_asked == 1
    assert not any(is_summary_request(body) for body in llm_server.requests)
    assert len(llm_server.requests) == 4
