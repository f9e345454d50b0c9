"""What the session code needs of a database connection: run a statement, read its rows.

Both stores speak through this: ``sqlite3``'s connection fits it as it is,
PostgreSQL's through a small adapter (:mod:`.postgres_database`). Statements
are written once, in the SQL both databases run, with ``?`` placeholders.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Rows(Protocol):
    """A statement's result: its rows, and how many rows a write touched."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Sql(Protocol):
    """One connection inside one transaction."""

    def execute(self, statement: str, parameters: Sequence[Any] = (), /) -> Rows: ...

    def executemany(self, statement: str, parameters: Iterable[Sequence[Any]], /) -> Rows: ...
