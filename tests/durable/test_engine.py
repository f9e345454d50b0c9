"""What a durable engine's commits survive: ``synchronous`` reaches every connection of the
engine (the journal's and DBOS's), and no other connection (tests/durable/conftest.py runs
each test on SQLite and on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlalchemy as sa
from dbos._dbos import _get_dbos_instance  # DBOS's own connections, to check them too

from agent_smith import Agent, TestModel
from agent_smith.durable import DurableAgent, DurableEngine
from agent_smith.durable.engine import database_url
from agent_smith.errors import ConfigError

#: What each level reads back as: SQLite's ``PRAGMA synchronous``, PostgreSQL's
#: ``synchronous_commit`` (``"full"`` leaves the server's own: ``on`` by default).
READ_BACK = {"sqlite": {"normal": "1", "full": "2"}, "postgres": {"normal": "off", "full": "on"}}


def setting(engine: sa.Engine) -> str:
    """The commit durability of a connection of ``engine``, as the database reads it."""
    sqlite = engine.url.get_backend_name() == "sqlite"
    query = "PRAGMA synchronous" if sqlite else "SHOW synchronous_commit"
    with engine.connect() as conn:
        return str(conn.exec_driver_sql(query).scalar())


def kind(database: str) -> str:
    return "postgres" if "://" in database else "sqlite"


def test_the_default_is_normal_on_sqlite_and_the_servers_own_on_postgresql(
    new_database: Callable[[], str],
) -> None:
    database = new_database()
    with DurableEngine(database) as engine:
        expected = "normal" if kind(database) == "sqlite" else "full"
        assert engine.synchronous == expected
        assert setting(engine.journal._engine) == READ_BACK[kind(database)][expected]


@pytest.mark.parametrize("synchronous", ["normal", "full"])
def test_synchronous_reaches_the_journals_and_dbos_connections(
    new_database: Callable[[], str], synchronous: str
) -> None:
    database = new_database()
    expected = READ_BACK[kind(database)][synchronous]
    with DurableEngine(database, synchronous=synchronous) as engine:  # type: ignore[arg-type]
        durable = DurableAgent(Agent(TestModel(["hi"]), name="greeter"), engine)
        engine.launch()
        assert durable.send("Hello.", turn_id="one").content == "hi"
        assert setting(engine.journal._engine) == expected
        assert setting(_get_dbos_instance()._sys_db.engine) == expected


def test_normal_on_postgresql_is_an_option_of_our_sessions_not_the_servers(
    postgres_url: str,
) -> None:
    with DurableEngine(postgres_url, synchronous="normal") as engine:
        other = sa.create_engine(database_url(postgres_url))  # the same database, not ours
        try:
            assert setting(engine.journal._engine) == "off"
            assert setting(other) == "on"
        finally:
            other.dispose()


def test_a_postgresql_url_keeps_its_own_libpq_options_beside_ours(postgres_url: str) -> None:
    url = postgres_url + "?options=-c%20statement_timeout%3D12345"
    with DurableEngine(url, synchronous="normal") as engine:
        with engine.journal._engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() == "12345ms"
        assert setting(engine.journal._engine) == "off"


def test_an_unknown_level_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="synchronous must be 'normal' or 'full'"):
        DurableEngine("turns.sqlite", synchronous="off")  # type: ignore[arg-type]
