"""Sealing a paused turn with the application's key, and checking the seal on resume.

A :class:`~agent_smith.base.paused_turn.PausedTurn` often travels through a
client (a browser holds it while a person decides). With
``AgentConfig.approval_key`` set, every pause is sealed: an HMAC-SHA256
(stdlib ``hmac``) over the state's canonical JSON, which includes the
session id and the session's revision when the turn paused. A resume then
verifies it in constant time; a state without a seal, with another seal, or
sealed for another session is refused with
:class:`~agent_smith.errors.PausedTurnMismatch`, so a client can neither
forge decisions already given, change a waiting call, nor move a pause to
another conversation. Replaying a pause that was already resumed is refused
by the history and session checks of :func:`~agent_smith.agent.paused.resume_round`.

This module loads only when a turn pauses or resumes with a key.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import PausedTurnMismatch

if TYPE_CHECKING:
    from ..base.paused_turn import PausedTurn


def sealed(state: PausedTurn, key: bytes, *, session: str, revision: int) -> PausedTurn:
    """``state`` bound to ``session`` at ``revision`` and sealed with ``key``."""
    bound = replace(state, session=session, revision=revision, seal="")
    return replace(bound, seal=_mac(bound, key))


def check_seal(state: PausedTurn, key: bytes, *, agent: str, session: str) -> None:
    """Raise PausedTurnMismatch unless ``state`` carries a valid seal for ``session``."""
    if not state.seal:
        raise PausedTurnMismatch(
            f"agent {agent!r}: the paused turn is not sealed (this agent has an approval_key)"
        )
    if not hmac.compare_digest(state.seal, _mac(replace(state, seal=""), key)):
        raise PausedTurnMismatch(
            f"agent {agent!r}: the paused turn's seal does not verify (it was changed, "
            "or sealed with another key)"
        )
    if state.session != session:
        raise PausedTurnMismatch(
            f"agent {agent!r}: the paused turn was sealed for session {state.session!r}, "
            f"not {session!r}"
        )


def _mac(state: PausedTurn, key: bytes) -> str:
    return hmac.new(key, state.canonical(), hashlib.sha256).hexdigest()
