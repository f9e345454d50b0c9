"""The tests' PostgreSQL server (tests/support/postgres.py) starts, isolates and restarts."""

from __future__ import annotations

import psycopg

from tests.support.postgres import PostgresServer


def test_each_test_gets_its_own_empty_database(postgres_server: PostgresServer) -> None:
    first, second = postgres_server.new_database(), postgres_server.new_database()
    assert first != second
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE marks (n integer)")
    with psycopg.connect(second) as conn:
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'marks'").fetchone()
    assert tables == (0,)


def test_a_restart_cuts_connections_and_keeps_the_rows(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE marks (n integer)")
        conn.execute("INSERT INTO marks VALUES (7)")
        postgres_server.restart()
        try:
            conn.execute("SELECT 1")
        except psycopg.OperationalError:
            pass
        else:
            raise AssertionError("the connection outlived the restart")
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT n FROM marks").fetchall() == [(7,)]
