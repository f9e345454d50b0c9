"""A tool call's timeout stops while it waits for a person; the wait has its own deadline."""

from __future__ import annotations

import threading

import pytest

from agent_smith import CancellationSource, Runtime, ToolCall, ToolOptions
from agent_smith.tools import ToolRegistry, tool
from agent_smith.tools.dispatch import ToolOutcome, dispatch_tool_calls
from agent_smith.tools.person_wait import WaitClock, current_clock, waiting_for_person

BOUND = 10.0
TIMEOUT = 0.3  # the tool's own timeout; the person takes several times longer

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def _dispatch(
    registry: ToolRegistry, runtime: Runtime, *, person_timeout: float = BOUND
) -> ToolOutcome:
    (outcome,) = dispatch_tool_calls(
        [ToolCall("c1", "ask", {})],
        registry,
        runtime=runtime,
        depth=0,
        cancel=CancellationSource().token,
        default_timeout=BOUND,
        max_result_bytes=65536,
        person_timeout=person_timeout,
    )
    return outcome


def _person_takes(seconds: float) -> None:
    """A person who answers after ``seconds`` (a wait with nothing to wake it early)."""
    threading.Event().wait(seconds)


def test_a_call_waiting_for_a_person_longer_than_its_timeout_still_finishes(
    runtime: Runtime,
) -> None:
    @tool
    def ask() -> str:
        """Ask a person, then work a little."""
        with waiting_for_person():
            _person_takes(4 * TIMEOUT)
        return "answered"

    registry = ToolRegistry()
    registry.add(ask, ToolOptions(timeout=TIMEOUT))
    outcome = _dispatch(registry, runtime)
    assert (outcome.message.content, outcome.message.is_error) == ("answered", False)


def test_the_call_times_out_as_before_once_the_person_answered(runtime: Runtime) -> None:
    stop = threading.Event()

    @tool
    def ask() -> str:
        """Ask a person, then hang."""
        with waiting_for_person():
            _person_takes(2 * TIMEOUT)
        stop.wait(BOUND)  # the tool's own work never ends
        return "never"

    registry = ToolRegistry()
    registry.add(ask, ToolOptions(timeout=TIMEOUT))
    outcome = _dispatch(registry, runtime)
    stop.set()
    assert outcome.message.is_error
    assert f"timed out after {TIMEOUT:g} s" in outcome.message.content


def test_a_person_who_never_answers_meets_the_waits_own_deadline(runtime: Runtime) -> None:
    answered = threading.Event()

    @tool
    def ask() -> str:
        """Ask a person who does not answer."""
        with waiting_for_person():
            answered.wait(BOUND)
        return "too late"

    registry = ToolRegistry()
    registry.add(ask, ToolOptions(timeout=BOUND))
    outcome = _dispatch(registry, runtime, person_timeout=TIMEOUT)
    answered.set()
    assert outcome.message.is_error
    assert f"waited over {TIMEOUT:g} s for a person to answer" in outcome.message.content


def test_a_hold_reaches_the_parent_call_and_the_clocks_that_follow() -> None:
    parent = WaitClock()
    child, follower = WaitClock(parent), WaitClock()

    def in_the_call() -> None:
        assert current_clock() is child
        with child.followed_by(follower), waiting_for_person():
            assert child.holding_since() is not None
            assert parent.holding_since() is not None
            assert follower.holding_since() is not None
        assert follower.holding_since() is None  # released with the hold

    child.run(in_the_call)
    assert current_clock() is None
    assert (child.holding_since(), parent.holding_since()) == (None, None)
    assert child.held() > 0 and parent.held() > 0  # each timed its own hold
