"""Parallel tool dispatch: validation, order, parallelism, timeouts, cancellation."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from agent_smith import (
    CancellationSource,
    CancelledError,
    Runtime,
    Tool,
    ToolCall,
    ToolContext,
    ToolOptions,
    ToolResult,
    ToolSchema,
)
from agent_smith.tools import ToolRegistry, make_tool, tool
from agent_smith.tools.dispatch import ToolOutcome, cancelled_outcomes, dispatch_tool_calls

BOUND = 10.0  # generous bound for every wait: a bug fails instead of hanging

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def dispatch(
    calls: list[ToolCall],
    registry: ToolRegistry,
    runtime: Runtime,
    *,
    cancel: CancellationSource | None = None,
    default_timeout: float = BOUND,
    max_result_bytes: int = 65536,
) -> list[ToolOutcome]:
    return dispatch_tool_calls(
        calls,
        registry,
        runtime=runtime,
        depth=0,
        cancel=(cancel or CancellationSource()).token,
        default_timeout=default_timeout,
        max_result_bytes=max_result_bytes,
    )


def error_of(outcome: ToolOutcome) -> str:
    assert outcome.message.is_error
    body = json.loads(outcome.message.content)
    assert body["error"] is True
    assert set(body) == {"error", "message"}
    assert " " not in outcome.message.content.split('"message"')[0]  # compact JSON
    return str(body["message"])


def registry_of(*tools: Tool) -> ToolRegistry:
    registry = ToolRegistry()
    for t in tools:
        registry.add(t)
    return registry


def test_no_calls_gives_no_outcomes(runtime: Runtime) -> None:
    assert dispatch([], ToolRegistry(), runtime) == []


def test_unknown_tool_bad_json_and_schema_violation_become_error_messages(
    runtime: Runtime,
) -> None:
    ran: list[int] = []

    @tool
    def square(n: int) -> int:
        ran.append(n)
        return n * n

    calls = [
        ToolCall("c1", "cube", {"n": 2}),
        ToolCall.from_wire("c2", "square", '{"n": 2', lenient=True),
        ToolCall("c3", "square", {"n": "two"}),
        ToolCall("c4", "square", {"n": 2, "extra": True}),
        ToolCall("c5", "square", {}),
        ToolCall("c6", "square", {"n": 3}),
    ]
    outcomes = dispatch(calls, registry_of(square), runtime)
    assert [o.call for o in outcomes] == calls
    assert [o.message.tool_call_id for o in outcomes] == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert error_of(outcomes[0]) == "unknown tool 'cube'; available tools: square"
    assert error_of(outcomes[1]).startswith("tool 'square': arguments are not a valid JSON")
    assert (
        error_of(outcomes[2])
        == "tool 'square': invalid arguments: at 'n': 'two' is not of type 'integer'"
    )
    assert "extra" in error_of(outcomes[3])
    assert "'n' is a required property" in error_of(outcomes[4])
    assert outcomes[5].message.content == "9"
    assert not outcomes[5].message.is_error
    assert ran == [3]  # the rejected calls never ran


def test_validation_does_not_import_jsonschema_at_package_import() -> None:
    import subprocess
    import sys

    code = "import sys, agent_smith; print('jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_tool_exception_becomes_a_compact_error_without_traceback(runtime: Runtime) -> None:
    @tool
    def explode(reason: str) -> str:
        raise RuntimeError(reason)

    class Raw(Tool):
        @property
        def schema(self) -> ToolSchema:
            return ToolSchema("raw")

        def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            raise KeyError("missing")

    calls = [ToolCall("a", "explode", {"reason": "disk full"}), ToolCall("b", "raw", {})]
    first, second = dispatch(calls, registry_of(explode, Raw()), runtime)
    assert error_of(first) == "tool 'explode' failed: RuntimeError: disk full"
    assert first.result == ToolResult("RuntimeError: disk full", is_error=True)
    assert error_of(second) == "tool 'raw' failed: KeyError: 'missing'"
    assert "Traceback" not in first.message.content + second.message.content


def test_four_tools_waiting_on_one_barrier_all_complete(runtime: Runtime) -> None:
    barrier = threading.Barrier(4)

    @tool
    def meet(i: int) -> int:
        barrier.wait(BOUND)  # only returns if all four run at the same time
        return i

    calls = [ToolCall(f"c{i}", "meet", {"i": i}) for i in range(4)]
    outcomes = dispatch(calls, registry_of(meet), runtime)
    assert [o.message.content for o in outcomes] == ["0", "1", "2", "3"]
    assert not any(o.message.is_error for o in outcomes)


def test_results_follow_tool_calls_order_not_completion_order(runtime: Runtime) -> None:
    second_done = threading.Event()

    @tool
    def first() -> str:
        assert second_done.wait(BOUND)  # finishes after "second"
        return "first"

    @tool
    def second() -> str:
        second_done.set()
        return "second"

    calls = [ToolCall("1", "first", {}), ToolCall("2", "second", {})]
    outcomes = dispatch(calls, registry_of(first, second), runtime)
    assert [o.message.content for o in outcomes] == ["first", "second"]


def test_hung_tool_times_out_and_its_token_is_cancelled(runtime: Runtime) -> None:
    saw_cancel = threading.Event()

    @tool(timeout=0.05)
    def hang(ctx: ToolContext) -> str:
        assert ctx.budget == 0.05
        if ctx.cancel.wait(BOUND):
            saw_cancel.set()
        return "late"

    (outcome,) = dispatch([ToolCall("h", "hang", {})], registry_of(hang), runtime)
    assert error_of(outcome) == "tool 'hang' timed out after 0.05 s"
    assert saw_cancel.wait(BOUND)


def test_registry_options_override_the_tools_timeout(runtime: Runtime) -> None:
    @tool(timeout=BOUND)
    def hang(ctx: ToolContext) -> str:
        ctx.cancel.wait(BOUND)
        return "late"

    registry = ToolRegistry()
    registry.add(hang, ToolOptions(timeout=0.02))
    (outcome,) = dispatch([ToolCall("h", "hang", {})], registry, runtime)
    assert error_of(outcome) == "tool 'hang' timed out after 0.02 s"


def test_default_timeout_applies_when_no_option_is_set(runtime: Runtime) -> None:
    @tool
    def hang(ctx: ToolContext) -> str:
        ctx.cancel.wait(BOUND)
        return "late"

    outcomes = dispatch(
        [ToolCall("h", "hang", {})], registry_of(hang), runtime, default_timeout=0.01
    )
    assert error_of(outcomes[0]) == "tool 'hang' timed out after 0.01 s"


def test_ten_hung_tools_do_not_starve_a_later_call(no_thread_leak: None) -> None:
    release = threading.Event()

    @tool(timeout=0.01)
    def stuck() -> str:
        release.wait(BOUND * 3)  # ignores its token: the worker really stays busy
        return "late"

    @tool
    def normal() -> str:
        return "ok"

    registry = registry_of(stuck, normal)
    with Runtime(max_workers=2) as rt:
        try:
            hung = [ToolCall(f"s{i}", "stuck", {}) for i in range(10)]
            outcomes = dispatch(hung, registry, rt)
            assert all("timed out" in error_of(o) for o in outcomes)
            box: list[list[ToolOutcome]] = []
            worker = threading.Thread(
                target=lambda: box.append(dispatch([ToolCall("n", "normal", {})], registry, rt))
            )
            worker.start()
            worker.join(BOUND)
            assert box, "a normal call starved behind hung tools"
            assert box[0][0].message.content == "ok"
        finally:
            release.set()


def test_timeout_counts_from_start_not_from_submission(no_thread_leak: None) -> None:
    never = threading.Event()

    @tool
    def slow() -> str:
        # Holds the only worker for longer than quick's whole budget.
        never.wait(1.0)
        return "slow"

    @tool(timeout=0.5)
    def quick() -> str:
        return "quick"

    registry = registry_of(slow, quick)
    with Runtime(max_workers=1) as rt:
        calls = [ToolCall("1", "slow", {}), ToolCall("2", "quick", {})]
        outcomes = dispatch(calls, registry, rt)
    assert [o.message.content for o in outcomes] == ["slow", "quick"]


def test_a_queued_call_that_overruns_times_out_once_it_started(no_thread_leak: None) -> None:
    # The dispatcher waits for the running call's far deadline; the queued
    # call's nearer one, known only once it starts, must wake it.
    release = threading.Event()

    @tool(timeout=BOUND * 3)
    def first(ctx: ToolContext) -> str:
        ctx.cancel.wait(0.2)  # holds the only worker for a while
        return "first"

    @tool(timeout=0.05)
    def hang(ctx: ToolContext) -> str:
        release.wait(BOUND)
        return "late"

    registry = registry_of(first, hang)
    with Runtime(max_workers=1) as rt:
        try:
            started = time.monotonic()
            calls = [ToolCall("1", "first", {}), ToolCall("2", "hang", {})]
            outcomes = dispatch(calls, registry, rt)
            took = time.monotonic() - started
        finally:
            release.set()
    assert outcomes[0].message.content == "first"
    assert error_of(outcomes[1]) == "tool 'hang' timed out after 0.05 s"
    assert took < BOUND  # not at first's deadline (3 x BOUND)


def test_a_call_ending_after_another_timed_out_ends_the_dispatch(runtime: Runtime) -> None:
    # The dispatcher gives up on the hung call, which stays hung; the other call
    # ends after that and is the last one waited for, not at its far deadline.
    may_end, release = threading.Event(), threading.Event()

    @tool(timeout=0.05)
    def hang(ctx: ToolContext) -> str:
        ctx.cancel.wait(BOUND)  # cancelled as it times out
        may_end.set()
        release.wait(BOUND)
        return "late"

    @tool(timeout=BOUND * 3)
    def waits(ctx: ToolContext) -> str:
        may_end.wait(BOUND)
        return "done"

    started = time.monotonic()
    calls = [ToolCall("h", "hang", {}), ToolCall("w", "waits", {})]
    try:
        outcomes = dispatch(calls, registry_of(hang, waits), runtime)
    finally:
        release.set()
    assert time.monotonic() - started < BOUND  # not at waits' deadline (3 x BOUND)
    assert error_of(outcomes[0]) == "tool 'hang' timed out after 0.05 s"
    assert outcomes[1].message.content == "done"


def test_cancelling_the_dispatch_cancels_running_calls_and_raises(runtime: Runtime) -> None:
    started = threading.Event()
    token_seen = threading.Event()

    @tool
    def wait_forever(ctx: ToolContext) -> str:
        started.set()
        if ctx.cancel.wait(BOUND):
            token_seen.set()
        return "late"

    source = CancellationSource()
    canceller = threading.Thread(target=lambda: started.wait(BOUND) and source.cancel())
    canceller.start()
    calls = [ToolCall("w", "wait_forever", {})]
    with pytest.raises(CancelledError) as info:
        dispatch(calls, registry_of(wait_forever), runtime, cancel=source)
    canceller.join(BOUND)
    assert info.value.operation == "tool dispatch"
    assert token_seen.wait(BOUND)
    (outcome,) = cancelled_outcomes(calls)
    assert outcome.message.tool_call_id == "w"
    assert error_of(outcome) == "tool 'wait_forever' was cancelled"


def test_an_already_cancelled_dispatch_runs_nothing(runtime: Runtime) -> None:
    ran: list[bool] = []

    @tool
    def f() -> None:
        ran.append(True)

    source = CancellationSource()
    source.cancel()
    with pytest.raises(CancelledError):
        dispatch([ToolCall("x", "f", {})], registry_of(f), runtime, cancel=source)
    assert ran == []


def test_results_over_the_cap_are_cut_on_a_utf8_boundary(runtime: Runtime) -> None:
    @tool
    def big() -> str:
        return "é" * 100

    @tool
    def big_error() -> str:
        raise ValueError("€" * 100)

    calls = [ToolCall("b", "big", {}), ToolCall("e", "big_error", {})]
    ok, bad = dispatch(calls, registry_of(big, big_error), runtime, max_result_bytes=11)
    assert ok.message.content == "ééééé\n…[truncated, original size 200 bytes]"
    assert ok.result.content == "é" * 100  # the tool's own result is kept whole
    assert (
        error_of(bad)
        == "tool 'big_error' failed: ValueError:\n…[truncated, original size 312 bytes]"
    )


def test_structured_results_are_kept_in_the_outcome(runtime: Runtime) -> None:
    @tool
    def info() -> dict[str, int]:
        return {"a": 1}

    (outcome,) = dispatch([ToolCall("i", "info", {})], registry_of(info), runtime)
    assert outcome.result.structured == {"a": 1}
    assert outcome.message.content == '{"a": 1}'


def test_async_tools_run_in_parallel_too(runtime: Runtime) -> None:
    barrier = threading.Barrier(2)

    async def meet() -> str:
        barrier.wait(BOUND)
        return "met"

    registry = registry_of(make_tool(meet))
    calls = [ToolCall("a", "meet", {}), ToolCall("b", "meet", {})]
    assert [o.message.content for o in dispatch(calls, registry, runtime)] == ["met", "met"]


class _Where(Tool):
    """Reports the thread it ran in; ``inline`` is set per instance's class."""

    def __init__(self, name: str) -> None:
        self._schema = ToolSchema(name, "", {"type": "object", "additionalProperties": False})

    @property
    def schema(self) -> ToolSchema:
        return self._schema

    def invoke(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(threading.current_thread().name)


class _InlineWhere(_Where):
    inline = True


def test_an_inline_tool_runs_in_the_dispatching_thread_beside_pooled_calls(
    runtime: Runtime,
) -> None:
    registry = registry_of(_Where("pooled"), _InlineWhere("inline"))
    calls = [
        ToolCall("1", "pooled", {}),
        ToolCall("2", "inline", {}),
        ToolCall("3", "inline", {"x": 1}),
    ]
    pooled, inline, invalid = dispatch(calls, registry, runtime)
    assert pooled.message.content != threading.current_thread().name
    assert inline.message.content == threading.current_thread().name
    assert "invalid arguments" in error_of(invalid)  # still checked against its schema first
