from __future__ import annotations

import threading

import pytest

from agent_smith import CancellationSource, CancelledError


def test_token_reports_and_waits_for_cancellation_from_another_thread() -> None:
    source = CancellationSource()
    assert not source.token.cancelled
    assert not source.token.wait(0)
    threading.Thread(target=source.cancel).start()
    assert source.token.wait(10)
    assert source.token.cancelled


def test_raise_if_cancelled_names_the_operation() -> None:
    source = CancellationSource()
    source.token.raise_if_cancelled("nothing")  # not cancelled: no error
    source.cancel()
    with pytest.raises(CancelledError) as info:
        source.token.raise_if_cancelled("tool dispatch")
    assert info.value.operation == "tool dispatch"
    assert "tool dispatch" in str(info.value)


def test_callbacks_run_once_and_late_registration_runs_at_once() -> None:
    source = CancellationSource()
    calls: list[str] = []
    source.token.on_cancel(lambda: calls.append("early"))
    source.cancel()
    source.cancel()
    source.token.on_cancel(lambda: calls.append("late"))
    assert calls == ["early", "late"]


def test_unregistered_callback_does_not_run() -> None:
    source = CancellationSource()
    calls: list[str] = []
    remove = source.token.on_cancel(lambda: calls.append("x"))
    remove()
    source.cancel()
    assert calls == []


def test_a_failing_callback_does_not_stop_the_others() -> None:
    source = CancellationSource()
    calls: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    source.token.on_cancel(broken)
    source.token.on_cancel(lambda: calls.append("ok"))
    source.cancel()
    assert calls == ["ok"]


def test_linked_source_follows_its_parents_until_detached() -> None:
    parent = CancellationSource()
    child = CancellationSource(parent.token)
    grandchild = CancellationSource(child.token)
    parent.cancel()
    assert child.cancelled and grandchild.cancelled

    other_parent = CancellationSource()
    detached = CancellationSource(other_parent.token)
    detached.detach()
    other_parent.cancel()
    assert not detached.cancelled


def test_cancelling_a_child_leaves_the_parent_alone() -> None:
    parent = CancellationSource()
    child = CancellationSource(parent.token)
    child.cancel()
    assert not parent.cancelled
