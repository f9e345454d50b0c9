"""The A2A server's tasks: one record per task, and a turn's events as the task's updates.

A task is one turn of the agent, in the conversation its ``contextId``
names (the web app's session for that context, so a context's history is
the conversation's). :class:`TaskBoard` keeps the process's tasks, each
owned by the user that created it: another user's task is not found.
:func:`run_task` runs a turn (or the rest of a paused one) and yields its
``StreamResponse`` objects while it keeps the record up to date, so a
``GetTask`` from another request sees the task as it goes:

* the task first, then a ``statusUpdate`` to ``TASK_STATE_WORKING``;
* the reply's text token by token as ``artifactUpdate`` chunks of one
  artifact (``append`` after the first, ``lastChunk`` on the final one);
* a ``statusUpdate`` (working) naming each tool call as it starts;
* the end, once the turn is over and its session closed (so the caller can
  send the context's next message as soon as it has it):
  ``TASK_STATE_COMPLETED`` with the final answer as the status message,
  ``TASK_STATE_INPUT_REQUIRED`` when calls wait for approval (the
  approvals in a data part, :mod:`agent_smith.a2a.wire`),
  ``TASK_STATE_CANCELED`` when cancelled (or the stream's client went away),
  ``TASK_STATE_FAILED`` with the error's one-line message otherwise.

Records live in this process (bounded: the oldest finished ones go first),
so a deployment with several worker processes routes a task's requests to
the process that made it, or runs one process with many threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack

from .._internal.closing import close_iterator
from ..a2a.wire import (
    AGENT,
    CANCELED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    INTERRUPTED,
    TERMINAL,
    WORKING,
    JsonObject,
    new_id,
    text_message,
    timestamp,
)
from ..agent.agent import Agent
from ..agent.events import FinalAnswer, ToolCallRequested
from ..base.paused_turn import ApprovalRequest
from ..llm.events import TokenDelta
from .stream import TurnFailed, TurnPaused, WebEvent

#: How many tasks a server keeps (finished ones are forgotten first).
MAX_TASKS = 1000
_CANCEL_WAIT = 30.0  # seconds a CancelTask waits for the turn to stop


class TaskRecord:
    """One task: its ids, owner, state, status message, artifact text and history."""

    def __init__(self, task_id: str, context: str, owner: str) -> None:
        self.id, self.context, self.owner = task_id, context, owner
        self.state = WORKING
        self.message: JsonObject | None = None
        self.text: list[str] = []
        self.history: list[JsonObject] = []
        self.updated = timestamp()
        self.agent: Agent | None = None  # while a turn runs: what CancelTask stops
        self.runs = 0  # turns started: a run's late clean-up must not touch the next one's
        self.cancel_requested = False
        self._lock = threading.RLock()  # taken by itself where no one waits (a token's chunk)
        self.changed = threading.Condition(self._lock)

    @property
    def settled(self) -> bool:
        """Final, or waiting for the caller: no turn runs."""
        return self.state in TERMINAL or self.state in INTERRUPTED

    def set_state(self, state: str, message: JsonObject | None = None) -> JsonObject:
        """Move to ``state``; the ``statusUpdate`` that says so.

        A final state is never left: once the task is completed, failed or
        cancelled, the update says that state (the first to come wins a race
        between a turn that ends and a CancelTask).
        """
        with self.changed:
            if self.state not in TERMINAL:
                self.state, self.message, self.updated = state, message, timestamp()
                if message is not None:
                    self.history.append(message)
                self.changed.notify_all()
            status = self.status()
        return {"statusUpdate": {"taskId": self.id, "contextId": self.context, "status": status}}

    def status(self) -> JsonObject:
        status: JsonObject = {"state": self.state, "timestamp": self.updated}
        if self.message is not None:
            status["message"] = self.message
        return status

    def snapshot(self, history_length: int | None = None) -> JsonObject:
        """The task as JSON (``history_length``: at most that many latest messages)."""
        with self.changed:
            task: JsonObject = {"id": self.id, "contextId": self.context, "status": self.status()}
            if self.text:
                task["artifacts"] = [self._artifact("".join(self.text))]
            history = self.history if history_length is None else self.history[-history_length:]
            if history_length != 0 and history:
                task["history"] = list(history)
        return task

    def _artifact(self, text: str) -> JsonObject:
        return {"artifactId": f"{self.id}-answer", "name": "answer", "parts": [{"text": text}]}

    def chunk(self, text: str, *, last: bool = False) -> JsonObject:
        """The ``artifactUpdate`` adding ``text`` to the answer (one per token: kept lean)."""
        with self._lock:
            append = bool(self.text)
            self.text.append(text)
        artifact = {"artifactId": f"{self.id}-answer", "name": "answer", "parts": [{"text": text}]}
        update = {
            "taskId": self.id,
            "contextId": self.context,
            "artifact": artifact,
            "append": append,
            "lastChunk": last,
        }
        return {"artifactUpdate": update}

    def wait_settled(self, timeout: float = _CANCEL_WAIT) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.settled, timeout)


class TaskBoard:
    """The tasks of this process, bounded (see the module doc). Thread-safe."""

    def __init__(self, limit: int = MAX_TASKS) -> None:
        self._tasks: OrderedDict[str, TaskRecord] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def create(self, owner: str, context: str) -> TaskRecord:
        record = TaskRecord(new_id(), context, owner)
        with self._lock:
            self._tasks[record.id] = record
            if len(self._tasks) > self._limit:
                for old in [r for r in self._tasks.values() if r.settled][: len(self._tasks) // 10]:
                    del self._tasks[old.id]
        return record

    def find(self, owner: str, task_id: str) -> TaskRecord | None:
        """The task, if ``owner`` made it (another user's task is as good as unknown)."""
        with self._lock:
            record = self._tasks.get(task_id)
        return record if record is not None and record.owner == owner else None

    def of(self, owner: str, context: str | None) -> list[TaskRecord]:
        """``owner``'s tasks, newest first (``context``: of that context only)."""
        with self._lock:
            records = list(self._tasks.values())
        return [
            r
            for r in reversed(records)
            if r.owner == owner and (context is None or r.context == context)
        ]


def run_task(
    record: TaskRecord,
    resources: ExitStack,
    agent: Agent,
    start: Callable[[], Iterator[WebEvent]],
) -> Generator[list[JsonObject], None, None]:
    """The task's ``StreamResponse`` objects while ``start()``'s turn runs (see the module doc).

    They come in lists of those ready at the same time (the task, its first
    status and what the turn's first event says; the answer's last chunk and
    the final status), which a stream sends in one write. ``resources`` (the
    session and ``agent``) are closed when the turn is over, before the final
    state goes out, or when the generator is closed early, which cancels the
    turn and the task.
    """
    with record.changed:
        record.runs += 1
        run = record.runs
        record.agent = agent
        record.state, record.message, record.text = WORKING, None, []
    events = start()
    ending: WebEvent | None = None
    try:
        # The task goes out with the turn's first event (the turn has started by then,
        # so a CancelTask from the caller that learns the task's id reaches it).
        group = [{"task": record.snapshot()}, record.set_state(WORKING)]
        for event in events:
            if record.cancel_requested:
                agent.cancel()
            if isinstance(event, TokenDelta):
                group.append(record.chunk(event.text))
            elif isinstance(event, ToolCallRequested):
                group.append(_tool_update(record, event))
            elif isinstance(event, _ENDINGS) and ending is None:
                ending = event
            if group:
                yield group
                group = []
        if group:  # a turn without a single event
            yield group
    finally:
        try:
            close_iterator(events)
        finally:
            resources.close()
            with record.changed:  # the end and the task's last state, at once for CancelTask
                ours = record.runs == run
                if ours:
                    record.agent = None
                final = list(_ending(record, ending)) if ours else []
    if final:
        yield final


_ENDINGS = (FinalAnswer, TurnPaused, TurnFailed)


def _tool_update(record: TaskRecord, event: ToolCallRequested) -> JsonObject:
    call = event.call
    note = text_message(f"calling {call.name}", role=AGENT, data={"toolCall": call.name})
    return {
        "statusUpdate": {
            "taskId": record.id,
            "contextId": record.context,
            "status": {"state": WORKING, "message": note, "timestamp": timestamp()},
        }
    }


def _ending(record: TaskRecord, event: WebEvent | None) -> Iterator[JsonObject]:
    """The last updates of a turn that ended with ``event`` (None: it was cut short)."""
    if isinstance(event, FinalAnswer):
        if record.text:
            yield record.chunk("", last=True)
        answer = event.message
        if not record.text and answer.content:  # an answer that was not streamed
            yield record.chunk(answer.content, last=True)
        yield record.set_state(
            COMPLETED,
            text_message(answer.content, role=AGENT, context_id=record.context, task_id=record.id),
        )
    elif isinstance(event, TurnPaused):
        yield record.set_state(INPUT_REQUIRED, _approval_message(record, event.requests))
    elif isinstance(event, TurnFailed):
        state = CANCELED if record.cancel_requested or event.code == "CancelledError" else FAILED
        yield record.set_state(
            state,
            text_message(event.message, role=AGENT, context_id=record.context, task_id=record.id),
        )
    elif not record.settled:  # closed early: the stream's client went away
        yield record.set_state(CANCELED, text_message("cancelled", role=AGENT))


def _approval_message(record: TaskRecord, requests: tuple[ApprovalRequest, ...]) -> JsonObject:
    lines = [f"- {r.tool_name} {r.arguments} (call {r.call_id})" for r in requests]
    text = (
        "Waiting for approval:\n" + "\n".join(lines) + "\nAnswer yes to run, anything else to deny "
        '(or send a data part {"decisions": {call id: true | false}}).'
    )
    approvals = [
        {
            "callId": r.call_id,
            "tool": r.tool_name,
            "arguments": r.arguments,
            "description": r.description,
            "agent": r.agent,
        }
        for r in requests
    ]
    return text_message(
        text,
        role=AGENT,
        context_id=record.context,
        task_id=record.id,
        data={"approvals": approvals},
    )
