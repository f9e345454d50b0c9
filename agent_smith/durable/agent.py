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

import threading
import uuid
from collections.abc import Callable, Iterator

from dbos import DBOS, SetWorkflowID

from .._internal import json_input
from ..agent.agent import Agent
from ..agent.approvals import ApprovalRequested
from ..agent.events import AgentEvent, FinalAnswer
from ..base.history_json import message_to_dict
from ..base.json_fields import JsonObject
from ..errors import ConfigError, DurableStateError, ReplayMismatchError
from ..messages import AssistantMessage
from ..steps import use_steps
from .engine import DurableEngine, _turn_workflow
from .event_stream import close_events, read_events, write_event
from .journal import Entry
from .operations import CancelWatch
from .records import (
    TurnStart,
    decode_record,
    message_from,
    schema_digests,
    start_from,
    start_record,
)
from .steps import JournalSteps
from .waiting import await_decision, send_decision, waiting_calls

#: The journal key of a turn's start record.
START = "start"

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
        self._engine = engine
        self._lock = threading.Lock()  # one turn at a time on the agent's memory
        self._sinks: dict[str, EventSink] = {}
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
        """
        turn_id = turn_id or uuid.uuid4().hex
        if on_event is not None:
            self._sinks[turn_id] = on_event
        try:
            with SetWorkflowID(turn_id):
                text = _turn_workflow(self.name, message)
        finally:
            self._sinks.pop(turn_id, None)
        return _answer(text, turn_id)

    def result(self, turn_id: str) -> AssistantMessage:
        """The final answer of turn ``turn_id``, waiting while it runs (here or recovered)."""
        return _answer(DBOS.retrieve_workflow(turn_id).get_result(), turn_id)

    def decide(self, turn_id: str, call_id: str, decision: bool | str = True) -> None:
        """Decide about a call of turn ``turn_id`` that waits: True runs it, False or a
        reason denies it. Works from any process with an engine on the same database."""
        send_decision(DBOS, turn_id, call_id, decision)

    def waiting(self, turn_id: str) -> list[JsonObject]:
        """The calls of turn ``turn_id`` that wait for a decision now (``call_id``,
        ``tool``, ``arguments``), as the turn published them."""
        return waiting_calls(DBOS, turn_id)

    def events(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]:
        """Turn ``turn_id``'s event records from ``offset``, then live until it ends
        (:mod:`agent_smith.durable.event_stream`)."""
        return read_events(DBOS, turn_id, offset)

    def run_turn(self, turn_id: str, message: str) -> JsonObject:
        """The turn's body, run by its workflow: the final answer in the JSON of a history."""
        journal = self._engine.journal
        with self._lock:
            entries = journal.entries(turn_id)
            self._start(turn_id, entries.get(START))
            sink = self._sinks.get(turn_id)
            final: AssistantMessage | None = None
            with (
                use_steps(JournalSteps(journal, turn_id, entries)),
                CancelWatch(self.agent, turn_id),
            ):
                for event in self.agent.stream(message):
                    if self._event_stream:
                        write_event(event)
                    if sink is not None:
                        sink(event)
                    if type(event) is FinalAnswer:
                        final = event.message
                    elif type(event) is ApprovalRequested and not event.answered:
                        await_decision(event, self._approval_timeout)
            if self._event_stream:
                close_events()
            assert final is not None  # the loop only returns after a FinalAnswer
            return message_to_dict(final)

    def _start(self, turn_id: str, entry: Entry | None) -> None:
        """Record the turn's start, or check it and restore the history it started from."""
        agent = self.agent
        identity = agent._identity
        current = TurnStart(
            agent.name,
            f"{identity.provider}/{identity.model}",
            schema_digests(agent._tools.registry().schemas()),
            tuple(agent.memory.messages()),
        )
        if entry is None or entry.record is None:
            self._engine.journal.done(turn_id, START, start_record(current))
            return
        recorded = start_from(decode_record(entry.record, "start", turn_id, START), turn_id)
        difference = _difference(recorded, current)
        if difference is not None:
            raise ReplayMismatchError(
                f"durable turn {turn_id!r} cannot replay: {difference} changed since it was "
                "recorded",
                turn_id=turn_id,
                difference=difference,
            )
        agent.memory.clear()
        for past in recorded.history:
            agent.memory.append(past)


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
