"""Durable approvals over HTTP: the web app decides the durable turns that wait.

With ``WebApp(durable=DurableTurns(database))`` (:mod:`agent_smith.durable`):

* ``GET /api/durable/<name>`` — the user's durable turn ``name``:
  ``{"id", "status", "waiting": [{"call_id", "tool", "arguments"}, ...]}``
  (404 when there is no such turn);
* ``POST /api/durable/<name>/decisions`` with ``{"call_id": "...",
  "approved": true | false, "reason": "..."}`` — decide a call that waits
  (204). The decision is recorded in the turn's database and the turn goes
  on in whichever process runs an engine with its agent; this worker holds
  nothing for it. 409 when that call does not wait, or was decided otherwise.

A durable turn belongs to a user as a conversation does: the app starts a
turn for a user under :func:`~agent_smith.web.app.durable_turn_id` ``(user,
name)``, and each user reaches only the turns named for them.
"""

from __future__ import annotations

from typing import Protocol

from ..base.json_fields import JsonObject
from ..errors import DurableStateError, ParseError
from .http import Response, error_response, json_response


class TurnStatus(Protocol):
    @property
    def status(self) -> str: ...


class TurnDesk(Protocol):
    """What the app needs of :class:`~agent_smith.durable.DurableTurns`."""

    def inspect(self, turn_id: str) -> TurnStatus | None: ...

    def waiting(self, turn_id: str) -> list[JsonObject]: ...

    def decide(self, turn_id: str, call_id: str, decision: bool | str = True) -> None: ...


def show(desk: TurnDesk, turn_id: str, name: str) -> Response:
    """The turn's status and the calls it waits on."""
    info = desk.inspect(turn_id)
    if info is None:
        return error_response(404, f"no durable turn {name!r}")
    return json_response(200, {"id": name, "status": info.status, "waiting": desk.waiting(turn_id)})


def decide(desk: TurnDesk, turn_id: str, body: object) -> Response:
    """Decide about one waiting call of the turn, as ``body`` says."""
    if not isinstance(body, dict):
        raise ParseError("a decision is a JSON object")
    call_id, approved, reason = body.get("call_id"), body.get("approved"), body.get("reason")
    if not isinstance(call_id, str) or not call_id:
        raise ParseError("a decision needs call_id (a string)")
    if not isinstance(approved, bool):
        raise ParseError("a decision needs approved (a boolean)")
    if reason is not None and not isinstance(reason, str):
        raise ParseError("a decision's reason is a string")
    try:
        desk.decide(turn_id, call_id, True if approved else (reason or False))
    except DurableStateError as err:
        return error_response(409, str(err))
    return Response(204)
