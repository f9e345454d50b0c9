"""Closeable: the context-manager half of every resource owner.

Every owner of threads, sockets or child processes has a ``close()`` and is a
context manager (DESIGN §2.5). The two dunder methods are the same for all of
them, so they live here once: ``with owner:`` closes the owner on the way out,
whether the block returned or raised.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import TypeVar

_C = TypeVar("_C", bound="Closeable")


class Closeable(ABC):
    """Mixin: ``with obj as o:`` gives ``obj`` (typed as the subclass) and closes it after."""

    __slots__ = ()

    @abstractmethod
    def close(self) -> None:
        """Release everything the object owns; calling it again does nothing."""

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def close_iterator(iterator: object) -> None:
    """Close ``iterator`` if it can be closed (a generator, a streamed response's events).

    A consumer that stops early closes what it read from, so the producer's
    ``finally`` runs now (an HTTP response closed, a turn cancelled) rather
    than whenever the garbage collector finds it.
    """
    close = getattr(iterator, "close", None)
    if close is not None:
        close()
