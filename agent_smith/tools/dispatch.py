"""Run one model turn's tool calls in parallel, each with its own timeout.

Every call is checked first (known tool, parseable arguments, arguments that
fit the schema); a call that fails a check gets an error message without
running. The others go to the runtime's pool for the caller's depth at once,
except a tool marked ``inline`` (one that returns at once, such as typed
output's ``final_result``), which runs in the dispatching thread.
Each call's timeout counts from when a worker starts it, so a call queued
behind others at a busy depth does not time out in the queue, and stops
while the call waits for a person (:mod:`.person_wait`: a sub-agent's
approval, an MCP server's URL-mode elicitation); such a wait has its own
deadline, ``person_timeout``. A call that
overruns has its token cancelled and its worker abandoned (the pool grows by
one until it returns), so hung tools never starve later calls.

The dispatching thread sleeps until every call has ended, the next deadline
comes, or the dispatch is cancelled (:class:`_Wake`). It is not woken by each
call that ends, nor by a call that starts after one whose deadline it waits
for already and with the same timeout: each wake-up is a thread switch,
which on a busy machine costs more than a quick tool.

Outcomes come back in the order of ``calls`` (some chat templates need the
tool messages in ``tool_calls`` order). Every failure of a single call becomes
an error tool message with compact JSON content ``{"error":true,"message":...}``;
only cancellation of the whole dispatch raises.

Each call that runs is observed (:mod:`agent_smith.observer`: with tracing, its
``execute_tool`` span), current on its worker; a call that overruns ends its
observation as it is given up.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from .._internal import json_input
from .._internal.text import truncate_utf8
from ..base.cancellation import CancellationSource, CancellationToken
from ..errors import CancelledError
from ..messages import ToolCall, ToolMessage
from ..observer import NO_TOOL, ToolObservation, get_observer
from ..steps import ToolStep, current_steps
from .base import CallingAgent, Tool, ToolContext, ToolResult
from .function import describe_exception
from .person_wait import DEFAULT_PERSON_TIMEOUT, WaitClock, current_clock
from .registry import ToolRegistry
from .validation import validation_error

if TYPE_CHECKING:
    from .._internal.pool import WorkerPool
    from ..runtime import Runtime

log = logging.getLogger("agent_smith.tool")

_EXCERPT_BYTES = 200


@dataclass(frozen=True)
class ToolOutcome:
    """One call, what the tool returned, and the message that goes into history.

    ``result`` is the tool's own result (or a synthesised error result);
    ``message.content`` is the truncated text, compact JSON for errors.
    """

    call: ToolCall
    result: ToolResult
    message: ToolMessage


def error_content(message: str, **flags: bool) -> str:
    """The compact JSON error body sent to the model (``flags`` such as ``denied=True``)."""
    return json.dumps(
        {"error": True, **flags, "message": message}, ensure_ascii=False, separators=(",", ":")
    )


def error_outcome(
    call: ToolCall, message: str, *, max_result_bytes: int | None = None, **flags: bool
) -> ToolOutcome:
    """An error outcome for ``call`` whose tool message carries ``message`` (and ``flags``)."""
    if max_result_bytes is not None:
        message = truncate_utf8(message, max_result_bytes)
    content = error_content(message, **flags)
    return ToolOutcome(
        call,
        ToolResult(message, is_error=True),
        ToolMessage(call.id, call.name, content, is_error=True),
    )


def cancelled_outcomes(calls: Sequence[ToolCall]) -> list[ToolOutcome]:
    """An error outcome per call saying it was cancelled.

    After :func:`dispatch_tool_calls` raised ``CancelledError`` the agent
    appends these messages so the history keeps a result for every call.
    """
    return [_cancelled(call) for call in calls]


def dispatch_tool_calls(
    calls: Sequence[ToolCall],
    registry: ToolRegistry,
    *,
    runtime: Runtime,
    depth: int,
    cancel: CancellationToken,
    default_timeout: float,
    max_result_bytes: int,
    agent: CallingAgent | None = None,
    person_timeout: float = DEFAULT_PERSON_TIMEOUT,
) -> list[ToolOutcome]:
    """Run ``calls`` concurrently on ``runtime.pool(depth)``; outcomes in ``calls`` order.

    ``agent`` (the caller) is passed to each tool as ``ToolContext.agent``.
    ``person_timeout``: how long one wait for a person may last (the call's
    own timeout stops meanwhile).
    Raises ``CancelledError`` (operation ``"tool dispatch"``) promptly when
    ``cancel`` fires; every running call's token is cancelled first.
    """
    cancel.raise_if_cancelled("tool dispatch")
    outcomes: list[ToolOutcome | None] = [None] * len(calls)
    running: dict[int, _Running] = {}
    wake: _Wake | None = None  # made with the first call that goes to the pool
    pool = runtime.pool(depth) if calls else None
    parent = current_clock()  # a call made inside a call (a sub-agent's) holds its parent too
    log.debug("dispatching %d tool call(s) at depth %d", len(calls), depth)
    # Every call is checked before the first one starts: a worker started
    # early would only compete with the checks for the GIL.
    checked = [check_call(call, registry) for call in calls]
    steps = current_steps()  # reserved in call order, here, before any call starts
    for index, (call, (tool, problem)) in enumerate(zip(calls, checked, strict=True)):
        if tool is None:
            log.debug("tool call %s (%s) rejected: %s", call.id, call.name, problem)
            get_observer().on_tool_rejected(call, problem, runtime)
            outcomes[index] = error_outcome(call, problem, max_result_bytes=max_result_bytes)
            continue
        options = registry.options(call.name)
        timeout = options.timeout or default_timeout
        step = steps.tool(call, idempotent=options.idempotent)
        run = _Running(call, tool, timeout, CancellationSource(cancel), WaitClock(parent), step)
        if tool.inline:  # returns at once (final_result): no thread hop to the pool
            ran: Future[ToolResult] = Future()
            ran.set_result(_invoke(run, runtime, depth, agent, None))
            outcomes[index] = _finish(run, ran, max_result_bytes)
            run.source.detach()
            continue
        assert pool is not None
        log.debug("tool call %s (%s) submitted, timeout %g s", call.id, call.name, timeout)
        wake = wake or _Wake()
        run.clock.listen(wake.event.set)  # a person answered: look again
        run.future = pool.submit(_invoke, run, runtime, depth, agent, wake)
        wake.runs.append(run)
        running[index] = run
    if wake is not None:
        assert pool is not None
        for run in wake.runs:  # once all are listed, so the last to end knows it is
            assert run.future is not None
            run.future.add_done_callback(wake.ended)
        unregister = cancel.on_cancel(wake.event.set)
        try:
            _wait(running, outcomes, pool, cancel, wake, max_result_bytes, person_timeout)
        finally:
            unregister()
            wake.runs = []  # the futures' callbacks hold it: no reference cycle left
            for run in running.values():
                run.source.detach()
    return [outcome for outcome in outcomes if outcome is not None]


class _Wake:
    """When the dispatching thread must look at its calls again.

    It looks by :attr:`until` unaided (a deadline of a started call, or
    never); it is woken before that by a call that starts with an earlier
    deadline, by the last call to end (or the last but those it gave up
    on), and by cancellation.
    """

    __slots__ = ("event", "runs", "until")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.runs: list[_Running] = []  # the calls submitted
        self.until = math.inf  # inf while the dispatcher has not looked at the calls

    def started(self, run: _Running) -> None:
        """``run`` started (its ``started_at`` set): wake the dispatcher if it would look late."""
        assert run.started_at is not None
        if run.started_at + run.timeout < self.until:
            self.event.set()

    def ended(self, _future: Future[ToolResult]) -> None:
        """A call ended: wake the dispatcher if it was the last one it waits for."""
        # The last call to end sees every other one ended (or given up).
        if all(run.given_up or (run.future is not None and run.future.done()) for run in self.runs):
            self.event.set()


class _Running:
    """Book-keeping for one submitted call."""

    __slots__ = (
        "call",
        "clock",
        "future",
        "given_up",
        "source",
        "span",
        "started_at",
        "step",
        "timeout",
        "tool",
    )

    def __init__(
        self,
        call: ToolCall,
        tool: Tool,
        timeout: float,
        source: CancellationSource,
        clock: WaitClock,
        step: ToolStep,
    ) -> None:
        self.call = call
        self.tool = tool
        self.timeout = timeout
        self.source = source
        self.clock = clock  # held while the call waits for a person
        self.step = step  # runs the call, or replays its recorded result (agent_smith.steps)
        self.started_at: float | None = None
        self.future: Future[ToolResult] | None = None
        self.given_up = False  # timed out: the dispatcher no longer waits for it
        self.span: ToolObservation = NO_TOOL  # set by the worker as the call starts


def check_call(call: ToolCall, registry: ToolRegistry) -> tuple[Tool | None, str]:
    """The tool ``call`` may run, or None and why not (unknown tool, bad arguments)."""
    tool = registry.find(call.name)
    if tool is None:
        known = ", ".join(registry.names()) or "none"
        return None, f"unknown tool {call.name!r}; available tools: {known}"
    if call.invalid_arguments is not None:
        excerpt = truncate_utf8(call.invalid_arguments, _EXCERPT_BYTES)
        return None, f"tool {call.name!r}: arguments are not a valid JSON object: {excerpt}"
    problem = validation_error(tool.schema.parameters, call.arguments)
    if problem is not None:
        return None, f"tool {call.name!r}: invalid arguments: {problem}"
    return tool, ""


def _invoke(
    run: _Running, runtime: Runtime, depth: int, agent: CallingAgent | None, wake: _Wake | None
) -> ToolResult:
    with get_observer().on_tool_start(run.call, run.tool, runtime) as span:
        run.span = span
        return span.finish(_call_tool(run, runtime, depth, agent, wake))


def _call_tool(
    run: _Running, runtime: Runtime, depth: int, agent: CallingAgent | None, wake: _Wake | None
) -> ToolResult:
    run.started_at = time.monotonic()  # the call's clock starts now
    if wake is not None:
        wake.started(run)
    ctx = ToolContext(
        cancel=run.source.token,
        budget=run.timeout,
        call_id=run.call.id,
        logger=log,
        runtime=runtime,
        depth=depth,
        agent=agent,
    )
    return run.step(partial(run.clock.run, partial(_attempt, run, ctx)))


def _attempt(run: _Running, ctx: ToolContext) -> ToolResult:
    """Run the tool: its result, or the error result the model sees (what a step records)."""
    try:
        result = run.tool.invoke(run.call.arguments, ctx)
    except Exception as err:
        log.debug("tool %s raised", run.call.name, exc_info=True)
        run.span.raised(err)
        return ToolResult(describe_exception(err), is_error=True)
    if not isinstance(result, ToolResult):
        return ToolResult(f"returned {type(result).__name__}, not a ToolResult", is_error=True)
    return result


def _wait(
    running: dict[int, _Running],
    outcomes: list[ToolOutcome | None],
    pool: WorkerPool,
    cancel: CancellationToken,
    wake: _Wake,
    max_result_bytes: int,
    person_timeout: float,
) -> None:
    pending = dict(running)
    while pending:
        wake.until = math.inf  # a call that starts while we look wakes us
        wake.event.clear()  # anything that happens after this sets it again
        gave_up = False
        if cancel.cancelled:
            for run in pending.values():
                run.source.cancel()
                assert run.future is not None
                pool.abandon(run.future)
                run.span.abandon(timed_out=False)
            log.debug("tool dispatch cancelled with %d call(s) unfinished", len(pending))
            raise CancelledError("tool dispatch was cancelled", operation="tool dispatch")
        now = time.monotonic()
        next_deadline = math.inf
        for index, run in list(pending.items()):
            assert run.future is not None
            if run.future.done():
                outcomes[index] = _finish(run, run.future, max_result_bytes)
                del pending[index]
                continue
            if run.started_at is None:
                continue  # still queued: its clock has not started
            asking = run.clock.holding_since()
            if asking is not None:  # waiting for a person: the wait's own deadline
                deadline = asking + person_timeout
            else:
                deadline = run.started_at + run.timeout + run.clock.held()
            if now < deadline:
                next_deadline = min(next_deadline, deadline)
                continue
            run.given_up = True
            gave_up = True
            run.source.cancel()
            pool.abandon(run.future)
            run.span.abandon(timed_out=True)
            log.debug("tool call %s (%s) timed out", run.call.id, run.call.name)
            if asking is not None:
                why = f"waited over {person_timeout:g} s for a person to answer"
            else:
                why = f"timed out after {run.timeout:g} s"
            outcomes[index] = error_outcome(run.call, f"tool {run.call.name!r} {why}")
            del pending[index]
        if pending and not gave_up:
            wake.until = next_deadline
            wake.event.wait(min(max(0.0, next_deadline - now), threading.TIMEOUT_MAX))
        # After a give-up, look again before waiting: a call that ended meanwhile
        # did not know it was the last one waited for.


def _finish(run: _Running, future: Future[ToolResult], max_result_bytes: int) -> ToolOutcome:
    call = run.call
    if future.cancelled():
        return _cancelled(call)
    error = future.exception()
    if error is not None:  # only a BaseException escapes _invoke
        return error_outcome(call, f"tool {call.name!r} failed: {describe_exception(error)}")
    result = future.result()
    log.debug("tool call %s (%s) finished, error=%s", call.id, call.name, result.is_error)
    if not result.is_error:
        content = result.message_content(truncate_utf8(result.content, max_result_bytes))
        return ToolOutcome(call, result, ToolMessage(call.id, call.name, content))
    if error_payload(result.content) is not None:
        # Already our compact error shape (a sub-agent's, say): do not wrap twice.
        content = result.content
        if len(content.encode("utf-8")) > max_result_bytes:
            content = error_content(truncate_utf8(content, max_result_bytes))
    else:
        text = truncate_utf8(result.content, max_result_bytes)
        content = error_content(f"tool {call.name!r} failed: {text}")
    return ToolOutcome(call, result, ToolMessage(call.id, call.name, content, is_error=True))


def _cancelled(call: ToolCall) -> ToolOutcome:
    return error_outcome(call, f"tool {call.name!r} was cancelled")


def error_payload(text: str) -> dict[str, object] | None:
    """The object of a compact error body (``{"error": true, ...}``), or None for other text."""
    if not text.startswith("{"):
        return None
    try:
        parsed = json_input.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and parsed.get("error") is True else None
