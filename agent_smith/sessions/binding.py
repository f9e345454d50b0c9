"""An agent's link to its session: load the history, record each message, claim each turn.

:class:`SessionBinding` is all :class:`~agent_smith.agent.agent.Agent` knows of
sessions. Built with the agent, it loads the stored conversation into the
agent's memory through :func:`~agent_smith.memory.strip_orphans` (a worker
killed between an assistant's tool calls and their results left calls
without results: they are not sent again), except the tool calls a stored
paused turn waits on. Each turn claims the session
(``begin_turn``), reloads the memory first if someone else wrote to the
session since (another worker's agent on the same conversation), and writes
every message the turn records as it is recorded.

A turn that pauses for approvals stores its
:class:`~agent_smith.base.paused_turn.PausedTurn` with the history (``pause``),
so any worker's agent on the session can resume it; the first message a
later turn records (the resumed calls' results, or the denied results of a
pause abandoned by a new ``send``) makes that state obsolete and drops it.

The session is the source of truth: when a write fails mid-turn (the store
broke, or the turn lost its lease) the turn ends with that error, later
messages of the same turn stay in memory only, and the next turn reloads
the memory from the session.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..memory import Memory, compacted_view, compaction_record, strip_orphans
from ..messages import AssistantMessage, Message
from .session import Session, SessionState

if TYPE_CHECKING:
    from ..base.paused_turn import PausedTurn

log = logging.getLogger(__name__)


class SessionBinding:
    """Keeps one agent's memory and its session in step (see the module doc)."""

    __slots__ = ("_memory", "_paused", "_revision", "session")

    def __init__(self, session: Session, memory: Memory) -> None:
        if memory.size():
            raise ConfigError(
                f"the memory already holds {memory.size()} messages; with a session the "
                "history comes from the session (append to it instead)"
            )
        self.session = session
        self._memory = memory
        self._revision: int | None = None  # None: unknown, reload before the next turn
        self._paused: str | None = None  # the stored paused turn's JSON
        self._load()

    def begin_turn(self) -> None:
        """Claim the session (AgentBusyError if another turn has it); catch up if it moved."""
        revision = self.session.begin_turn()
        if revision != self._revision:
            try:
                self._load()
            except BaseException:
                self.session.end_turn()
                raise

    def record(self, message: Message) -> None:
        """Write ``message`` to the session, unless a write of this turn already failed."""
        if self._revision is None:
            return
        try:
            if self._paused is not None:
                # The history moves past the pause: its state no longer matches it.
                self.session.save_paused_turn(None)
                self._paused = None
            self._revision = self.session.append(message)
        except BaseException:
            self._revision = None
            raise

    def record_compaction(self, summary: str, kept: int) -> None:
        """Note that the memory was compacted: the session keeps every message said,
        and this record, from which a later load rebuilds the compacted history."""
        self.record(compaction_record(summary, kept))

    def pause(self, state: PausedTurn) -> None:
        """Store the paused turn with the history, for a resume in any worker."""
        if self._revision is not None:
            self._paused = state.to_json()
            self._revision = self.session.save_paused_turn(self._paused)

    @property
    def session_id(self) -> str:
        """The id of the bound session."""
        return self.session.session_id

    @property
    def revision(self) -> int:
        """The session's revision as last read or written (0 when unknown)."""
        return self._revision or 0

    def paused_turn(self) -> PausedTurn | None:
        """The paused turn stored with the history when it was last read or written."""
        if self._paused is None:
            return None
        from ..base.paused_turn import PausedTurn  # loaded only when a turn paused

        return PausedTurn.from_json(self._paused)

    def end_turn(self) -> None:
        """Release the session's claim."""
        self.session.end_turn()

    def _load(self) -> None:
        state = self.session.load()
        self._memory.clear()
        self._memory.extend(consistent_history(state))
        self._revision = state.revision
        self._paused = state.paused_turn
        log.debug("session %s: loaded %d messages", self.session.session_id, len(state.messages))


def consistent_history(state: SessionState) -> list[Message]:
    """The history an agent loads from ``state``: the stored messages, compacted, without
    orphaned tool calls or results.

    A paused turn (waiting for approvals) legitimately ends the history with
    its tool-call message, whose results the resume will add: that one stays.
    Snapshots strip it before anything is sent, so a plain next turn is safe.
    """
    messages = compacted_view(state.messages)
    last = messages[-1] if messages else None
    if state.paused_turn is not None and isinstance(last, AssistantMessage) and last.tool_calls:
        return [*strip_orphans(messages[:-1]), last]
    return strip_orphans(messages)
