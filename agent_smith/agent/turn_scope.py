"""One turn of an agent from start to end: the part of ``Agent.stream`` that holds it.

A turn takes the agent's busy lock (a second concurrent turn raises
:class:`~agent_smith.errors.AgentBusyError` at once) and its session's turn,
runs the rounds in :class:`~agent_smith.agent.loop.TurnLoop`, and whatever
ends it settles the history, reports the usage and releases both. A pause for
approval is stored in the session and re-raised; a cancelled turn raises the
stop condition that explains it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..errors import AgentBusyError, AgentSmithError, ApprovalRequired, CancelledError
from ..logs import invoke_hook
from .events import AgentEvent
from .lineage import turn_tree
from .loop import TurnLoop
from .turn import Turn

if TYPE_CHECKING:
    from .agent import Agent
    from .paused import Resumption
    from .request import AgentRequest

log = logging.getLogger(__name__)


def run_turn(
    agent: Agent, request: AgentRequest, resume: Resumption | None = None
) -> Iterator[AgentEvent]:
    """Run one turn of ``agent`` (see the module doc); AgentBusyError if one is running."""
    if not agent._busy.acquire(blocking=False):
        raise AgentBusyError(f"agent {agent.name!r} is already running a turn")
    try:
        if agent._session is not None:
            agent._session.begin_turn()  # AgentBusyError while another worker runs a turn on it
        tree, source = turn_tree(agent._config, agent._lineage)
        turn = agent._turn = Turn(agent.name, tree, source, agent._config)
    except BaseException:
        agent._busy.release()
        raise
    loop = TurnLoop(agent, turn)
    try:
        yield from loop.run(request, resume)
    except ApprovalRequired as pause:  # a pause, not an error
        if agent._session is not None:
            agent._session.pause(pause.state)
        raise
    except AgentSmithError as err:
        stopped = turn.explain() if isinstance(err, CancelledError) else None
        log.debug("agent %s: turn ended with %s", agent.name, stopped or err)
        invoke_hook(agent._hooks.on_error, stopped or err, name="on_error")
        if stopped is None:
            raise
        raise stopped from err
    finally:
        try:
            loop.settle()  # stopped mid-round: every recorded call still gets a result
        finally:
            _end(agent, turn)


def _end(agent: Agent, turn: Turn) -> None:
    try:
        turn.finish()
    finally:
        agent._usage = turn.usage
        if agent._lineage is not None:
            agent._lineage.report_usage(turn.usage)  # stopped or not
        agent._turn = None
        if agent._session is not None:
            agent._session.end_turn()
        agent._busy.release()
