"""What only SqliteSession has: a file path, its synchronous mode, rows of any SQLite type."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import ConfigError, Session, SessionError, SqliteSession, UserMessage
from tests.sessions.conftest import Store, sql


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": ":memory:"}, "path of a database file"),
        ({"path": ""}, "path of a database file"),
        ({"session_id": ""}, "session_id must be a non-empty string"),
        ({"lease_seconds": 0}, "lease_seconds must be a positive number"),
        ({"lease_seconds": float("nan")}, "lease_seconds must be a positive number"),
        ({"busy_timeout": -1}, "busy_timeout must be zero or more"),
        ({"synchronous": "off"}, "synchronous must be 'normal' or 'full'"),
    ],
)
def test_bad_options_are_config_errors_before_any_file_is_made(
    tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"path": tmp_path / "x.db", "session_id": "s", **kwargs}
    with pytest.raises(ConfigError, match=message):
        SqliteSession(**args)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def _synchronous_level(session: Session) -> int:
    """The ``PRAGMA synchronous`` level of the connection the session writes with."""
    assert isinstance(session, SqliteSession)
    with session._db.read("check") as conn:
        level: int = conn.execute("PRAGMA synchronous").fetchone()[0]
    return level


def test_full_synchronous_mode_stores_the_same(sqlite_store: Store) -> None:
    session = sqlite_store.open(synchronous="full")
    session.append(UserMessage("durable"))
    assert _synchronous_level(session) == 2  # FULL
    normal = sqlite_store.open()
    assert normal.messages() == [UserMessage("durable")]
    assert _synchronous_level(normal) == 1  # NORMAL, the default


def test_a_row_stored_as_a_blob_is_damaged(sqlite_store: Store, db: Path) -> None:
    session = sqlite_store.open()
    session.append(UserMessage("fine"))
    sql(db, "INSERT INTO messages (session_id, body) VALUES ('s', ?)", b'{"role": "user"}')
    with pytest.raises(SessionError, match=r"damaged message: message 1 is stored as bytes"):
        session.messages()
