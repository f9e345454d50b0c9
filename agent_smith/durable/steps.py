"""A durable turn's steps: run each once and record it, or replay what was recorded.

:class:`JournalSteps` is the :class:`~agent_smith.steps.TurnSteps` of a
durable turn. Its model (:class:`JournaledModel`) answers a request from the
journal when that request's reply is recorded (and the request is the one
recorded: a different one is a :class:`~agent_smith.errors.ReplayMismatchError`),
else asks the real model and records the reply before the loop sees it. Its
tool steps replay a recorded result, else mark the call started, run it and
record the result. A sub-agent's turn inside a call is a child workflow with
steps of its own (:mod:`~agent_smith.durable.subturns`).

A call marked started without a result was running when its process died: it
may or may not have had its effect. An idempotent tool runs again; any other
call gets the error result :data:`UNKNOWN_OUTCOME`, recorded like any other,
and the model decides what to do.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..errors import ReplayMismatchError
from ..llm.events import Finished, StreamEvent, response_events
from ..steps import ToolStep, TurnSteps, use_steps
from ..tools.base import ToolResult
from ..tools.dispatch import error_content
from .journal import DONE, Entry, Journal
from .records import (
    decode_record,
    reply_from,
    reply_record,
    request_digest,
    result_from,
    result_record,
)
from .subturns import run_subturn

if TYPE_CHECKING:
    from ..base.cancellation import CancellationToken
    from ..llm.model import ChatModel, ModelCapabilities
    from ..llm.request import LlmRequest, LlmResponse
    from ..messages import ToolCall

#: What a non-idempotent call that may have run before a crash tells the model.
UNKNOWN_OUTCOME = (
    "this call may or may not have happened: its process stopped while it ran and its "
    "result was not recorded; check before calling it again"
)


class JournalSteps(TurnSteps):
    """The steps of durable turn ``turn_id`` under ``prefix`` (``""`` for the turn itself)."""

    __slots__ = ("_entries", "_journal", "_models", "_prefix", "_tools", "_turn_id")

    def __init__(
        self, journal: Journal, turn_id: str, entries: dict[str, Entry], prefix: str = ""
    ) -> None:
        self._journal = journal
        self._turn_id = turn_id
        self._entries = entries  # what was recorded when the turn (re)started
        self._prefix = prefix
        self._models = itertools.count(1)
        self._tools = itertools.count(1)

    def model(self, llm: ChatModel) -> ChatModel:
        return JournaledModel(llm, self)

    def tool(self, call: ToolCall, *, idempotent: bool) -> ToolStep:
        key = f"{self._prefix}t{next(self._tools)}"

        def step(invoke: Callable[[], ToolResult]) -> ToolResult:
            return self._run_tool(key, invoke, idempotent)

        return step

    def subturn(self, run: Callable[[], ToolResult]) -> ToolResult:
        if not self._prefix:  # not inside a call: nothing to name a child workflow after
            return run()
        child_id = f"{self._turn_id}/{self._prefix[:-1]}"
        journal = self._journal

        def body() -> ToolResult:
            with use_steps(JournalSteps(journal, child_id, journal.entries(child_id))):
                return run()

        return run_subturn(child_id, body)

    def next_model_key(self) -> str:
        return f"{self._prefix}m{next(self._models)}"

    def recorded(self, key: str) -> Entry | None:
        return self._entries.get(key)

    def record(self, key: str, record: str) -> None:
        self._journal.done(self._turn_id, key, record)

    @property
    def turn_id(self) -> str:
        return self._turn_id

    def _run_tool(self, key: str, invoke: Callable[[], ToolResult], idempotent: bool) -> ToolResult:
        entry = self._entries.get(key)
        if entry is not None and entry.state == DONE and entry.record is not None:
            record = decode_record(entry.record, "result", self._turn_id, key)
            return result_from(record, self._turn_id, key)
        if entry is not None and not idempotent:  # started before a crash, result unknown
            result = ToolResult(error_content(UNKNOWN_OUTCOME, unknown_outcome=True), is_error=True)
            self.record(key, result_record(result))
            return result
        self._journal.started(self._turn_id, key)
        nested = JournalSteps(self._journal, self._turn_id, self._entries, f"{key}.")
        with use_steps(nested):  # a sub-agent's turn in this call: a child named after it
            result = invoke()  # a tool that raised gives its error result (the dispatcher's)
        self.record(key, result_record(result))
        return result


class JournaledModel:
    """``llm`` whose replies are recorded in, or replayed from, a durable turn's journal."""

    def __init__(self, llm: ChatModel, steps: JournalSteps) -> None:
        self._llm = llm
        self._steps = steps
        self._lock = threading.Lock()  # aside requests may come from a pool thread

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._llm.capabilities

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        key, digest, replayed = self._replay(request)
        if replayed is not None:
            return replayed
        response = self._llm.complete(request, cancel=cancel)
        self._steps.record(key, reply_record(response, digest))
        return response

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        key, digest, replayed = self._replay(request)
        if replayed is not None:
            yield from response_events(replayed)
            return
        for event in self._llm.stream(request, cancel=cancel):
            if isinstance(event, Finished):  # recorded before the loop sees the reply
                self._steps.record(key, reply_record(event.response, digest))
            yield event

    def _replay(self, request: LlmRequest) -> tuple[str, str, LlmResponse | None]:
        """This request's key, its digest, and its recorded reply if there is one."""
        steps = self._steps
        with self._lock:
            key = steps.next_model_key()
        digest = request_digest(request)
        entry = steps.recorded(key)
        if entry is None or entry.record is None:
            return key, digest, None
        record = decode_record(entry.record, "reply", steps.turn_id, key)
        response, recorded = reply_from(record, steps.turn_id, key)
        if recorded != digest:
            raise ReplayMismatchError(
                f"durable turn {steps.turn_id!r}: model request {key} differs from the "
                "recorded one (the history, tools or prompt changed since it was recorded)",
                turn_id=steps.turn_id,
                difference=f"request {key}",
            )
        return key, digest, response
