"""What only PostgresSession has: locks tied to connections, a server that goes away, a pool."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import psycopg
import pytest

from agent_smith import (
    Agent,
    AgentBusyError,
    ConfigError,
    LlmClient,
    PostgresSession,
    SessionError,
    SessionStore,
    SqliteSession,
    UserMessage,
)
from agent_smith.sessions.postgres_database import _holder_key
from tests.agent.test_stops import assert_consistent
from tests.sessions.conftest import WAIT, Blocker, Store, lapse_lease
from tests.support.background import Background
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.postgres import PostgresServer

HOLDER = "another-host.example:1:1:far00001"


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Store]:
    opened = Store("postgres", postgres_url)
    yield opened
    opened.close()


@pytest.fixture
def remote_holder(pg: Store) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A live turn of another host: a connection that holds :data:`HOLDER`'s lock."""
    with psycopg.connect(pg.where, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s::int8)", (_holder_key(HOLDER),))
        yield conn


def test_a_live_holder_on_another_host_keeps_its_lease_until_it_expires(
    pg: Store, remote_holder: psycopg.Connection[tuple[object, ...]]
) -> None:
    pg.hold(HOLDER)
    with pytest.raises(AgentBusyError, match=r"another-host\.example"):
        pg.open().begin_turn()
    lapse_lease(pg)  # it stalled past its lease
    successor = pg.open()
    successor.begin_turn()
    successor.end_turn()


def test_a_holder_whose_connection_ended_is_taken_over_at_once(
    pg: Store, remote_holder: psycopg.Connection[tuple[object, ...]]
) -> None:
    pg.open().append(UserMessage("before"))
    pg.hold(HOLDER)
    with pytest.raises(AgentBusyError):
        pg.open().begin_turn()
    remote_holder.close()  # its process died, on whatever host: the server drops the lock
    successor = pg.open()
    successor.begin_turn()  # not in an hour
    successor.append(UserMessage("after"))
    successor.end_turn()
    assert [m.content for m in successor.messages()] == ["before", "after"]


def test_a_turn_holds_its_lock_on_a_connection_of_its_own_until_it_ends(pg: Store) -> None:
    session = pg.open()
    session.begin_turn()
    locks = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
    assert pg.sql(locks) == [(1,)]
    session.end_turn()
    assert pg.sql(locks) == [(0,)]


def test_the_tables_live_in_a_schema_of_their_own_beside_the_applications(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE messages (id int, text text)")  # the application's own
    with PostgresSession(postgres_url, "s") as session:
        session.append(UserMessage("hi"))
    with PostgresSession(postgres_url, "s", schema="tenant_b") as other:
        assert other.messages() == []  # another store in the same database
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT count(*) FROM public.messages").fetchall()
    assert rows == [(0,)]


def test_another_applications_tables_in_the_schema_are_refused_untouched(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app; CREATE TABLE app.users (id int)")
    with pytest.raises(SessionError, match=r"not an agent_smith session store \(tables: users\)"):
        PostgresSession(postgres_url, "s", schema="app")
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app'"
        ).fetchall()
    assert tables == [("users",)]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_server_is_a_session_error_at_open_not_a_hang() -> None:
    url = f"postgresql://someone:secret@127.0.0.1:{_closed_port()}/app"
    started = time.monotonic()
    with pytest.raises(SessionError, match="cannot reach the session store") as caught:
        PostgresSession(url, "s")
    assert time.monotonic() - started < WAIT
    assert "secret" not in str(caught.value) and caught.value.store.endswith("/app")
    with pytest.raises(SessionError, match="cannot reach"):
        SessionStore(url)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"session_id": ""}, "session_id must be a non-empty string"),
        ({"lease_seconds": -1}, "lease_seconds must be a positive number"),
        ({"pool_size": 1}, "pool_size must be 2 or more"),
        ({"schema": "Robert'); DROP"}, "schema must be a lowercase SQL name"),
    ],
)
def test_bad_options_are_config_errors_before_connecting(
    options: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"session_id": "s", **options}
    url = f"postgresql://127.0.0.1:{_closed_port()}/never"
    with pytest.raises(ConfigError, match=message):
        PostgresSession(url, **args)  # type: ignore[arg-type]


def test_a_store_opens_sqlite_for_a_path_and_postgresql_for_a_url(
    postgres_url: str, tmp_path: object
) -> None:
    with SessionStore(postgres_url) as store:
        with store.open("a") as a, store.open("b") as b:
            assert isinstance(a, PostgresSession)
            a.append(UserMessage("to a"))
            assert b.session_ids() == ["a"]  # one store, one pool
        with store.open("a") as again:
            assert again.messages() == [UserMessage("to a")]
    with SessionStore(f"{tmp_path}/s.db") as files, files.open("a") as session:
        assert isinstance(session, SqliteSession)
    with pytest.raises(ConfigError, match="SQLite file path or a postgresql:// URL"):
        SessionStore("mysql://db/app")


def test_a_server_restart_mid_turn_the_turn_waits_and_continues_with_nothing_lost(
    postgres_server: PostgresServer,
    pg: Store,
    llm_server: ScriptedLlmServer,
    blocker: Blocker,
    llm: LlmClient,
) -> None:
    agent = Agent(llm, tools=[blocker.tool], session=pg.open())
    llm_server.script(Calls(("lookup", {"city": "Paris"})), Text("Sunny in Paris."))
    running = Background(lambda: agent.send("weather?"))
    assert blocker.started.wait(WAIT)
    postgres_server.restart()  # every connection of the turn is cut
    blocker.release.set()
    assert running.join(3 * WAIT)
    assert running.error is None
    stored = pg.open().messages()
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored == agent.history
    other = pg.open()
    other.begin_turn()  # the turn's lease was released after all
    other.end_turn()


def test_a_server_down_mid_turn_fails_the_turn_with_a_session_error_and_half_of_nothing(
    postgres_server: PostgresServer,
    pg: Store,
    llm_server: ScriptedLlmServer,
    blocker: Blocker,
    llm: LlmClient,
) -> None:
    agent = Agent(llm, tools=[blocker.tool], session=pg.open(connect_timeout=1.0))
    llm_server.script(Calls(("lookup", {"city": "Paris"})), Text("Sunny in Paris."))
    running = Background(lambda: agent.send("weather?"))
    assert blocker.started.wait(WAIT)
    postgres_server.stop()
    try:
        blocker.release.set()
        assert running.join(3 * WAIT)
    finally:
        postgres_server.start()
    assert isinstance(running.error, SessionError)
    assert "got no connection within 1.0 s" in str(running.error)
    stored = pg.open().messages()
    assert [m.role for m in stored] == ["user", "assistant"]  # the tool call, no late result
    assert_consistent(stored[:1])
    pg.open().begin_turn()  # the dead turn's claim went with its connection
