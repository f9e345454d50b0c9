"""Durable chat turns: a conversation's turn as a DBOS workflow, its history in a session.

:class:`DurableChat` runs the turns of conversations kept in sessions (what
``WebApp(durable_chat=...)`` runs its chat turns on,
:mod:`agent_smith.web.durable_chat`). A turn is the workflow
:data:`CHAT_WORKFLOW`, started in the process that got the message under an
id the caller chooses (the web app: the conversation's session id, ``#``,
the turn). The agent is a fresh one per turn, from ``agent_factory()``,
without a session: the turn loads the conversation's history from the
session and records it as its start (:func:`~.agent.start_turn`), so a
recovered turn starts from the same history whatever the session holds by
then. Model requests and tool calls are journalled steps, as in any durable
turn. When the loop has its answer, the turn's new messages are appended to
the session once (:meth:`DurableChat._save`: the session's size before the
append is recorded first, so a run recovered in the middle appends only
what is missing), then the ``final`` record is written: a reader that has
the final answer finds it in the session too. A turn that fails or is
cancelled saves what it has the same way (the user's message, the steps
before the end), as a plain turn keeps them.

The turn's events go to its durable stream (:mod:`.event_stream`: agent-level
records, a reply's text whole, not per token). :meth:`DurableChat.follow`
reads it from any offset in any process with a launched engine. While the
stream is quiet a follower looks every :data:`CHECK_EVERY` seconds whether
the process running the turn is dead; if it is, the first follower to claim
that executor (a journal row, written once) calls
:meth:`DurableEngine.recover <agent_smith.durable.DurableEngine.recover>` for
it, and every follower reads on as the recovered turn writes the rest. A
process is known dead when its executor id is :func:`worker_executor_id`'s
(host, pid and start time) and that process no longer runs on this host:
one host (SQLite, or PostgreSQL with every worker on one host). A worker of
another host that died is not noticed: recover its executor by hand.

A call that needs approval is denied (:data:`NO_APPROVALS`): a durable chat
turn does not pause.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator

from dbos import DBOS, SetWorkflowID
from dbos._error import DBOSStreamTimeoutError

from .._internal import json_input
from ..agent.agent import Agent
from ..agent.approvals import ApprovalRequested
from ..agent.events import FinalAnswer
from ..base.history_json import message_to_dict
from ..base.json_fields import JsonObject
from ..errors import AgentBusyError, ConfigError, DurableStateError
from ..messages import Message, UserMessage
from ..sessions.binding import consistent_history
from ..sessions.lease import holder_is_dead, new_holder
from ..sessions.session import Session
from ..sessions.store import session_opener
from ..steps import use_steps
from .agent import START, restore, start_turn
from .engine import DurableEngine, chat_named
from .event_stream import EVENTS, write_event
from .journal import Entry, database_errors
from .operations import CancelWatch
from .records import message_from
from .steps import JournalSteps

log = logging.getLogger(__name__)

#: The name of the workflow every durable chat turn runs as.
CHAT_WORKFLOW = "agent_smith.durable_chat_turn"
#: How long a follower waits on a quiet stream before it checks the turn's process (seconds).
CHECK_EVERY = 1.0
#: How often a follower reads a stream whose database sends no notifications (SQLite).
READ_POLL = 0.05
#: How long saving a turn's messages waits for another turn that holds the session (seconds).
SAVE_WAIT = 30.0
#: The reason a durable chat turn gives the model for a call that needs approval.
NO_APPROVALS = "durable chat turns cannot wait for an approval"
#: The journal keys of a turn's save: the session's size before it, and its end.
SAVE_FROM, SAVED = "session.from", "session"
_ACTIVE = ("PENDING", "ENQUEUED")

AgentFactory = Callable[[], Agent]


def worker_executor_id() -> str:
    """An executor id for this process (``host:pid:starttime:tag``) whose death other
    processes on this host can notice: give it to each web worker's engine."""
    return new_holder()


class DurableChat:
    """The durable turns of conversations in ``sessions`` (see the module doc).

    ``agent_factory()`` builds the agent of one turn (no session on it: the
    turn loads the history); ``sessions`` is a SQLite file, a ``postgresql://``
    URL or a function from a session id to a :class:`Session`. Register it
    with ``engine`` before :meth:`DurableEngine.launch`; ``name`` tells this
    chat apart from others on the engine. Closing the engine closes the chat.
    """

    def __init__(
        self,
        engine: DurableEngine,
        agent_factory: AgentFactory,
        *,
        sessions: str | os.PathLike[str] | Callable[[str], Session],
        name: str = "chat",
    ) -> None:
        self.engine = engine
        self.name = name
        self._factory = agent_factory
        self._open, self._store = session_opener(sessions)
        engine.register_chat(self)

    def close(self) -> None:
        """Close the session store this chat opened from a path or URL (the engine's
        ``close()`` does it); calling it again does nothing."""
        if self._store is not None:
            self._store.close()

    def start(self, turn_id: str, session_id: str, message: UserMessage) -> None:
        """Start turn ``turn_id`` of the conversation ``session_id`` in this process."""
        said = json.dumps(message_to_dict(message), ensure_ascii=False)
        with database_errors(self.engine.url, turn_id), SetWorkflowID(turn_id):
            DBOS.start_workflow(_chat_workflow, self.name, session_id, said)

    def status(self, turn_id: str) -> str | None:
        """DBOS's status of turn ``turn_id`` (``PENDING``, ``SUCCESS``, ...); None if unknown."""
        with database_errors(self.engine.url, turn_id):
            found = DBOS.get_workflow_status(turn_id)
        return None if found is None else str(found.status)

    def running(self, prefix: str) -> str | None:
        """The newest turn whose id starts with ``prefix`` if it still runs and its messages
        are not in the session yet (after that, the conversation is free for the next);
        taken over if its process died."""
        with database_errors(self.engine.url):
            found = DBOS.list_workflows(
                workflow_id_prefix=prefix,
                name=CHAT_WORKFLOW,
                sort_desc=True,
                limit=1,
                load_input=False,
                load_output=False,
            )
        if not found or found[0].status not in _ACTIVE:
            return None
        turn_id = found[0].workflow_id
        if self.engine.journal.entry(turn_id, SAVED) is not None:
            return None
        self._take_over(turn_id)  # no one may follow it: a dead process's turn goes on here
        return turn_id

    def cancel(self, turn_id: str) -> None:
        """Cancel turn ``turn_id`` wherever it runs (its agent stops within a second)."""
        with database_errors(self.engine.url, turn_id):
            DBOS.cancel_workflow(turn_id)

    def follow(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]:
        """Turn ``turn_id``'s records from ``offset``, then live until it ends; a turn that
        ended without its ``final`` record ends with ``{"type": "failed", "message": ...}``.
        A dead process's turn is taken over on the way (see the module doc)."""
        position = offset
        while True:
            try:
                with database_errors(self.engine.url, turn_id):
                    for record in DBOS.read_stream(
                        turn_id,
                        EVENTS,
                        offset=position,
                        timeout_seconds=CHECK_EVERY,
                        polling_interval_sec=READ_POLL,
                    ):
                        position += 1
                        if isinstance(record, dict):
                            yield record
                            if record.get("type") == "final":
                                return
                break
            except DBOSStreamTimeoutError:
                self._take_over(turn_id)
        yield {"type": "failed", "message": self._failure(turn_id)}

    def run(self, turn_id: str, session_id: str, said: str) -> str:
        """One run of turn ``turn_id``, by its workflow: the final answer as JSON text."""
        journal = self.engine.journal
        message = message_from(json_input.loads(said), "message", turn_id)
        if not isinstance(message, UserMessage):
            raise DurableStateError(
                f"durable turn {turn_id!r}: its input is not a user message", turn_id=turn_id
            )
        entries = journal.entries(turn_id)
        with self._factory() as agent:
            if agent._session is not None:
                raise ConfigError(
                    f"agent {agent.name!r} of durable chat {self.name!r} has a session: the "
                    "durable turn loads the conversation itself"
                )
            if START not in entries:
                with self._open(session_id) as session:
                    restore(agent, tuple(consistent_history(session.load())))
            history = start_turn(journal, agent, turn_id, entries.get(START))
            try:
                final = self._loop(agent, message, turn_id, entries)
            finally:
                # Failed or cancelled too, as a plain turn keeps it: the user's message and
                # the steps before the end stay in the conversation.
                self._save(turn_id, session_id, agent.memory.messages()[len(history) :])
        write_event(final)  # the stream's end (see .event_stream)
        return json.dumps(message_to_dict(final.message), ensure_ascii=False)

    def _loop(
        self, agent: Agent, message: UserMessage, turn_id: str, entries: dict[str, Entry]
    ) -> FinalAnswer:
        """Run the turn's loop, its events to the stream but the final answer (written once
        the session has the turn); the final answer."""
        final: FinalAnswer | None = None
        journal = self.engine.journal
        with use_steps(JournalSteps(journal, turn_id, entries)), CancelWatch(agent, turn_id):
            for event in agent.stream(message):
                if type(event) is ApprovalRequested:
                    event.deny(NO_APPROVALS)
                elif type(event) is FinalAnswer:
                    final = event
                else:
                    write_event(event)
        assert final is not None  # the loop only returns after a FinalAnswer
        return final

    def _save(self, turn_id: str, session_id: str, said: list[Message]) -> None:
        """Append the turn's messages ``said`` to the session, once over every run."""
        journal = self.engine.journal
        if journal.entry(turn_id, SAVED) is not None:
            return
        with self._open(session_id) as session:
            _claim(session, turn_id)
            try:
                size = len(session.load().messages)
                journal.first(turn_id, SAVE_FROM, str(size))
                before = journal.entry(turn_id, SAVE_FROM)
                assert before is not None and before.record is not None
                saved = size - int(before.record)  # by an earlier run
                for message in said[saved:]:
                    session.append(message)
            finally:
                session.end_turn()
        journal.done(turn_id, SAVED, str(len(said)))

    def _take_over(self, turn_id: str) -> None:
        """Recover the executor running ``turn_id`` if it died, unless another did."""
        with database_errors(self.engine.url, turn_id):
            found = DBOS.get_workflow_status(turn_id)
        if found is None or found.status != "PENDING":
            return
        executor = found.executor_id or ""
        if executor == self.engine.executor_id or not holder_is_dead(executor):
            return
        me = self.engine.executor_id or ""
        if self.engine.journal.first(f"executor:{executor}", "recovered", me):
            log.warning(
                "durable chat turn %s: its executor %s died; taking over", turn_id, executor
            )
            self.engine.recover(executor)

    def _failure(self, turn_id: str) -> str:
        with database_errors(self.engine.url, turn_id):
            found = DBOS.get_workflow_status(turn_id)
        if found is None:
            return f"no durable turn {turn_id!r}"
        if found.status == "CANCELLED":
            return "the turn was cancelled"
        error = found.error
        return f"the turn failed: {error}" if error is not None else f"the turn {found.status}"


def _claim(session: Session, turn_id: str) -> None:
    """Hold ``session`` for the save, waiting at most :data:`SAVE_WAIT` for another turn."""
    pause = threading.Event()
    for _ in range(int(SAVE_WAIT / 0.1)):
        try:
            session.begin_turn()
            return
        except AgentBusyError:
            pause.wait(0.1)
    raise DurableStateError(
        f"durable turn {turn_id!r}: its conversation stayed busy for {SAVE_WAIT:.0f} s",
        turn_id=turn_id,
    )


@DBOS.workflow(name=CHAT_WORKFLOW)
def _chat_workflow(chat: str, session_id: str, said: str) -> str:
    """One durable chat turn of the chat named ``chat``: its final answer as JSON text."""
    turn_id = DBOS.workflow_id or ""
    return chat_named(chat, turn_id).run(turn_id, session_id, said)
