"""Durable chat turns: the history from the session, the turn's messages saved to it once."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, SqliteSession, TestModel, TransportError, UserMessage, tool
from agent_smith.durable import DurableChat, DurableEngine
from agent_smith.durable.chat import SAVE_FROM
from agent_smith.llm.testing import call
from agent_smith.messages import AssistantMessage, Message


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def stored(path: Path, session_id: str) -> list[Message]:
    with SqliteSession(path, session_id) as session:
        return session.messages()


def test_a_chat_turn_starts_from_the_session_and_saves_its_messages_once(
    engine: DurableEngine, tmp_path: Path
) -> None:
    sessions = tmp_path / "c.db"
    with SqliteSession(sessions, "u/c") as session:
        session.append(UserMessage("Hi"))
        session.append(AssistantMessage("Hello."))
    model = TestModel([[call("add", a=1, b=2)], "It is 3."])
    chat = DurableChat(engine, lambda: Agent(model, tools=[add]), sessions=sessions)
    engine.launch()
    chat.start("u/c#t1", "u/c", UserMessage("Add 1 and 2"))
    records = list(chat.follow("u/c#t1"))
    assert [r["type"] for r in records] == [
        "assistant",
        "tool_call",
        "tool_result",
        "assistant",
        "final",
    ]
    sent = model.requests[0].messages[-3:]
    assert sent == (UserMessage("Hi"), AssistantMessage("Hello."), UserMessage("Add 1 and 2"))
    said = stored(sessions, "u/c")
    assert [m.role for m in said] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert said[-1] == AssistantMessage("It is 3.", usage=said[-1].usage)
    assert list(chat.follow("u/c#t1", 3)) == records[3:]  # from any offset
    assert chat.running("u/c#") is None
    chat._save("u/c#t1", "u/c", said[2:])  # a late run: saved already
    assert stored(sessions, "u/c") == said


def test_a_save_cut_short_by_a_crash_appends_only_what_is_missing(
    engine: DurableEngine, tmp_path: Path
) -> None:
    sessions = tmp_path / "c.db"
    chat = DurableChat(engine, lambda: Agent(TestModel([])), sessions=sessions)
    engine.launch()
    turn = [UserMessage("Two things"), AssistantMessage("One."), AssistantMessage("Two.")]
    engine.journal.first("u/c#t2", SAVE_FROM, "0")  # the crashed run had noted the size...
    with SqliteSession(sessions, "u/c") as session:
        session.append(turn[0])  # ...and appended its first message
    chat._save("u/c#t2", "u/c", turn)
    assert stored(sessions, "u/c") == turn


def test_a_chat_turn_that_fails_ends_its_stream_with_a_failed_record_keeping_the_message(
    engine: DurableEngine, tmp_path: Path
) -> None:
    gone = TransportError("the model server is gone", operation="chat", endpoint_or_server="m")
    model = TestModel([gone, "Now I can answer."])
    chat = DurableChat(engine, lambda: Agent(model), sessions=tmp_path / "c.db")
    engine.launch()
    chat.start("u/c#t3", "u/c", UserMessage("Anything"))
    records = list(chat.follow("u/c#t3"))
    assert records[-1]["type"] == "failed"
    assert "the turn failed" in records[-1]["message"]
    # As a plain turn keeps it: the message is in the conversation, which is free again.
    assert stored(tmp_path / "c.db", "u/c") == [UserMessage("Anything")]
    assert chat.running("u/c#") is None
    chat.start("u/c#t4", "u/c", UserMessage("Again?"))
    assert [r["type"] for r in chat.follow("u/c#t4")] == ["assistant", "final"]
    assert model.requests[-1].messages[-2:] == (UserMessage("Anything"), UserMessage("Again?"))
