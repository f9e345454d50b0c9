"""Session storage, in every store: what is stored, in what form, and what each write does."""

from __future__ import annotations

import json
import threading

import pytest

from agent_smith import (
    AssistantMessage,
    ConfigError,
    Message,
    SessionError,
    SessionState,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolMessage,
    UserMessage,
    messages_from_json,
    messages_to_json,
)
from tests.sessions.conftest import WAIT, OpenSession, Store, on_threads

HISTORY: list[Message] = [
    SystemMessage("Summary of the earlier conversation: none"),
    UserMessage("weather in Paris — ünïcode 🌍"),
    AssistantMessage(
        "",
        (ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "f", {}, "{bad")),
        TokenUsage(10, 5, 15),
        "thinking",
    ),
    ToolMessage("c1", "get_weather", "Sunny"),
    ToolMessage("c2", "f", "arguments were not JSON", is_error=True),
    AssistantMessage("It is sunny.", usage=TokenUsage(3, 2, 5)),
]


def test_messages_come_back_in_order_exactly_as_appended(open_session: OpenSession) -> None:
    session = open_session()
    for message in HISTORY:
        session.append(message)
    assert session.messages() == HISTORY
    assert open_session().messages() == HISTORY  # another object on the same store


def test_rows_hold_the_json_form_that_messages_from_json_reads(
    open_session: OpenSession, store: Store
) -> None:
    open_session().replace(HISTORY)
    bodies = [row[0] for row in store.sql("SELECT body FROM messages ORDER BY id")]
    assert "[" + ", ".join(bodies) + "]" == messages_to_json(HISTORY)
    assert messages_from_json("[" + ",".join(bodies) + "]") == HISTORY


def test_a_new_session_is_empty_and_unlisted(open_session: OpenSession) -> None:
    session = open_session("fresh")
    assert session.load() == SessionState((), 0, None)
    assert session.messages() == []
    assert session.session_ids() == []


def test_every_write_returns_a_new_revision_that_load_reports(open_session: OpenSession) -> None:
    session = open_session()
    revisions = [
        session.append(UserMessage("a")),
        session.append(UserMessage("b")),
        session.replace([UserMessage("c")]),
        session.save_paused_turn('{"paused": true}'),
        session.clear(),
    ]
    assert len(set(revisions)) == len(revisions) and 0 not in revisions
    assert session.load().revision == revisions[-1]


def test_sessions_in_one_store_are_separate_and_listed_sorted(open_session: OpenSession) -> None:
    beta, alpha = open_session("beta"), open_session("alpha")
    beta.append(UserMessage("to beta"))
    alpha.append(UserMessage("to alpha"))
    assert beta.messages() == [UserMessage("to beta")]
    assert alpha.messages() == [UserMessage("to alpha")]
    assert alpha.session_ids() == ["alpha", "beta"]


def test_replace_makes_the_given_messages_the_whole_conversation(
    open_session: OpenSession,
) -> None:
    session = open_session()
    session.replace(HISTORY)
    session.replace(HISTORY[1:2])
    assert session.messages() == HISTORY[1:2]


def test_clear_forgets_messages_and_paused_turn_but_keeps_the_id(
    open_session: OpenSession,
) -> None:
    session = open_session()
    session.replace(HISTORY)
    session.save_paused_turn('{"calls": ["c1"]}')
    session.clear()
    state = session.load()
    assert state.messages == () and state.paused_turn is None
    assert session.session_ids() == ["s"]
    session.append(UserMessage("again"))
    assert session.messages() == [UserMessage("again")]


def test_delete_removes_a_session_entirely(open_session: OpenSession) -> None:
    keep, gone = open_session("keep"), open_session("gone")
    keep.append(UserMessage("stay"))
    gone.append(UserMessage("go"))
    gone.save_paused_turn("{}")
    keep.delete("gone")
    assert keep.session_ids() == ["keep"]
    assert gone.load() == SessionState((), 0, None)
    assert keep.messages() == [UserMessage("stay")]


def test_the_paused_turn_is_kept_as_text_beside_the_messages(open_session: OpenSession) -> None:
    session = open_session()
    session.append(UserMessage("delete the temp files"))
    paused = json.dumps({"agent": "agent", "call_ids": ["c1"]})
    session.save_paused_turn(paused)
    assert open_session().load().paused_turn == paused
    session.append(AssistantMessage("ok"))  # appending keeps it
    assert session.load().paused_turn == paused
    session.save_paused_turn(None)
    assert session.load().paused_turn is None
    with pytest.raises(ConfigError, match="JSON text"):
        session.save_paused_turn({"not": "text"})  # type: ignore[arg-type]


def test_one_object_serves_many_threads(open_session: OpenSession) -> None:
    session = open_session()
    start = threading.Barrier(8)

    def write(i: int) -> None:
        start.wait(WAIT)
        for j in range(25):
            session.append(UserMessage(f"{i}-{j}"))

    on_threads(8, write)
    texts = [m.content for m in session.messages()]
    assert sorted(texts) == sorted(f"{i}-{j}" for i in range(8) for j in range(25))
    for i in range(8):  # each thread's messages in the order it wrote them
        mine = [t for t in texts if t.startswith(f"{i}-")]
        assert mine == [f"{i}-{j}" for j in range(25)]


def test_a_closed_session_refuses_work_with_a_session_error(open_session: OpenSession) -> None:
    session = open_session()
    session.append(UserMessage("before"))
    session.close()
    session.close()  # twice is fine
    with pytest.raises(SessionError, match="is closed"):
        session.messages()
    with pytest.raises(SessionError, match="is closed"):
        session.append(UserMessage("after"))
    assert open_session().messages() == [UserMessage("before")]


def test_a_damaged_message_row_is_a_session_error(open_session: OpenSession, store: Store) -> None:
    session = open_session()
    session.append(UserMessage("fine"))
    store.sql("INSERT INTO messages (session_id, body) VALUES ('s', '{\"role\": \"user\"}')")
    with pytest.raises(SessionError, match=r"session 's' in .* holds a damaged message: message 1"):
        session.messages()


@pytest.mark.parametrize(
    "body",
    [
        '{"role": "user", "content": "a"}, {"role": "user", "content": "b"}',  # two in one row
        ' {"role": "user", "content": "a"} x',
    ],
)
def test_a_row_that_is_not_one_stored_message_is_damaged(
    open_session: OpenSession, store: Store, body: str
) -> None:
    session = open_session()
    session.append(UserMessage("fine"))
    store.sql("INSERT INTO messages (session_id, body) VALUES ('s', ?)", body)
    with pytest.raises(SessionError, match=r"holds a damaged message: .*message 1"):
        session.messages()


def test_a_row_with_space_around_its_json_still_reads(
    open_session: OpenSession, store: Store
) -> None:
    session = open_session()
    store.sql(
        "INSERT INTO messages (session_id, body) VALUES ('s', ?)",
        ' {"role": "user", "content": "a"}\n',
    )
    assert session.messages() == [UserMessage("a")]


def test_appending_something_that_is_not_a_message_is_a_config_error(
    open_session: OpenSession,
) -> None:
    session = open_session()
    with pytest.raises(ConfigError, match="not a message: str"):
        session.append("hello")  # type: ignore[arg-type]
    assert session.messages() == []
