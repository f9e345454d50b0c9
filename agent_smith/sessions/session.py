"""The Session protocol: where one conversation lives between turns, workers and restarts.

A session stores what was said in one conversation — every message, in order,
in the JSON form of :func:`~agent_smith.messages_to_json` — plus at
most one paused turn (opaque JSON text), and it arbitrates turns: one turn at
a time per session id, across threads and processes. ``Agent(...,
session=...)`` loads the history when it is built and writes each message as
the turn records it; the agent's memory strategy still decides what is *sent*
to the model, the session keeps what was *said*.

The contract, for anyone implementing another store (Redis, Postgres, ...):

* ``load`` reads everything in one consistent snapshot; ``messages`` is the
  whole conversation, oldest first, exactly as stored (orphaned tool calls
  included: the agent passes what it loads through ``strip_orphans``).
* Every write (``append``, ``replace``, ``clear``, ``save_paused_turn``)
  is atomic and returns the session's new *revision*, an opaque number that
  changes with every write (0: never written). An agent compares it with the
  revision ``begin_turn`` returns to notice writes made elsewhere (another
  worker's agent on the same conversation) and reloads before its turn.
* ``begin_turn`` claims the session for one turn and fails at once with
  :class:`~agent_smith.errors.AgentBusyError` while another turn holds it, in
  this process or any other. A claim whose holder died must expire. While a
  turn holds the session, writes from anyone else fail with AgentBusyError
  too, so two turns never interleave their messages. ``end_turn`` releases
  the claim and never raises.
* Store failures raise :class:`~agent_smith.errors.SessionError` (or
  :class:`~agent_smith.errors.AgentTimeoutError` when the store stayed busy).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from .._internal.closing import Closeable
from ..messages import Message


@dataclass(frozen=True)
class SessionState:
    """One consistent read of a session: its messages, revision and paused turn."""

    messages: tuple[Message, ...] = ()
    revision: int = 0
    paused_turn: str | None = None


class Session(Closeable):
    """Where one conversation is stored and its turns are arbitrated (see the module doc)."""

    __slots__ = ()

    @property
    @abstractmethod
    def session_id(self) -> str:
        """The id of the conversation this object reads and writes."""

    @abstractmethod
    def load(self) -> SessionState:
        """Read the messages, revision and paused turn in one consistent snapshot."""

    def messages(self) -> list[Message]:
        """The whole conversation, oldest first, exactly as stored."""
        return list(self.load().messages)

    @abstractmethod
    def append(self, message: Message) -> int:
        """Add ``message`` at the end in one short transaction; return the new revision."""

    @abstractmethod
    def replace(self, messages: Iterable[Message]) -> int:
        """Make ``messages`` the whole conversation at once; return the new revision."""

    @abstractmethod
    def clear(self) -> int:
        """Forget the messages and the paused turn (the id stays listed); return the revision."""

    @abstractmethod
    def save_paused_turn(self, data: str | None) -> int:
        """Keep ``data`` (a paused turn's JSON) with the session, ``None`` to drop it."""

    @abstractmethod
    def session_ids(self) -> list[str]:
        """Every session id in this store (written to and not deleted), sorted."""

    @abstractmethod
    def delete(self, session_id: str) -> None:
        """Remove the session ``session_id`` of this store: messages, paused turn, claim."""

    @abstractmethod
    def begin_turn(self) -> int:
        """Claim the session for one turn and return its revision; AgentBusyError if taken."""

    @abstractmethod
    def end_turn(self) -> None:
        """Release the claim :meth:`begin_turn` took (if any); never raises."""
