"""Agent(session=...): history loaded when built, every message stored, one turn at a time."""

from __future__ import annotations

import threading
import time

import pytest

from agent_smith import (
    Agent,
    AgentBusyError,
    AgentHooks,
    AgentTimeoutError,
    AssistantMessage,
    ConfigError,
    FullMemory,
    LlmClient,
    Message,
    RollingWindowMemory,
    TokenDelta,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from tests.agent.test_stops import assert_consistent
from tests.sessions.conftest import WAIT, Blocker, OpenSession, Store, lapse_lease, on_threads
from tests.support.background import Background
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def _roles(messages: list[Message]) -> list[str]:
    return [m.role for m in messages]


def test_the_agent_starts_from_the_stored_conversation(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    stored = [UserMessage("my name is Ann"), AssistantMessage("Hello Ann.")]
    open_session().replace(stored)
    agent = Agent(llm, "Be brief.", session=open_session())
    assert agent.history == stored
    llm_server.script(Text("You are Ann."))
    agent.send("what is my name?")
    sent = llm_server.requests[0]["messages"]
    assert [m["content"] for m in sent] == [
        "Be brief.",
        "my name is Ann",
        "Hello Ann.",
        "what is my name?",
    ]


def test_every_message_is_stored_as_it_is_recorded(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    reader = open_session()  # another object: sees only what was committed
    seen: list[tuple[Message, Message]] = []
    hooks = AgentHooks(on_message=lambda m: seen.append((m, reader.messages()[-1])))

    @tool
    def where(city: str) -> str:
        """Locate a city."""
        return f"{city} is in France"

    agent = Agent(llm, tools=[where], hooks=hooks, session=open_session())
    llm_server.script(Calls(("where", {"city": "Paris"})), Text("In France."))
    agent.send("where is Paris?")
    assert len(seen) == 4
    assert all(recorded == stored for recorded, stored in seen)
    assert _roles(reader.messages()) == ["user", "assistant", "tool", "assistant"]
    assert reader.messages() == agent.history


def test_memory_decides_what_is_sent_and_the_session_keeps_everything(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    agent = Agent(llm, memory=RollingWindowMemory(max_messages=2), session=open_session())
    for i in range(3):
        llm_server.script(Text(f"answer {i}"))
        agent.send(f"question {i}")
    assert [m["content"] for m in llm_server.requests[-1]["messages"]] == [
        "answer 1",
        "question 2",
    ]
    assert [m.content for m in open_session().messages()] == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1",
        "question 2",
        "answer 2",
    ]


def test_calls_stored_without_results_are_not_loaded(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    # What a worker killed between the tool-call message and its results leaves.
    crashed = [
        UserMessage("weather?"),
        AssistantMessage("", (ToolCall("c1", "lookup", {"city": "Paris"}),)),
    ]
    open_session().replace(crashed)
    agent = Agent(llm, session=open_session())
    assert agent.history == [UserMessage("weather?")]
    llm_server.script(Text("Sorry, where?"))
    agent.send("in Paris")
    assert [m["role"] for m in llm_server.requests[0]["messages"]] == ["user", "user"]
    assert open_session().messages() == [*crashed, *agent.history[1:]]  # what was said


def test_the_calls_a_stored_paused_turn_waits_on_are_loaded(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    waiting = AssistantMessage("", (ToolCall("c1", "delete_files", {"path": "/tmp"}),))
    orphan = AssistantMessage("", (ToolCall("c0", "lookup", {"city": "Paris"}),))
    session = open_session()
    session.replace([UserMessage("weather?"), orphan, UserMessage("clean up"), waiting])
    session.save_paused_turn('{"call_ids": ["c1"]}')  # approvals keep their PausedTurn here
    agent = Agent(llm, session=open_session())
    assert agent.history == [UserMessage("weather?"), UserMessage("clean up"), waiting]
    llm_server.script(Text("Never mind then."))
    agent.send("never mind")  # a plain turn instead: the waiting call is denied first
    sent = llm_server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "user", "assistant", "tool", "user"]
    assert '"denied":true' in sent[3]["content"]
    assert open_session().messages()[-4:] == agent.history[-4:]  # the denial is stored too


def test_a_second_turn_on_the_same_conversation_from_another_thread_is_refused(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession, blocker: Blocker
) -> None:
    first = Agent(llm, tools=[blocker.tool], session=open_session())
    second = Agent(llm, session=open_session())
    llm_server.script(Calls(("lookup", {"city": "Paris"})), Text("Sunny in Paris."))
    running = Background(lambda: first.send("weather in Paris?"))
    try:
        assert blocker.started.wait(WAIT)
        started = time.monotonic()
        with pytest.raises(AgentBusyError, match="is running a turn"):
            second.send("hello?")
        assert time.monotonic() - started < 1.0
        assert second.history == []
    finally:
        blocker.release.set()
        assert running.join(WAIT)
    assert running.error is None
    stored = open_session().messages()
    assert _roles(stored) == ["user", "assistant", "tool", "assistant"]
    assert "hello?" not in [m.content for m in stored]
    assert_consistent(stored)
    llm_server.script(Text("Hi."))
    second.send("hello?")  # free again; it catches up with the first agent's turn first
    assert [m.content for m in second.history][-2:] == ["hello?", "Hi."]
    assert second.history[:4] == stored


def test_an_agent_catches_up_with_turns_run_elsewhere_before_its_own(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    worker_a = Agent(llm, session=open_session())
    worker_b = Agent(llm, session=open_session())  # built before A's turn: its memory is stale
    llm_server.script(Text("Noted."), Text("You said blue."))
    worker_a.send("my colour is blue")
    worker_b.send("what is my colour?")
    assert [m["content"] for m in llm_server.requests[1]["messages"]] == [
        "my colour is blue",
        "Noted.",
        "what is my colour?",
    ]
    assert [m.content for m in open_session().messages()] == [
        "my colour is blue",
        "Noted.",
        "what is my colour?",
        "You said blue.",
    ]


def test_a_memory_that_already_holds_messages_is_a_config_error(
    llm: LlmClient, open_session: OpenSession
) -> None:
    memory = FullMemory()
    memory.append(UserMessage("from somewhere else"))
    with pytest.raises(ConfigError, match="already holds 1 messages"):
        Agent(llm, memory=memory, session=open_session())


def test_a_turn_that_lost_its_lease_stops_and_the_next_turn_reloads(
    llm: LlmClient,
    llm_server: ScriptedLlmServer,
    open_session: OpenSession,
    blocker: Blocker,
    store: Store,
) -> None:
    agent = Agent(llm, tools=[blocker.tool], session=open_session())
    llm_server.script(Calls(("lookup", {"city": "Paris"})))
    running = Background(lambda: agent.send("weather?"))
    assert blocker.started.wait(WAIT)
    # The turn stalls past its lease, and another worker's turn takes the session.
    lapse_lease(store)
    other = open_session()
    other.begin_turn()
    other.append(UserMessage("another worker's turn"))
    other.end_turn()
    blocker.release.set()
    assert running.join(WAIT)
    assert isinstance(running.error, AgentBusyError)
    assert "lost its lease" in str(running.error)
    stored = open_session().messages()
    assert [m.role for m in stored] == ["user", "assistant", "user"]  # no late result
    llm_server.script(Text("Sunny."))
    agent.send("so?")
    assert [m.content for m in agent.history] == [
        "weather?",
        "another worker's turn",
        "so?",
        "Sunny.",
    ]


def test_a_stream_closed_early_releases_the_session(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    agent = Agent(llm, session=open_session())
    llm_server.script(Text("a long answer in many words"))
    events = agent.stream("talk")
    assert any(isinstance(e, TokenDelta) for e in [next(events), next(events)])
    events.close()  # the browser went away
    other = open_session()
    other.begin_turn()  # the lease was released at once
    other.end_turn()
    assert_consistent(other.messages())


def test_a_store_that_stays_locked_ends_the_turn_with_a_timeout_and_frees_the_agent(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession, store: Store
) -> None:
    agent = Agent(llm, session=open_session(busy_timeout=0.1))
    with store.write_locked(), pytest.raises(AgentTimeoutError, match="begin turn waited"):
        agent.send("hello")
    llm_server.script(Text("Hi."))
    assert agent.send("hello").content == "Hi."
    assert [m.content for m in open_session().messages()] == ["hello", "Hi."]


def test_tool_results_are_stored_one_by_one(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    agent = Agent(llm, tools=[echo], session=open_session())
    llm_server.script(Calls(("echo", {"text": "a"}), ("echo", {"text": "b"})), Text("done"))
    agent.send("echo twice")
    stored = open_session().messages()
    assert [m.content for m in stored if isinstance(m, ToolMessage)] == ["a", "b"]
    assert_consistent(stored)


def test_agents_on_many_threads_keep_their_own_conversations_in_one_store(
    llm: LlmClient, llm_server: ScriptedLlmServer, open_session: OpenSession
) -> None:
    llm_server.responder = lambda body: Text(f"re: {body['messages'][-1]['content']}")
    start = threading.Barrier(8)

    def chat(i: int) -> None:
        agent = Agent(llm, session=open_session(f"user-{i}"))
        start.wait(WAIT)
        for j in range(5):
            agent.send(f"{i}.{j}")

    on_threads(8, chat)
    for i in range(8):
        expected = [text for j in range(5) for text in (f"{i}.{j}", f"re: {i}.{j}")]
        assert [m.content for m in open_session(f"user-{i}").messages()] == expected
