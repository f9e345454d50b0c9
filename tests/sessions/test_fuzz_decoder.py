"""Fuzzing the session store's decoder: damaged rows raise only SessionError."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import SessionError, SqliteSession, UserMessage
from tests.sessions.conftest import sql
from tests.support.fuzz import SLOW, TOO_DEEP, json_values

_bodies = (
    st.text(max_size=200)
    | st.binary(max_size=100)
    | json_values.map(json.dumps)
    | st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"])}).map(
        json.dumps
    )
)


@SLOW
@given(st.lists(_bodies, min_size=1, max_size=3))
@example([TOO_DEEP])
@example(['{"role": "user", "content": "a"}, {"role": "user"'])
@example([b"\xff\xfe not utf-8"])
def test_damaged_rows_load_as_messages_or_raise_session_error(
    tmp_path: Path, bodies: list[str | bytes]
) -> None:
    db = tmp_path / "fuzz.db"
    db.unlink(missing_ok=True)
    with SqliteSession(db, "s") as session:
        session.append(UserMessage("kept"))
    for body in bodies:
        sql(db, "INSERT INTO messages (session_id, body) VALUES ('s', ?)", body)
    with SqliteSession(db, "s") as session:
        try:
            loaded = session.messages()
        except SessionError:
            return
    assert loaded[0] == UserMessage("kept")
