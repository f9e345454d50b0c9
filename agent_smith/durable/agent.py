"""A durable agent: turns that survive the death of the process running them.

:class:`DurableAgent` wraps an :class:`~agent_smith.Agent` registered with a
:class:`~agent_smith.durable.engine.DurableEngine`. Each :meth:`~DurableAgent.send`
is a DBOS workflow whose id is the turn's id (yours, or a new one): the agent
is the same object and runs its loop as always, with the steps of
:mod:`agent_smith.durable.steps` in force, so every model request and every
tool call (a sub-agent's included) is recorded before the turn goes on.

A turn starts by recording its start (the agent's name, model and tools, and
the history it starts from). A turn recovered by another process — DBOS re-runs
the workflow when the engine launches — restores that history, checks that
the agent is the one recorded (:class:`~agent_smith.errors.ReplayMismatchError`
otherwise) and runs the loop again: recorded steps replay without being sent
or run, the rest run, and the turn ends with the history an uncrashed run
would have had.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator

from dbos import DBOS, SetWorkflowID

from .._internal import json_input
from ..agent.agent import Agent
from ..agent.approvals import ApprovalRequested
from ..agent.events import AgentEvent, FinalAnswer
from ..base.history_json import message_to_dict
from ..base.json_fields import JsonObject
from ..errors import ApprovalRequired, ConfigError, DurableStateError, ReplayMismatchError
from ..messages import AssistantMessage, Message
from ..steps import use_steps
from .engine import TURN_WORKFLOW, DurableEngine, _turn_workflow
from .event_stream import close_events, event_record, note_run, read_events, write_event
from .journal import ANSWER, Entry, Journal
from .operations import CancelWatch
from .queues import enqueue
from .records import (
    TurnStart,
    decode_record,
    message_from,
    schema_digests,
    start_from,
    start_record,
)
from .steps import JournalSteps
from .waiting import (
    Waiting,
    answer_recorded,
    decide,
    pause,
    waiting_calls,
    waiting_calls_of,
)

#: The journal key of a turn's start record.
START = "start"
#: How often :meth:`DurableAgent.result` looks whether a paused turn has ended (seconds).
ANSWER_POLL = 0.1

EventSink = Callable[[AgentEvent], None]


class DurableAgent:
    """``agent``'s turns as durable workflows of ``engine`` (see the module doc).

    A call that needs approval and is not answered by ``on_event`` waits for
    :meth:`decide` (from any process), at most ``approval_timeout`` seconds if
    given, then it is denied (:mod:`agent_smith.durable.waiting`). The turn's
    events go to its durable stream (:mod:`agent_smith.durable.event_stream`)
    unless ``event_stream`` is False.
    One turn runs at a time on the agent (a second one waits). An agent with
    a session is refused (:class:`~agent_smith.errors.ConfigError`): a durable
    turn keeps its own record of the history it started from.
    """

    def __init__(
        self,
        agent: Agent,
        engine: DurableEngine,
        *,
        approval_timeout: float | None = None,
        event_stream: bool = True,
    ) -> None:
        if agent._session is not None:
            raise ConfigError(
                f"agent {agent.name!r} has a session: a durable turn keeps its own record of "
                "the history, use one or the other"
            )
        self.agent = agent
        self.engine = engine
        self._lock = threading.Lock()  # one turn at a time on the agent's memory
        self._sinks: dict[str, Sink] = {}
        self._approval_timeout = approval_timeout
        self._event_stream = event_stream
        engine.register(self)

    @property
    def name(self) -> str:
        return self.agent.name

    def send(
        self, message: str, *, turn_id: str | None = None, on_event: EventSink | None = None
    ) -> AssistantMessage:
        """Run one durable turn in this thread; its final answer.

        ``turn_id`` names the turn (a new id by default): sending again with the
        id of a finished turn returns its recorded answer without running it.
        ``on_event`` gets the turn's events as :meth:`Agent.stream` yields them.
        A turn that pauses for a decision ends its run at once; ``send`` then
        waits for the answer like :meth:`result` (:meth:`start` does not wait).
        """
        turn_id = turn_id or uuid.uuid4().hex
        if on_event is not None:
            self._sinks[turn_id] = Sink(on_event)
        try:
            with SetWorkflowID(turn_id):
                text = _turn_workflow(self.name, message)
            if not text:  # paused: a later run, after the decision, ends the turn
                return self.result(turn_id)
        finally:
            self._sinks.pop(turn_id, None)
        return _answer(text, turn_id)

    def start(self, message: str, *, turn_id: str | None = None, queue: str | None = None) -> str:
        """Start one durable turn on DBOS's executor and return its id at once; with
        ``queue``, enqueue it there for whichever process works that queue to run
        (:mod:`~agent_smith.durable.queues`)."""
        turn_id = turn_id or uuid.uuid4().hex
        if queue is not None:
            enqueue(self.engine.client, queue, TURN_WORKFLOW, turn_id, self.name, message)
            return turn_id
        with SetWorkflowID(turn_id):
            DBOS.start_workflow(_turn_workflow, self.name, message)
        return turn_id

    def result(self, turn_id: str, *, timeout: float | None = None) -> AssistantMessage:
        """The final answer of turn ``turn_id``, waiting while it runs (here or recovered)
        or waits for a decision (at most ``timeout`` seconds if given:
        :class:`~agent_smith.errors.DurableStateError` after that)."""
        return _answer(await_answer(self.engine, turn_id, timeout), turn_id)

    def decide(self, turn_id: str, call_id: str, decision: bool | str = True) -> None:
        """Decide about a call of turn ``turn_id`` that waits: True runs it, False or a
        reason denies it. Works from any process with an engine on the same database;
        the turn goes on in a launched engine (:mod:`agent_smith.durable.waiting`)."""
        decide(self.engine.journal, self.engine.client, turn_id, call_id, decision)

    def waiting(self, turn_id: str) -> list[JsonObject]:
        """The calls of turn ``turn_id`` that wait for a decision now (``call_id``,
        ``tool``, ``arguments``)."""
        return waiting_calls(self.engine.journal, turn_id)

    def events(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]:
        """Turn ``turn_id``'s event records from ``offset``, then live until it ends
        (:mod:`agent_smith.durable.event_stream`)."""
        return read_events(DBOS, self.engine.journal, turn_id, offset)

    def run_turn(self, turn_id: str, message: str) -> JsonObject | None:
        """One run of the turn, by its workflow: the final answer in the JSON of a history,
        or None when the turn paused for a decision."""
        journal = self.engine.journal
        with self._lock:
            entries = journal.entries(turn_id)
            answered = entries.get(ANSWER)
            if answered is not None and answered.record is not None:
                return message_to_dict(_answer(answered.record, turn_id))  # a late run
            run_id = DBOS.workflow_id or turn_id  # this run's workflow: the turn's, or a later one
            note_run(journal, turn_id, run_id, entries)
            history = start_turn(journal, self.agent, turn_id, entries.get(START))
            sink = self._sinks.get(turn_id)
            if sink is not None:
                sink.rewind()
            final: AssistantMessage | None = None
            with (
                use_steps(JournalSteps(journal, turn_id, entries)),
                CancelWatch(self.agent, run_id),
            ):
                try:
                    for event in self.agent.stream(message):
                        if self._event_stream:
                            write_event(event)
                        asks = event if type(event) is ApprovalRequested else None
                        if asks is not None:  # decided already (a run after the decision)?
                            answer_recorded(journal, turn_id, asks)
                        if sink is not None:
                            sink.deliver(event)
                        if type(event) is FinalAnswer:
                            final = event.message
                        elif asks is not None and not asks.answered:
                            asks.defer()  # the turn pauses: this run ends
                except ApprovalRequired as paused:
                    waiting = Waiting(
                        self.name,
                        message,
                        waiting_calls_of(paused.requests),
                        self._approval_timeout,
                    )
                    pause(journal, self.engine.client, turn_id, waiting)
                    restore(self.agent, history)  # the memory as it was before this turn
                    if self._event_stream:
                        close_events()
                    return None
            assert final is not None  # the loop only returns after a FinalAnswer
            answer = message_to_dict(final)
            if run_id != turn_id:  # a later run: the turn's first run returned "" long ago
                journal.done(turn_id, ANSWER, json.dumps(answer, ensure_ascii=False))
            return answer  # a first run's answer is its workflow's output


def start_turn(
    journal: Journal, agent: Agent, turn_id: str, entry: Entry | None
) -> tuple[Message, ...]:
    """Record the start of turn ``turn_id`` (``agent``'s memory is the history it starts
    from), or check the recorded one (``entry``) and restore its history; that history."""
    identity = agent._identity
    current = TurnStart(
        agent.name,
        f"{identity.provider}/{identity.model}",
        schema_digests(agent._tools.registry().schemas()),
        tuple(agent.memory.messages()),
    )
    if entry is None or entry.record is None:
        journal.done(turn_id, START, start_record(current))
        return current.history
    recorded = start_from(decode_record(entry.record, "start", turn_id, START), turn_id)
    difference = _difference(recorded, current)
    if difference is not None:
        raise ReplayMismatchError(
            f"durable turn {turn_id!r} cannot replay: {difference} changed since it was recorded",
            turn_id=turn_id,
            difference=difference,
        )
    restore(agent, recorded.history)
    return recorded.history


def restore(agent: Agent, history: tuple[Message, ...]) -> None:
    """Make ``history`` the whole of ``agent``'s memory."""
    memory = agent.memory
    memory.clear()
    for past in history:
        memory.append(past)


class Sink:
    """A ``send``'s ``on_event`` over the runs of its turn: each event once.

    A run after a decision replays the turn from its start, with the same
    agent-level events (those of the durable stream) in the same order; the
    sink passes on only what comes after the events it passed on before (a
    replayed reply's token deltas included, which need not be cut the same way).
    """

    __slots__ = ("_delivered", "_on_event", "_seen")

    def __init__(self, on_event: EventSink) -> None:
        self._on_event = on_event
        self._delivered = 0  # agent-level events passed on so far, over every run
        self._seen = 0  # agent-level events of the current run

    def deliver(self, event: AgentEvent) -> None:
        fresh = self._seen >= self._delivered
        if event_record(event) is not None:
            self._seen += 1
            self._delivered = max(self._delivered, self._seen)
        if fresh:
            self._on_event(event)

    def rewind(self) -> None:
        """A new run begins: it replays from the turn's start."""
        self._seen = 0


def _difference(recorded: TurnStart, current: TurnStart) -> str | None:
    """What differs between the recorded agent and this one (its history aside)."""
    if recorded.agent != current.agent:
        return f"the agent's name ({recorded.agent!r}, now {current.agent!r})"
    if recorded.model != current.model:
        return f"the model ({recorded.model!r}, now {current.model!r})"
    if recorded.tools != current.tools:
        gone = sorted(set(recorded.tools) - set(current.tools))
        new = sorted(set(current.tools) - set(recorded.tools))
        changed = sorted(
            n
            for n in set(recorded.tools) & set(current.tools)
            if recorded.tools[n] != current.tools[n]
        )
        parts = [
            f"{what}: {', '.join(names)}"
            for what, names in (("gone", gone), ("new", new), ("changed", changed))
            if names
        ]
        return f"the tool set ({'; '.join(parts)})"
    return None


def _answer(text: object, turn_id: str) -> AssistantMessage:
    if not isinstance(text, str):
        raise DurableStateError(
            f"durable turn {turn_id!r}: its result is not JSON text", turn_id=turn_id
        )
    try:
        data = json_input.loads(text)
    except ValueError as err:
        raise DurableStateError(
            f"durable turn {turn_id!r}: its result is not JSON", turn_id=turn_id
        ) from err
    message = message_from(data, "answer", turn_id)
    if not isinstance(message, AssistantMessage):
        raise DurableStateError(
            f"durable turn {turn_id!r}: its result is not an answer", turn_id=turn_id
        )
    return message


def await_answer(engine: DurableEngine, turn_id: str, timeout: float | None) -> object:
    """Turn ``turn_id``'s answer as JSON text: its first run's result, or once it paused,
    the answer a later run records (a later run that failed raises its error)."""
    text: object = DBOS.retrieve_workflow(turn_id).get_result()
    limit = None if timeout is None else time.monotonic() + timeout
    pause = threading.Event()
    while not text:
        entry = engine.journal.entry(turn_id, ANSWER)
        if entry is not None:
            return entry.record
        for failed in engine.client.list_workflows(
            workflow_id_prefix=f"{turn_id}/", status=["ERROR", "CANCELLED"], load_input=False
        ):
            DBOS.retrieve_workflow(failed.workflow_id).get_result()  # raises the run's error
        if limit is not None and time.monotonic() > limit:
            raise DurableStateError(
                f"durable turn {turn_id!r} still waits for a decision after {timeout:g} s",
                turn_id=turn_id,
            )
        pause.wait(ANSWER_POLL)
    return text
