"""A user's conversations in the web app: listed, shown as UI messages, deleted.

Every conversation lives in the session :func:`scoped` names for its user,
so no user can name, read or delete another's. These are the routes
``GET /api/conversations``, ``GET /api/conversations/<id>`` and ``DELETE
/api/conversations/<id>`` of :class:`~agent_smith.web.app.WebApp`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from ..base.paused_turn import PausedTurn
from ..errors import AgentBusyError, ParseError
from ..messages import UserMessage
from ..sessions.session import Session
from . import vercel
from .http import Response, error_response, json_response

#: A function from a session id to its session (``session_opener``'s).
OpenSession = Callable[[str], Session]

_CONVERSATION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_LISTED = 200  # conversations listed at most, newest ids first


def conversation_id(value: str) -> str:
    """``value`` if it is a valid conversation id (else :class:`ParseError`: a 400)."""
    if not _CONVERSATION_ID.fullmatch(value):
        raise ParseError(
            f"conversation id {value[:40]!r} must be 1-128 letters, digits or ._:- characters"
        )
    return value


def scoped(user: str, conversation: str) -> str:
    """The session id of ``user``'s conversation: no user can name another's."""
    return f"{quote(user, safe='')}/{conversation}"


def listing(open_session: OpenSession, user: str) -> list[dict[str, Any]]:
    """``user``'s conversations, newest ids first: id, title, size, and whether one waits."""
    prefix = scoped(user, "")
    with open_session(prefix + "-") as store:
        ids = sorted((i for i in store.session_ids() if i.startswith(prefix)), reverse=True)
    listed = []
    for session_id in ids[:_LISTED]:
        with open_session(session_id) as session:
            state = session.load()
        said = [m.text for m in state.messages if isinstance(m, UserMessage)]
        listed.append(
            {
                "id": session_id[len(prefix) :],
                "title": said[0][:80] if said else "",
                "messages": len(state.messages),
                "paused": state.paused_turn is not None,
            }
        )
    return listed


def show(open_session: OpenSession, user: str, conversation: str) -> Response:
    """``user``'s ``conversation`` as UI messages, with the calls waiting for approval."""
    with open_session(scoped(user, conversation)) as session:
        state = session.load()
    if not state.messages:
        return error_response(404, f"no conversation {conversation!r}")
    paused = PausedTurn.from_json(state.paused_turn) if state.paused_turn else None
    return json_response(
        200,
        {
            "id": conversation,
            "messages": vercel.ui_messages(state.messages, paused),
            "waiting": list(paused.waiting) if paused is not None else [],
        },
    )


def delete(open_session: OpenSession, user: str, conversation: str) -> Response:
    """Delete ``user``'s ``conversation`` (409 while it runs a turn)."""
    session_id = scoped(user, conversation)
    with open_session(session_id) as session:
        try:
            session.delete(session_id)
        except AgentBusyError as err:
            return error_response(409, f"the conversation is running a turn ({err})")
    return Response(204)
