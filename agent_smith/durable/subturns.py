"""Sub-agents in durable turns: a sub-agent's turn is a DBOS workflow of its own.

A sub-agent runs its turn inside its tool call (:meth:`TurnSteps.subturn
<agent_smith.steps.TurnSteps.subturn>`). In a durable turn that turn is the
workflow :data:`SUBTURN_WORKFLOW` with the id ``<parent turn id>/<call key>``
(``turn-1/t2``, its own sub-agents ``turn-1/t2/t1``): chosen from the call's
place in the parent turn, never from thread timing, so parallel sub-agents
keep their ids on replay. Its steps are recorded under that id in the
journal; its result is the call's result, recorded by DBOS as the
workflow's output, so a finished sub-agent is never run again.

It starts outside the parent workflow's DBOS context, as a workflow of its
own that the id ties to its parent, not as DBOS's child operation: parallel
calls run in worker threads that share the parent's context, and DBOS
numbers a child operation from a counter on it, in whatever order the
threads reach it; on replay another order would hand one call the recorded
child of another.

The workflow runs the call's own body — the fresh sub-agent the parent's
tool call built — which it finds in this process by its id
(:func:`run_subturn` hands it over, then starts the workflow in the calling
thread). A process that dies during a sub-agent leaves both workflows
pending, and DBOS recovers both on the next launch: the parent's replay
reaches the call again and hands the body over; the recovered child waits
for it (at most :data:`BODY_WAIT` seconds), then runs it, its recorded steps
replaying; the parent's call waits for the child's result.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable

from dbos import DBOS, SetWorkflowID
from dbos._context import _dbos_context_var  # the parent's context, kept out of the child

from ..errors import DurableStateError
from ..tools.base import ToolResult
from .records import decode_record, result_from, result_record

#: The name of the workflow a durable turn's sub-agent runs as.
SUBTURN_WORKFLOW = "agent_smith.durable_subturn"
#: How long a recovered sub-agent's workflow waits for its parent to hand over its body.
BODY_WAIT = 300.0

Body = Callable[[], ToolResult]

_bodies: dict[str, Body] = {}
_handed = threading.Condition()


def run_subturn(child_id: str, body: Body) -> ToolResult:
    """Run ``body`` as the child workflow ``child_id``, or give its recorded result."""
    with _handed:
        _bodies[child_id] = body
        _handed.notify_all()
    try:
        context = contextvars.copy_context()  # this call's context (its steps, its trace) ...
        context.run(_dbos_context_var.set, None)  # ... without the parent workflow's
        text = context.run(_start, child_id)
    finally:
        with _handed:
            _bodies.pop(child_id, None)
    return result_from(decode_record(text, "result", child_id, "result"), child_id, "result")


def _start(child_id: str) -> str:
    with SetWorkflowID(child_id):
        return _subturn_workflow()


@DBOS.workflow(name=SUBTURN_WORKFLOW)
def _subturn_workflow() -> str:
    """A sub-agent's turn: its call's result as a JSON record."""
    child_id = DBOS.workflow_id or ""
    with _handed:
        found = _handed.wait_for(lambda: child_id in _bodies, BODY_WAIT)
        body = _bodies.get(child_id)
    if not found or body is None:
        raise DurableStateError(
            f"durable sub-agent turn {child_id!r}: its parent turn did not reach it again "
            f"within {BODY_WAIT:g} s",
            turn_id=child_id,
        )
    return result_record(body())
