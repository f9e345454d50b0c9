"""Loop guards, the tree counter and sub-agent event forwarding, without a server."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_smith.agent.events import AgentHooks, SubAgentEvent, forwarding_hooks
from agent_smith.agent.guards import STEERING_NOTE, FailureGuard, LoopGuard
from agent_smith.agent.tree import AgentTree
from agent_smith.errors import AgentStopped
from agent_smith.messages import ToolCall, ToolMessage, UserMessage


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(f"id{i}", name, args) for i, (name, args) in enumerate(specs)]


def result(ok: bool) -> ToolMessage:
    return ToolMessage("id", "t", "ok" if ok else '{"error":true}', is_error=not ok)


def test_loop_guard_ignores_ids_and_key_order_but_not_arguments() -> None:
    guard = LoopGuard(3)
    guard.check(calls(("a", {"x": 1, "y": 2})))
    guard.check([ToolCall("other-id", "a", {"y": 2, "x": 1})])
    guard.check(calls(("a", {"x": 2, "y": 2})))  # different: the count restarts
    guard.check(calls(("a", {"x": 2, "y": 2})))
    with pytest.raises(AgentStopped) as info:
        guard.check(calls(("a", {"x": 2, "y": 2})))
    assert info.value.condition == "loop_detected"


def test_loop_guard_compares_whole_call_sets_in_order() -> None:
    guard = LoopGuard(2)
    guard.check(calls(("a", {}), ("b", {})))
    guard.check(calls(("b", {}), ("a", {})))
    with pytest.raises(AgentStopped):
        guard.check(calls(("b", {}), ("a", {})))


def test_failure_guard_steers_once_then_stops() -> None:
    guard = FailureGuard(steer_after=2, stop_after=4)
    assert guard.check([result(False)]) is None
    assert guard.check([result(False), result(False)]) == UserMessage(
        STEERING_NOTE.format(rounds=2)
    )
    assert guard.check([result(False)]) is None
    with pytest.raises(AgentStopped) as info:
        guard.check([result(False)])
    assert info.value.condition == "tool_failures"


def test_failure_guard_counts_only_rounds_where_every_call_failed() -> None:
    guard = FailureGuard(steer_after=1, stop_after=2)
    assert guard.check([result(False), result(True)]) is None
    assert guard.check([result(False)]) is not None
    assert guard.check([result(True)]) is None  # reset: steering allowed again
    assert guard.check([result(False)]) is not None


def test_tree_hands_out_exactly_its_cap_to_racing_threads() -> None:
    tree = AgentTree(50)
    start = threading.Barrier(8)
    won: list[int] = []
    lock = threading.Lock()

    def race() -> None:
        start.wait(10)
        mine = 0
        while tree.take_iteration():
            mine += 1
        with lock:
            won.append(mine)

    threads = [threading.Thread(target=race, name=f"test-race-{i}") for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sum(won) == 50 and tree.iterations == 50


def test_forwarding_hooks_tag_child_events_and_pass_grandchild_events_up() -> None:
    seen: list[SubAgentEvent] = []
    child_hooks = forwarding_hooks(AgentHooks(on_subagent_event=seen.append), name="c", depth=1)
    message = UserMessage("task")
    assert child_hooks.on_message is not None and child_hooks.on_subagent_event is not None
    child_hooks.on_message(message)
    grandchild = SubAgentEvent("g", 2, message)
    child_hooks.on_subagent_event(grandchild)
    assert seen == [SubAgentEvent("c", 1, message), grandchild]


def test_forwarding_hooks_without_a_parent_sink_observe_nothing() -> None:
    hooks = forwarding_hooks(AgentHooks(), name="c", depth=1)
    assert hooks.on_message is None and hooks.on_subagent_event is None
