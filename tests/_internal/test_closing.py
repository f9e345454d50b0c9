"""Closeable: ``with`` hands back the object itself and closes it on the way out."""

from __future__ import annotations

import pytest

from agent_smith._internal.closing import Closeable


class _Owner(Closeable):
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_with_gives_the_object_itself_and_closes_it_once() -> None:
    owner = _Owner()
    with owner as entered:
        assert entered is owner
        assert owner.closed == 0
    assert owner.closed == 1


def test_with_closes_the_object_when_the_block_raises_and_lets_the_error_out() -> None:
    owner = _Owner()
    with pytest.raises(KeyError), owner:
        raise KeyError("boom")
    assert owner.closed == 1


def test_a_subclass_without_close_cannot_be_made() -> None:
    class NoClose(Closeable):
        pass

    with pytest.raises(TypeError):
        NoClose()  # type: ignore[abstract]
